// score(): the log-probability the model assigns to a given continuation of a prompt, without
// sampling. By the chain rule, log p(c_1..c_n | prompt) = sum_i log p(c_i | prompt, c_<i), and all n
// terms come from one forward call over prompt + continuation with logits for every position
// (logits_for::all): the logits at position n_prompt - 1 + i predict c_i. Perplexity is
// exp(-logprob / n). This is what generate() reports token by token in result.logprobs, so the score
// of a generated continuation equals the sum of its logprobs (up to float rounding).
//
// Cost: one prefill of n_prompt + n tokens; the logits buffer holds (n_prompt + n) x vocab_size floats
// (for a 32k vocabulary and 2k tokens: 256 MiB). The cache is cleared and holds the whole sequence
// afterwards; no_cache works too (one pass is all it needs).
#pragma once

#include <nexttok/decoder/decoder.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/detail/logprobs.hpp>
#include <nexttok/generation/token_decoder.hpp>
#include <nexttok/types.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nexttok {

struct score_result {
    // token_logprobs[i] = log p(continuation[i] | prompt, continuation[0..i)), natural log, raw logits.
    std::vector<float> token_logprobs;
    // Their sum (accumulated in double): the log-probability of the whole continuation.
    double logprob = 0.0;

    std::int64_t n_tokens() const noexcept { return static_cast<std::int64_t>(token_logprobs.size()); }
    // exp(-logprob / n_tokens): the model's perplexity on the continuation (0 tokens: 1).
    double perplexity() const noexcept {
        return token_logprobs.empty() ? 1.0 : std::exp(-logprob / static_cast<double>(token_logprobs.size()));
    }
};

// Throws invalid_argument_error for an empty prompt (the first continuation token needs a context:
// pass BOS), an empty continuation, ids outside the vocabulary, or more tokens than the cache holds.
template <class Decoder, class Cache>
    requires token_decoder<Decoder, Cache>
score_result score(Decoder& dec, Cache& cache, std::span<const token_id> prompt, std::span<const token_id> continuation) {
    if (prompt.empty()) throw invalid_argument_error("score: the prompt is empty (expected at least one token, e.g. BOS)");
    if (continuation.empty()) throw invalid_argument_error("score: the continuation is empty");
    const std::size_t n_total = prompt.size() + continuation.size();
    if (static_cast<std::int64_t>(n_total) > cache.capacity())
        throw invalid_argument_error("score: prompt + continuation = " + std::to_string(n_total) +
                                     " tokens, more than the context of " + std::to_string(cache.capacity()) + " positions");
    const auto vocab = static_cast<std::size_t>(dec.config().vocab_size);
    std::vector<token_id> tokens(prompt.begin(), prompt.end());
    tokens.insert(tokens.end(), continuation.begin(), continuation.end());
    std::vector<float> logits(n_total * vocab);  // (n_total, vocab_size)
    cache.clear();
    dec.reserve(static_cast<std::int64_t>(n_total), static_cast<std::int64_t>(n_total));
    dec.forward(tokens, 0, cache, logits, logits_for::all);

    score_result r;
    r.token_logprobs.reserve(continuation.size());
    for (std::size_t i = 0; i < continuation.size(); ++i) {
        const std::span<const float> row(logits.data() + (prompt.size() - 1 + i) * vocab, vocab);
        const double lp = static_cast<double>(row[static_cast<std::size_t>(continuation[i])]) - detail::log_sum_exp(row);
        r.token_logprobs.push_back(static_cast<float>(lp));
        r.logprob += lp;
    }
    return r;
}

}  // namespace nexttok

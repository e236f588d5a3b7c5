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
//
// A text longer than the cache: score_windows() scores it in windows of at most the cache's size, as
// llama.cpp's perplexity tool does (below).
#pragma once

#include <nexttok/detail/check_logits.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/detail/logprobs.hpp>
#include <nexttok/generation/token_decoder.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
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
    // Forward passes it took: 1 for score(); score_windows(): the windows that scored something.
    std::int64_t n_windows = 1;

    std::int64_t n_tokens() const noexcept { return static_cast<std::int64_t>(token_logprobs.size()); }
    // exp(-logprob / n_tokens): the model's perplexity on the continuation (0 tokens: 1).
    double perplexity() const noexcept {
        return token_logprobs.empty() ? 1.0 : std::exp(-logprob / static_cast<double>(token_logprobs.size()));
    }
};

// Throws invalid_argument_error for an empty prompt (the first continuation token needs a context:
// pass BOS), an empty continuation, ids outside the vocabulary, or more tokens than the cache holds.
template <class Decoder, class Cache>
requires token_decoder<Decoder, Cache> score_result score(Decoder& dec, Cache& cache, std::span<const token_id> prompt,
                                                          std::span<const token_id> continuation) {
    if (prompt.empty())
        throw invalid_argument_error("score: the prompt is empty (expected at least one token, e.g. BOS)");
    if (continuation.empty()) throw invalid_argument_error("score: the continuation is empty");
    const std::size_t n_total = prompt.size() + continuation.size();
    if (static_cast<std::int64_t>(n_total) > cache.capacity())
        throw invalid_argument_error("score: prompt + continuation = " + std::to_string(n_total) +
                                     " tokens, more than the context of " + std::to_string(cache.capacity()) +
                                     " positions");
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
        detail::check_logits(row, static_cast<std::int64_t>(prompt.size() - 1 + i), "score");
        const double lp =
            static_cast<double>(row[static_cast<std::size_t>(continuation[i])]) - detail::log_sum_exp(row);
        r.token_logprobs.push_back(static_cast<float>(lp));
        r.logprob += lp;
    }
    return r;
}

// The windows of score_windows().
struct score_window_options {
    // 0: tokens per window; 0: the cache's capacity. Must be in [2, cache.capacity()].
    std::int64_t window = 0;
    // 0: tokens a window moves on from the previous one, which are the ones it scores (llama.cpp's
    // --ppl-stride); 0: window / 2, so that each window after the first scores its second half with
    // the first half as context, as llama.cpp's perplexity tool does. Must be in [1, window - 1].
    std::int64_t stride = 0;
    // no_token: the id that replaces the first token of every window but the first (llama.cpp's
    // perplexity tool puts BOS there when the vocabulary adds BOS, so that each window starts as a
    // text does); no_token: a window starts with the text's own token.
    token_id bos = no_token;
};

// score() of a continuation that may be longer than the cache. prompt + continuation (N tokens) is
// cut into windows of W = options.window tokens: the first is [0, W); each next one ends S =
// options.stride tokens after the previous one (the last one at N) and starts W tokens before its
// end. A window scores the continuation tokens that no earlier window scored, with everything before
// them in the window as context (at least W - S tokens), so every continuation token is scored once;
// the first window scores its tokens after the prompt, as score() does. When N <= W this is exactly
// score(). token_logprobs are in the continuation's order; logprob is the sum of the windows'
// score().logprob, in window order; n_windows counts them.
//
// llama.cpp's perplexity tool (tools/perplexity) with its default cuts the text into windows of n_ctx
// that do not overlap, and scores the second half of each (so only half of the text is scored); with
// --ppl-stride S, windows of n_ctx every S tokens, each scoring its last S, the first window's first
// n_ctx - S tokens never scored, the tail that does not fill a window dropped. Here the stride is
// window / 2 by default, so each scored token has between W/2 and W - 1 tokens of context, as there,
// and no token of the continuation is left out.
//
// Cost: one score() per window (its buffers are allocated per window: W x vocab_size logits).
// Throws invalid_argument_error as score() does (but not for a long text), and for a window or stride
// outside its range.
template <class Decoder, class Cache>
requires token_decoder<Decoder, Cache> score_result score_windows(Decoder& dec, Cache& cache,
                                                                  std::span<const token_id> prompt,
                                                                  std::span<const token_id> continuation,
                                                                  const score_window_options& options = {}) {
    const std::int64_t w = options.window == 0 ? cache.capacity() : options.window;
    if (w < 2 || w > cache.capacity())
        throw invalid_argument_error("score_windows: window = " + std::to_string(options.window) +
                                     ": expected 2 to the cache's " + std::to_string(cache.capacity()) +
                                     " positions (0: the cache's)");
    const std::int64_t stride = options.stride == 0 ? w / 2 : options.stride;
    if (stride < 1 || stride >= w)
        throw invalid_argument_error("score_windows: stride = " + std::to_string(options.stride) +
                                     ": expected 1 to window - 1 = " + std::to_string(w - 1) + " (0: window / 2)");
    const auto n_prompt = static_cast<std::int64_t>(prompt.size());
    const std::int64_t n_total = n_prompt + static_cast<std::int64_t>(continuation.size());
    if (n_total <= w || prompt.empty() || continuation.empty()) return score(dec, cache, prompt, continuation);

    std::vector<token_id> all(prompt.begin(), prompt.end());  // (n_total)
    all.insert(all.end(), continuation.begin(), continuation.end());
    std::vector<token_id> window;  // (w): this window's tokens
    window.reserve(static_cast<std::size_t>(w));
    score_result r;
    r.n_windows = 0;
    r.token_logprobs.reserve(continuation.size());
    for (std::int64_t end = w, scored = n_prompt;; end = std::min(end + stride, n_total)) {
        const std::int64_t begin = end - w;
        if (scored < end) {  // [scored, end) is new; [begin, scored) its context
            window.assign(all.begin() + begin, all.begin() + end);
            if (begin > 0 && options.bos != no_token) window.front() = options.bos;
            const std::span<const token_id> v(window);
            const score_result part = score(dec, cache, v.first(static_cast<std::size_t>(scored - begin)),
                                            v.subspan(static_cast<std::size_t>(scored - begin)));
            r.token_logprobs.insert(r.token_logprobs.end(), part.token_logprobs.begin(), part.token_logprobs.end());
            r.logprob += part.logprob;
            ++r.n_windows;
            scored = end;
        }
        if (end == n_total) break;
    }
    return r;
}

}  // namespace nexttok

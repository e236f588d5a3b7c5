// The generation loop: prefill the prompt in one forward call, then sample a token, stream its
// text, check the stopping criteria, and run the decoder on that one token (with a cache that
// retains history) or on the whole sequence again (no_cache, the uncached baseline), until a
// criterion, the callback or the cache's capacity ends it.
//
// Everything is a template parameter checked by a concept, so a static composition costs no
// virtual call; type-erased samplers and criteria (any_sampler, any_of_criteria) plug in the same
// way. Buffers are sized before the loop; the loop itself does not allocate beyond the growth of
// the result (reserved up front) and short strings.
#pragma once

#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/generation_result.hpp>
#include <nexttok/model/decoder.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/stopping/concepts.hpp>
#include <nexttok/stopping/generation_state.hpp>
#include <nexttok/tokenizer/detokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

// What the streaming callback sees for each generated token.
struct token_event {
    token_id id = no_token;
    std::string_view text;  // newly complete text (may be empty: a held-back partial character, EOS)
    float logprob = 0.0f;   // log-probability of `id` under the model
    std::int64_t index = 0; // 0 for the first generated token
};

// Called once per generated token; returning false stops generation (finish_reason::callback).
using token_callback = std::function<bool(const token_event&)>;

namespace detail {

// log softmax(logits)[id], computed in double over the whole vocabulary.
inline float log_probability(std::span<const float> logits, token_id id) noexcept {
    const float max = *std::max_element(logits.begin(), logits.end());
    double sum = 0.0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - max);
    return static_cast<float>(static_cast<double>(logits[static_cast<std::size_t>(id)]) - max - std::log(sum));
}

// The loop behind both overloads of generate(); `tok` may be null (then no text is produced).
template <class Scalar, class Cache, class Sampler, class Stop>
generation_result generate_impl(decoder<Scalar>& dec, Cache& cache, const tokenizer* tok,
                                std::span<const token_id> prompt, Sampler& sample, Stop& stop,
                                const token_callback& on_token);

}  // namespace detail

// Generates a continuation of `prompt` (token ids, BOS included if the model wants one), streaming
// its text through `on_token`. The cache is cleared first and holds the sequence afterwards. The
// sampler is used as it is (reset() it to replay its seed). Throws invalid_argument_error for an
// empty prompt or one longer than the cache's capacity.
template <class Scalar, kv_storage<Scalar> Cache, sampler Sampler, stopping_criterion Stop>
generation_result generate(decoder<Scalar>& dec, Cache& cache, const tokenizer& tok, std::span<const token_id> prompt,
                           Sampler& sample, Stop& stop, const token_callback& on_token = {}) {
    return detail::generate_impl(dec, cache, &tok, prompt, sample, stop, on_token);
}

// The same without a tokenizer: tokens and log-probabilities only, `text` stays empty (for
// benchmarks, and models whose vocabulary is not at hand).
template <class Scalar, kv_storage<Scalar> Cache, sampler Sampler, stopping_criterion Stop>
generation_result generate(decoder<Scalar>& dec, Cache& cache, std::span<const token_id> prompt, Sampler& sample,
                           Stop& stop, const token_callback& on_token = {}) {
    return detail::generate_impl(dec, cache, nullptr, prompt, sample, stop, on_token);
}

namespace detail {

template <class Scalar, class Cache, class Sampler, class Stop>
generation_result generate_impl(decoder<Scalar>& dec, Cache& cache, const tokenizer* tok,
                                std::span<const token_id> prompt, Sampler& sample, Stop& stop,
                                const token_callback& on_token) {
    using clock = std::chrono::steady_clock;
    const std::int64_t capacity = cache.capacity();
    const auto n_prompt = static_cast<std::int64_t>(prompt.size());
    if (n_prompt == 0) throw invalid_argument_error("generate: the prompt is empty (expected at least one token, e.g. BOS)");
    if (n_prompt > capacity)
        throw invalid_argument_error("generate: the prompt has " + std::to_string(n_prompt) + " tokens, more than the context of " + std::to_string(capacity) + " positions");
    const std::int64_t vocab = dec.config().vocab_size;

    generation_result result;
    result.tokens.reserve(static_cast<std::size_t>(capacity - n_prompt + 1));
    result.logprobs.reserve(result.tokens.capacity());
    result.processed_logprobs.reserve(result.tokens.capacity());
    std::vector<token_id> sequence(prompt.begin(), prompt.end());  // prompt + generated
    sequence.reserve(static_cast<std::size_t>(capacity + 1));
    std::vector<float> logits(static_cast<std::size_t>(vocab));
    dec.reserve(Cache::retains_history ? n_prompt : capacity, capacity);
    std::optional<detokenizer> detok;
    if (tok != nullptr) {
        detok.emplace(*tok);
        detok->prime(prompt);
    }
    cache.clear();
    detail::reset_criterion_if_supported(stop);

    auto state = [&] { return generation_state{sequence, static_cast<std::size_t>(n_prompt), result.text}; };
    result.reason = stop.check(state());

    auto t0 = clock::now();
    if (result.reason == finish_reason::none) dec.forward(prompt, 0, cache, logits);
    result.timings.n_prompt_tokens = n_prompt;
    bool prefill_timed = false;
    while (result.reason == finish_reason::none) {
        const token_id next = sample.sample(logits);
        sequence.push_back(next);
        result.tokens.push_back(next);
        result.logprobs.push_back(detail::log_probability(logits, next));
        result.processed_logprobs.push_back(static_cast<float>(sample.last_logprob()));
        const std::string piece = detok ? detok->push(next) : std::string();
        result.text += piece;
        if (!prefill_timed) {
            result.timings.prefill_seconds = std::chrono::duration<double>(clock::now() - t0).count();
            prefill_timed = true;
            t0 = clock::now();
        }
        if (on_token && !on_token(token_event{next, piece, result.logprobs.back(),
                                              static_cast<std::int64_t>(result.tokens.size()) - 1})) {
            result.reason = finish_reason::callback;
            break;
        }
        if ((result.reason = stop.check(state())) != finish_reason::none) break;
        const auto n_seq = static_cast<std::int64_t>(sequence.size());
        if (n_seq >= capacity) {
            result.reason = finish_reason::cache_full;
            break;
        }
        if constexpr (Cache::retains_history) {
            dec.forward(std::span<const token_id>(&sequence.back(), 1), n_seq - 1, cache, logits);
        } else {
            cache.clear();
            dec.forward(sequence, 0, cache, logits);
        }
        ++result.timings.n_decode_steps;
    }
    if (prefill_timed) result.timings.decode_seconds = std::chrono::duration<double>(clock::now() - t0).count();
    const std::string rest = detok ? detok->flush() : std::string();
    result.text += rest;
    if (!rest.empty() && on_token) on_token(token_event{no_token, rest, 0.0f, static_cast<std::int64_t>(result.tokens.size())});
    return result;
}

}  // namespace detail
}  // namespace nexttok

// The generation loop: feed the prompt to the sampler's history (accept()), prefill the prompt in
// one forward call, then sample a token, check the stopping criteria, stream the text that is safe to
// show, and run the decoder on that one token (with a cache that retains history) or on the whole
// sequence again (no_cache, the uncached baseline), until a criterion, the callback or the cache's
// capacity ends it.
//
// Everything is a template parameter checked by a concept, so a static composition costs no
// virtual call; type-erased samplers and criteria (any_sampler, any_of_criteria) plug in the same
// way, and so does a decoder wrapper (token_decoder.hpp). Buffers are sized before the loop; the loop
// itself does not allocate beyond the growth of the result (reserved up front) and short strings.
//
// Streaming: the callback sees, per generated token, the text that became safe to show: whole UTF-8
// characters only (the detokenizer holds back an incomplete one), minus any suffix that could still
// turn into a stop string (the criteria's hold_back(), concepts.hpp). When a stop string completes, the
// text is cut before it and the held-back bytes that were its beginning are never shown. The
// concatenation of every event's text equals result.text.
#pragma once

#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/detail/logprobs.hpp>
#include <nexttok/generation/detail/text_release.hpp>
#include <nexttok/generation/generation_options.hpp>
#include <nexttok/generation/generation_result.hpp>
#include <nexttok/generation/make_generation.hpp>
#include <nexttok/generation/token_decoder.hpp>
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

// What the streaming callback sees for each generated token (and once more at the end, with id ==
// no_token, if text was still held back).
struct token_event {
    token_id id = no_token;
    std::string_view text;   // newly released text (may be empty: a held-back partial character or
                             // possible stop-string prefix, EOS); valid during the call only
    float logprob = 0.0f;    // log-probability of `id` under the model
    std::int64_t index = 0;  // 0 for the first generated token
    std::span<const token_logprob> top_logprobs;  // the n_logprobs most likely tokens, when asked
    std::int64_t sample = 0; // which sample (generate_n), 0 for generate()
};

// Called once per generated token, after the stopping criteria have seen it; returning false stops
// generation (finish_reason::callback) unless a criterion already ended it (its reason is kept).
using token_callback = std::function<bool(const token_event&)>;

namespace detail {

// What the loop is asked for beyond the policies.
struct loop_settings {
    std::int64_t n_logprobs = 0;    // top alternatives per token (0: none)
    std::int64_t sample_index = 0;  // reported in token_event::sample
    // Logits of the prompt's last position when the prompt is already in the cache (generate_n): the
    // prefill is skipped and the cache is not cleared. Null: the loop clears the cache and prefills.
    const std::vector<float>* prefilled_logits = nullptr;
    double prefill_seconds = 0.0;   // with prefilled_logits: the time of that shared prefill
};

template <class Decoder, class Cache, class Sampler, class Stop>
generation_result generate_impl(Decoder& dec, Cache& cache, const tokenizer* tok, std::span<const token_id> prompt,
                                Sampler& sample, Stop& stop, const token_callback& on_token, const loop_settings& settings);

// Throws invalid_argument_error for an empty prompt or one that does not fit the cache.
inline void check_prompt(std::size_t n_prompt, std::int64_t capacity, const char* who) {
    if (n_prompt == 0) throw invalid_argument_error(std::string(who) + ": the prompt is empty (expected at least one token, e.g. BOS)");
    if (static_cast<std::int64_t>(n_prompt) > capacity)
        throw invalid_argument_error(std::string(who) + ": the prompt has " + std::to_string(n_prompt) +
                                     " tokens, more than the context of " + std::to_string(capacity) + " positions");
}

}  // namespace detail

// Generates a continuation of `prompt` (token ids, BOS included if the model wants one), streaming
// its text through `on_token`. The cache is cleared first and holds the sequence afterwards. The
// prompt's tokens are fed to sample.accept() before the first draw, so that history-based processors
// (penalties, DRY, no-repeat-n-gram) see them; the sampler is otherwise used as it is (reset() it to
// replay its seed or clear its history). stop.reset() is called first. Throws invalid_argument_error
// for an empty prompt or one longer than the cache's capacity.
template <class Decoder, class Cache, sampler Sampler, stopping_criterion Stop>
    requires token_decoder<Decoder, Cache>
generation_result generate(Decoder& dec, Cache& cache, const tokenizer& tok, std::span<const token_id> prompt,
                           Sampler& sample, Stop& stop, const token_callback& on_token = {}) {
    return detail::generate_impl(dec, cache, &tok, prompt, sample, stop, on_token, {});
}

// The same without a tokenizer: tokens and log-probabilities only, `text` stays empty (for
// benchmarks, and models whose vocabulary is not at hand).
template <class Decoder, class Cache, sampler Sampler, stopping_criterion Stop>
    requires token_decoder<Decoder, Cache>
generation_result generate(Decoder& dec, Cache& cache, std::span<const token_id> prompt, Sampler& sample, Stop& stop,
                           const token_callback& on_token = {}) {
    return detail::generate_impl(dec, cache, nullptr, prompt, sample, stop, on_token, {});
}

// The policies built from `options` (make_sampler, make_stopping), with its n_logprobs. One sample:
// throws invalid_argument_error when options.n_samples != 1 (use generate_n), or for bad options.
template <class Decoder, class Cache>
    requires token_decoder<Decoder, Cache>
generation_result generate(Decoder& dec, Cache& cache, const tokenizer& tok, std::span<const token_id> prompt,
                           const generation_options& options, const token_callback& on_token = {}) {
    if (options.n_samples != 1)
        throw invalid_argument_error("generate: n_samples = " + std::to_string(options.n_samples) + ": use generate_n");
    auto sample = make_sampler(options, tok);
    auto stop = make_stopping(options, tok);
    detail::loop_settings settings;
    settings.n_logprobs = options.n_logprobs;
    return detail::generate_impl(dec, cache, &tok, prompt, sample, stop, on_token, settings);
}

namespace detail {

template <class Decoder, class Cache, class Sampler, class Stop>
generation_result generate_impl(Decoder& dec, Cache& cache, const tokenizer* tok, std::span<const token_id> prompt,
                                Sampler& sample, Stop& stop, const token_callback& on_token, const loop_settings& settings) {
    using clock = std::chrono::steady_clock;
    const std::int64_t capacity = cache.capacity();
    check_prompt(prompt.size(), capacity, "generate");
    const auto n_prompt = static_cast<std::int64_t>(prompt.size());
    const std::int64_t vocab = dec.config().vocab_size;

    generation_result result;
    const auto max_steps = static_cast<std::size_t>(capacity - n_prompt + 1);
    result.tokens.reserve(max_steps);
    result.logprobs.reserve(max_steps);
    result.processed_logprobs.reserve(max_steps);
    if (settings.n_logprobs > 0) result.top_logprobs.reserve(max_steps);
    std::vector<token_id> sequence(prompt.begin(), prompt.end());  // prompt + generated
    sequence.reserve(static_cast<std::size_t>(capacity + 1));
    std::vector<float> logits(static_cast<std::size_t>(vocab));
    std::vector<std::uint32_t> order;  // scratch of the top-n search
    if (settings.n_logprobs > 0) order.reserve(static_cast<std::size_t>(vocab));
    dec.reserve(Cache::retains_history ? n_prompt : capacity, capacity);
    std::optional<detokenizer> detok;
    if (tok != nullptr) {
        detok.emplace(*tok);
        detok->prime(prompt);
    }
    if (settings.prefilled_logits == nullptr) cache.clear();
    reset_criterion_if_supported(stop);
    for (const token_id t : prompt) sample.accept(t);
    text_release shown;

    auto state = [&] { return generation_state{sequence, static_cast<std::size_t>(n_prompt), result.text}; };
    result.reason = stop.check(state());
    result.timings.n_prompt_tokens = n_prompt;

    auto t0 = clock::now();
    if (result.reason == finish_reason::none) {
        if (settings.prefilled_logits != nullptr) std::copy(settings.prefilled_logits->begin(), settings.prefilled_logits->end(), logits.begin());
        else dec.forward(prompt, 0, cache, logits);
    }
    bool prefill_timed = false;
    bool cut = false;
    while (result.reason == finish_reason::none) {
        const token_id next = sample.sample(logits);
        const double lse = log_sum_exp(logits);
        sequence.push_back(next);
        result.tokens.push_back(next);
        result.logprobs.push_back(static_cast<float>(static_cast<double>(logits[static_cast<std::size_t>(next)]) - lse));
        result.processed_logprobs.push_back(static_cast<float>(sample.last_logprob()));
        if (settings.n_logprobs > 0) {
            result.top_logprobs.emplace_back();
            top_logprobs(logits, lse, static_cast<std::size_t>(settings.n_logprobs), order, result.top_logprobs.back());
        }
        if (detok) result.text += detok->push(next);
        if (!prefill_timed) {
            result.timings.prefill_seconds = settings.prefilled_logits != nullptr
                                                 ? settings.prefill_seconds
                                                 : std::chrono::duration<double>(clock::now() - t0).count();
            prefill_timed = true;
            t0 = clock::now();
        }

        result.reason = stop.check(state());
        if (result.reason != finish_reason::none) {
            if (const auto at = text_cut_if_supported(stop); at && *at <= result.text.size()) {
                result.text.resize(*at);
                cut = true;
            }
        }
        const std::string_view released = result.reason != finish_reason::none
                                              ? shown.release_all(result.text)
                                              : shown.release(result.text, hold_back_if_supported(stop, std::string_view(result.text)));
        if (on_token) {
            const std::span<const token_logprob> top = settings.n_logprobs > 0 ? std::span<const token_logprob>(result.top_logprobs.back())
                                                                               : std::span<const token_logprob>();
            const bool go_on = on_token(token_event{next, released, result.logprobs.back(),
                                                    static_cast<std::int64_t>(result.tokens.size()) - 1, top, settings.sample_index});
            if (!go_on && result.reason == finish_reason::none) result.reason = finish_reason::callback;
        }
        if (result.reason != finish_reason::none) break;

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
    // The bytes the detokenizer still holds (an incomplete character) follow the text; after a stop
    // string cut they lie beyond it and are dropped.
    if (detok) {
        const std::string rest = detok->flush();
        if (!cut) result.text += rest;
    }
    const std::string_view released = shown.release_all(result.text);
    if (!released.empty() && on_token)
        on_token(token_event{no_token, released, 0.0f, static_cast<std::int64_t>(result.tokens.size()), {}, settings.sample_index});
    return result;
}

}  // namespace detail
}  // namespace nexttok

// Generation on a cache that already holds a prefix of the prompt: a conversation renders the whole
// dialogue again at every turn, and everything up to the previous answer is already in the cache, so
// only the new tokens need a prefill (llama.cpp's -cnv and its server's prompt cache do the same).
//
//   nexttok::kv_cache<float> cache(model->config(), 0);
//   nexttok::cached_tokens held;                      // what the cache holds: nothing yet
//   for (each turn) {
//       prompt = encode_chat(tok, tmpl, messages, true);
//       auto r = nexttok::generate_reusing(dec, cache, held, tok, prompt, options, on_token);
//       // r.timings.n_reused_prompt_tokens were kept, r.timings.n_prompt_tokens were prefilled
//   }
//
// What it does: keeps the longest common prefix of `held` and the prompt (at most prompt.size() - 1
// tokens, so that the prompt's last token runs and gives the logits of the first new token), drops
// the cache's positions past it (truncate: the cache must be rewindable), prefills the rest of the
// prompt at its positions in one forward call, then runs generate()'s own per-token loop
// (detail::generate_impl, handed the prefill's logits as generate_n hands a shared prefill's).
// Afterwards `held` records the prompt and the generated tokens that were run (all but the last: the
// last token drawn is never run, see generate.hpp).
//
// Exactness: the decoder gives a token bitwise the same keys, values and logits however the sequence
// is chunked into forward calls (decoder.hpp), so the result is bitwise what generate() gives for the
// same prompt on a cleared cache: tokens, log-probabilities and text, greedy or sampled. Only the
// timings differ: n_prompt_tokens counts the tokens actually prefilled and prefill_seconds that
// forward call; n_reused_prompt_tokens the prompt tokens kept from the cache.
//
// Not supported: no_cache (it retains nothing: refused at compile time by the constraint), and
// context shift (generation_options::context_shift: a shift re-rotates cached keys, after which the
// cache no longer holds what a prefill of the same tokens would write, so reuse would stop being
// exact; refused with invalid_argument_error). When the cache fills, generation ends with cache_full
// as in generate(); the caller decides what to drop from the conversation.
//
// Exceptions: `held` is cleared before the cache is touched and set only when generation completed,
// so after any exception the next call prefills its whole prompt. Not thread-safe (one cache, one
// record, one caller).
#pragma once

#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/detail/loop_settings.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/cached_tokens.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/generation/generation_options.hpp>
#include <nexttok/generation/generation_result.hpp>
#include <nexttok/generation/make_generation.hpp>
#include <nexttok/generation/token_decoder.hpp>
#include <nexttok/generation/token_event.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/stopping/concepts.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/types.hpp>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nexttok {

// A decoder and a cache that generate_reusing can work on: the cache keeps history and can drop its
// last positions (kv_cache, q8_0_kv_cache, a paged sequence; not no_cache).
template <class Decoder, class Cache>
concept prefix_reusing_decoder =
    token_decoder<Decoder, Cache> && rewindable_kv_storage<Cache, typename Decoder::scalar_type>;

namespace detail {

// The reusing driver: keep, truncate, prefill the rest, generate_impl, record.
template <class Decoder, class Cache, class Sampler, class Stop>
generation_result generate_reusing_impl(Decoder& dec, Cache& cache, cached_tokens& held, const tokenizer* tok,
                                        std::span<const token_id> prompt, Sampler& sample, Stop& stop,
                                        const token_callback& on_token, loop_settings settings) {
    check_prompt(prompt.size(), cache.capacity(), "generate_reusing");
    if (settings.context_shift)
        throw invalid_argument_error(
            "generate_reusing: context_shift is not supported: a shift re-rotates the cached keys, so the "
            "cache would no longer hold what a prefill of its tokens writes (use generate())");
    // A record longer than what the cache holds is stale (the cache was cleared behind its back).
    const std::int64_t n_reused = held.size() <= cache.size() ? held.reusable_prefix(prompt) : 0;
    held.clear();  // says nothing until this generation completes

    const auto t0 = std::chrono::steady_clock::now();
    std::vector<float> logits(
        static_cast<std::size_t>(dec.config().vocab_size));  // (vocab_size), the prompt's last position's
    if (n_reused > 0)
        cache.truncate(n_reused);
    else
        cache.clear();
    const std::span<const token_id> rest = prompt.subspan(static_cast<std::size_t>(n_reused));
    dec.reserve(static_cast<std::int64_t>(rest.size()), cache.capacity());
    dec.forward(rest, n_reused, cache, logits);
    settings.prefilled_logits = &logits;
    settings.prefill_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    generation_result r = generate_impl(dec, cache, tok, prompt, sample, stop, on_token, settings);
    r.timings.n_prompt_tokens = static_cast<std::int64_t>(rest.size());
    r.timings.n_reused_prompt_tokens = n_reused;

    // The cache now holds the prompt and every generated token but the last (never run).
    held.tokens.reserve(prompt.size() + r.tokens.size());
    held.tokens.assign(prompt.begin(), prompt.end());
    if (!r.tokens.empty()) held.tokens.insert(held.tokens.end(), r.tokens.begin(), r.tokens.end() - 1);
    return r;
}

}  // namespace detail

// Generates a continuation of `prompt` as generate(dec, cache, tok, prompt, sample, stop, on_token)
// does, keeping the prefix of the prompt that `held` says the cache already holds. `held` must
// describe `cache` (see cached_tokens.hpp); it is updated. Throws invalid_argument_error for an empty
// prompt or one longer than the cache's capacity.
template <class Decoder, class Cache, sampler Sampler, stopping_criterion Stop>
requires prefix_reusing_decoder<Decoder, Cache> generation_result
generate_reusing(Decoder& dec, Cache& cache, cached_tokens& held, const tokenizer& tok,
                 std::span<const token_id> prompt, Sampler& sample, Stop& stop, const token_callback& on_token = {}) {
    return detail::generate_reusing_impl(dec, cache, held, &tok, prompt, sample, stop, on_token, {});
}

// The policies built from `options` (make_sampler, make_stopping) and its n_logprobs, as
// generate(dec, cache, tok, prompt, options). Throws invalid_argument_error when options.n_samples
// != 1, when options.context_shift is set (see above), or for bad options.
template <class Decoder, class Cache>
requires prefix_reusing_decoder<Decoder, Cache> generation_result generate_reusing(
    Decoder& dec, Cache& cache, cached_tokens& held, const tokenizer& tok, std::span<const token_id> prompt,
    const generation_options& options, const token_callback& on_token = {}) {
    auto p = make_single_sample(options, tok, "generate_reusing", "one sample per call");
    p.settings.context_shift = options.context_shift;
    return detail::generate_reusing_impl(dec, cache, held, &tok, prompt, p.sample, p.stop, on_token, p.settings);
}

}  // namespace nexttok

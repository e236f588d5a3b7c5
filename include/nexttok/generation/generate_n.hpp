// n independent samples of one prompt that share the prompt's prefill: the prompt runs through the
// decoder once into `cache`; each sample then starts from a copy of that cache (kv_cache is a value:
// copying it copies the keys and values) and of the prompt's logits, and decodes on its own. The
// prompt is never run again, so the prefill cost is paid once instead of n times (the copy costs one
// pass over the cache's memory per sample, no arithmetic).
//
// Sample i uses the sampler make_sampler(options, tok, i) (seed + i) and fresh stopping criteria, so
// sample 0 is exactly what generate(dec, cache, tok, prompt, options) returns. Samples run one after
// the other on the calling thread; `cache` holds the prompt afterwards (its positions only). Each
// result reports the shared prefill's time. Needs a cache that retains history (kv_cache; with
// no_cache there is nothing to share).
#pragma once

#include <nexttok/cache/paged_kv_cache.hpp>
#include <nexttok/detail/loop_settings.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/generation/generation_options.hpp>
#include <nexttok/generation/generation_result.hpp>
#include <nexttok/generation/make_generation.hpp>
#include <nexttok/generation/token_decoder.hpp>
#include <nexttok/generation/token_event.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/types.hpp>

#include <chrono>
#include <concepts>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace nexttok {
namespace detail {

// The shared prefill: runs the prompt into `cache` (empty) and returns the loop settings that hand
// its last logits (in `logits`, resized) and its time to each sample.
template <class Decoder, class Cache>
loop_settings prefill_once(Decoder& dec, Cache& cache, const tokenizer& tok, std::span<const token_id> prompt,
                           const generation_options& options, std::vector<float>& logits) {
    const auto t0 = std::chrono::steady_clock::now();
    logits.resize(static_cast<std::size_t>(dec.config().vocab_size));
    dec.reserve(static_cast<std::int64_t>(prompt.size()), cache.capacity());
    dec.forward(prompt, 0, cache, logits);
    loop_settings settings;
    settings.n_logprobs = options.n_logprobs;
    set_context_shift(settings, options, prompt, tok.bos());
    settings.prefilled_logits = &logits;
    settings.prefill_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return settings;
}

}  // namespace detail

// Throws invalid_argument_error for bad options, an empty prompt or one that does not fit the cache.
template <class Decoder, class Cache>
requires token_decoder<Decoder, Cache> &&
    (Cache::retains_history)std::vector<generation_result> generate_n(Decoder& dec, Cache& cache, const tokenizer& tok,
                                                                      std::span<const token_id> prompt,
                                                                      const generation_options& options,
                                                                      const token_callback& on_token = {}) {
    const sampling_options resolved = resolve_sampling(options, tok);  // validates
    detail::check_prompt(prompt.size(), cache.capacity(), "generate_n");

    // The one prefill.
    std::vector<float> prompt_logits;
    cache.clear();
    detail::loop_settings settings = detail::prefill_once(dec, cache, tok, prompt, options, prompt_logits);

    std::vector<generation_result> results;
    results.reserve(static_cast<std::size_t>(options.n_samples));
    Cache work(cache);  // one allocation; later samples copy into it in place
    for (std::int64_t i = 0; i < options.n_samples; ++i) {
        if (i > 0) work = cache;
        auto sample = make_sampler(options, tok, resolved, i);
        auto stop = make_stopping(options, tok);
        settings.sample_index = i;
        results.push_back(detail::generate_impl(dec, work, &tok, prompt, sample, stop, on_token, settings));
    }
    return results;
}

// The same on a paged pool (paged_kv_cache, q8_0_paged_kv_cache): the prompt is prefilled once into
// a sequence of its own and each sample runs in a fork of it, so the samples share the prompt's
// blocks instead of copying them (a sample copies only the prompt's partly filled last block, when
// it first writes to it). The samples run one after the other and each fork is released when its
// sample ends, so the pool holds the prompt's blocks plus one sample's at a time; nothing is held
// afterwards (also when something throws). Results equal those on a kv_cache.
template <class Decoder, class Pool>
requires requires(Pool& p, seq_id s) {
    { p.fork(s) } -> std::same_as<seq_id>;
    p.sequence(s);
    p.release(s);
} && token_decoder<Decoder, decltype(std::declval<Pool&>().sequence(seq_id{}))> std::vector<generation_result>
generate_n(Decoder& dec, Pool& pool, const tokenizer& tok, std::span<const token_id> prompt,
           const generation_options& options, const token_callback& on_token = {}) {
    const sampling_options resolved = resolve_sampling(options, tok);  // validates
    detail::check_prompt(prompt.size(), pool.max_seq_len(), "generate_n");

    // Releases the sequences it holds on every way out.
    struct held {
        Pool& pool;
        seq_id prompt = -1, sample = -1;
        ~held() {
            if (sample >= 0) pool.release(sample);
            if (prompt >= 0) pool.release(prompt);
        }
    } h{pool};

    std::vector<float> prompt_logits;
    h.prompt = pool.create();
    auto prompt_view = pool.sequence(h.prompt);
    detail::loop_settings settings = detail::prefill_once(dec, prompt_view, tok, prompt, options, prompt_logits);

    std::vector<generation_result> results;
    results.reserve(static_cast<std::size_t>(options.n_samples));
    for (std::int64_t i = 0; i < options.n_samples; ++i) {
        h.sample = pool.fork(h.prompt);
        auto view = pool.sequence(h.sample);
        auto sample = make_sampler(options, tok, resolved, i);
        auto stop = make_stopping(options, tok);
        settings.sample_index = i;
        results.push_back(detail::generate_impl(dec, view, &tok, prompt, sample, stop, on_token, settings));
        pool.release(h.sample);
        h.sample = -1;
    }
    return results;
}

}  // namespace nexttok

// The generation loop: feed the prompt to the sampler's history (accept()), prefill the prompt in
// one forward call, then sample a token, check the stopping criteria, stream the text that is safe to
// show, and run the decoder on that one token (with a cache that retains history) or on the whole
// sequence again (no_cache, the uncached baseline), until a criterion, the callback or the cache's
// capacity ends it. Everything but the forward calls is sequence_generator's (sequence_generator.hpp,
// which also states the streaming rules); generate() is the driver of one sequence around it.
//
// The end of the cache: the token drawn from the last position's logits ends generation with
// cache_full without being run (a C-position cache holds P prompt tokens and C - P + 1 generated).
// With generation_options::context_shift the cache makes room instead (detail/context_shift.hpp:
// llama.cpp's context shift), so generation goes on past the cache's size.
//
// Everything is a template parameter checked by a concept, so a static composition costs no
// virtual call; type-erased samplers and criteria (any_sampler, any_of_criteria) plug in the same
// way, and so does a decoder wrapper (token_decoder.hpp). Buffers are sized before the loop; the loop
// itself does not allocate beyond the growth of the result (reserved up front) and short strings.
#pragma once

#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/detail/loop_settings.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/detail/context_shift.hpp>
#include <nexttok/generation/generation_options.hpp>
#include <nexttok/generation/generation_result.hpp>
#include <nexttok/generation/make_generation.hpp>
#include <nexttok/generation/sequence_generator.hpp>
#include <nexttok/generation/token_decoder.hpp>
#include <nexttok/generation/token_event.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/stopping/concepts.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/types.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nexttok {
namespace detail {

// One sequence: check_prompt, the prefill (or the prompt's logits of a shared one, with the cache
// left as it is), then one forward call per token the generator asks for. A cache that retains
// history runs the new token alone (at the cache's next position, which a context shift moves back);
// no_cache is cleared and runs the whole sequence again.
template <class Decoder, class Cache, class Sampler, class Stop>
generation_result generate_impl(Decoder& dec, Cache& cache, const tokenizer* tok, std::span<const token_id> prompt,
                                Sampler& sample, Stop& stop, const token_callback& on_token,
                                const loop_settings& settings) {
    const std::int64_t capacity = cache.capacity();
    check_prompt(prompt.size(), capacity, "generate");
    check_context_shift<Decoder, Cache>(dec, settings, capacity, "generate");
    sequence_generator gen(tok, prompt, sample, stop, on_token, capacity, settings);
    std::int64_t n_dropped = 0;  // positions dropped by context shifts: a token's position is its index - n_dropped
    std::int64_t n_shifts = 0;
    std::vector<float> logits(static_cast<std::size_t>(dec.config().vocab_size));  // (vocab_size), the last position's
    dec.reserve(Cache::retains_history ? gen.n_prompt() : capacity, capacity);
    if (settings.prefilled_logits == nullptr) cache.clear();
    if (gen.start()) {
        std::span<const float> first = logits;
        if (settings.prefilled_logits != nullptr)
            first = *settings.prefilled_logits;
        else
            dec.forward(prompt, 0, cache, logits);
        for (bool more = gen.next(first); more; more = gen.next(logits)) {
            const std::vector<token_id>& seq = gen.sequence();
            if constexpr (Cache::retains_history) {
                std::int64_t pos = static_cast<std::int64_t>(seq.size()) - 1 - n_dropped;
                if constexpr (context_shifting<Decoder, Cache>) {
                    if (pos == capacity) {  // only with context_shift: the generator ends at capacity otherwise
                        const std::int64_t n = shift_context(dec, cache, settings.n_keep);
                        n_dropped += n;
                        pos -= n;
                        ++n_shifts;
                    }
                }
                dec.forward(std::span<const token_id>(&seq.back(), 1), pos, cache, logits);
            } else {
                cache.clear();
                dec.forward(seq, 0, cache, logits);
            }
        }
    }
    generation_result r = gen.finish();
    r.n_context_shifts = n_shifts;
    return r;
}

}  // namespace detail

// Generates a continuation of `prompt` (token ids, BOS included if the model wants one), streaming
// its text through `on_token`. The cache is cleared first and holds the sequence afterwards. The
// prompt's tokens are fed to sample.accept() before the first draw, so that history-based processors
// (penalties, DRY, no-repeat-n-gram) see them; the sampler is otherwise used as it is (reset() it to
// replay its seed or clear its history). stop.reset() is called first. Throws invalid_argument_error
// for an empty prompt or one longer than the cache's capacity.
template <class Decoder, class Cache, sampler Sampler, stopping_criterion Stop>
requires token_decoder<Decoder, Cache> generation_result generate(Decoder& dec, Cache& cache, const tokenizer& tok,
                                                                  std::span<const token_id> prompt, Sampler& sample,
                                                                  Stop& stop, const token_callback& on_token = {}) {
    return detail::generate_impl(dec, cache, &tok, prompt, sample, stop, on_token, {});
}

// The same without a tokenizer: tokens and log-probabilities only, `text` stays empty (for
// benchmarks, and models whose vocabulary is not at hand).
template <class Decoder, class Cache, sampler Sampler, stopping_criterion Stop>
requires token_decoder<Decoder, Cache> generation_result generate(Decoder& dec, Cache& cache,
                                                                  std::span<const token_id> prompt, Sampler& sample,
                                                                  Stop& stop, const token_callback& on_token = {}) {
    return detail::generate_impl(dec, cache, nullptr, prompt, sample, stop, on_token, {});
}

// The policies built from `options` (make_sampler, make_stopping), with its n_logprobs and context
// shift (context_shift, keep; BOS is tok.bos()). One sample: throws invalid_argument_error when
// options.n_samples != 1 (use generate_n), or for bad options; with context_shift, as
// detail::check_context_shift says (no_cache, too much kept; unsupported_error for learned positions
// or a cache the decoder cannot shift).
template <class Decoder, class Cache>
requires token_decoder<Decoder, Cache> generation_result generate(Decoder& dec, Cache& cache, const tokenizer& tok,
                                                                  std::span<const token_id> prompt,
                                                                  const generation_options& options,
                                                                  const token_callback& on_token = {}) {
    auto p = make_single_sample(options, tok, "generate", "use generate_n");
    detail::set_context_shift(p.settings, options, prompt, tok.bos());
    return detail::generate_impl(dec, cache, &tok, prompt, p.sample, p.stop, on_token, p.settings);
}

}  // namespace nexttok

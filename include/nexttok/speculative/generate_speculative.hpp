// generate_speculative(): generate() with a drafter. Same arguments as generate() plus the drafter
// and speculative_options, same result plus the statistics (speculative_result.hpp); the tokens are
// distributed exactly as generate()'s with the same sampler, and with greedy selection they are
// generate()'s tokens. The loop is speculative_generator's (its header says how a round works).
//
//   auto target = load_model("model-f16.gguf"), small = load_model("model-q4_0.gguf");
//   decoder<float> dec(target, 2), draft_dec(small, 2);
//   kv_cache<float> cache(target->config()), draft_cache(small->config());
//   model_drafter draft(draft_dec, draft_cache);
//   auto r = generate_speculative(dec, cache, draft, tok, prompt, options, {.draft_max = 8});
//   // r.text, r.speculation.acceptance_rate(), r.speculation.n_target_calls
//
// What cannot be verified exactly is refused with invalid_argument_error rather than sampled wrongly:
//   - mirostat (v1 and v2): its select() truncates the candidates by mu and updates mu from the token
//     it draws, in one call; the distribution at a position is therefore not available without
//     drawing, and the target's p (and the draft's q) cannot be stated. (Exact support would need the
//     selector split into distribution() and an update on choose(); not done.)
//   - XTC: its apply() draws a random number that decides whether the top tokens are removed, so the
//     processed candidates are a random set, not a distribution. (Its effect is a two-way mixture,
//     which could be stated by running the rest of the chain on both branches; not done.)
//   - a user stage without distribution() (a static chain then does not compile: the sampler is not
//     a distribution_sampler; a type-erased one has has_distribution() == false).
// Every other stage is a function of the candidates and of the tokens accepted so far (penalties,
// DRY, no-repeat-n-gram, min-new-tokens, logit bias, banned sequences, top-k, top-p, min-p, typical,
// top-n-sigma, epsilon, eta, temperature, dynamic temperature) and is verified exactly: the target's
// sampler applies them row by row with each kept token accepted before the next row.
#pragma once

#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/generation_options.hpp>
#include <nexttok/generation/make_generation.hpp>
#include <nexttok/generation/token_decoder.hpp>
#include <nexttok/generation/token_event.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/speculative/drafter.hpp>
#include <nexttok/speculative/speculative_generator.hpp>
#include <nexttok/speculative/speculative_options.hpp>
#include <nexttok/speculative/speculative_result.hpp>
#include <nexttok/stopping/concepts.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/types.hpp>

#include <concepts>
#include <cstdint>
#include <span>

namespace nexttok {

namespace detail {

template <class Decoder, class Cache, class Drafter, class Sampler, class Stop>
speculative_result generate_speculative_impl(Decoder& dec, Cache& cache, Drafter& draft, const tokenizer* tok,
                                             std::span<const token_id> prompt, Sampler& sample, Stop& stop,
                                             const speculative_options& options, const token_callback& on_token,
                                             std::int64_t max_new_tokens = -1, std::int64_t n_logprobs = 0) {
    speculative_generator g(dec, cache, draft, tok, prompt, sample, stop, on_token, options, max_new_tokens,
                            n_logprobs);
    if (g.start())
        while (g.step()) {
        }
    return g.finish();
}

// Throws invalid_argument_error naming the field when the options ask for a stage that cannot be
// verified exactly (see the top of generate_speculative.hpp), for several samples, or for context_shift.
NEXTTOK_DECL void check_speculative_sampling(const generation_options& options);

}  // namespace detail

// Generates a continuation of `prompt` as generate() does (same streaming, stopping, cache and
// sampler conventions: the cache is cleared first, the prompt is fed to sample.accept(), stop.reset()
// is called), with the drafter's proposals verified by the target. Afterwards the cache holds the
// sequence's positions but the last token's. The draws use options.seed, not the sampler's own RNG.
template <class Decoder, class Cache, drafter Drafter, distribution_sampler Sampler, stopping_criterion Stop>
requires token_decoder<Decoder, Cache> && rewindable_kv_storage<Cache, typename Decoder::scalar_type> &&
    std::copyable<Sampler>
        speculative_result generate_speculative(Decoder& dec, Cache& cache, Drafter& draft, const tokenizer& tok,
                                                std::span<const token_id> prompt, Sampler& sample, Stop& stop,
                                                const speculative_options& options = {},
                                                const token_callback& on_token = {}) {
    return detail::generate_speculative_impl(dec, cache, draft, &tok, prompt, sample, stop, options, on_token);
}

// The same without a tokenizer: tokens and log-probabilities only, `text` stays empty.
template <class Decoder, class Cache, drafter Drafter, distribution_sampler Sampler, stopping_criterion Stop>
requires token_decoder<Decoder, Cache> && rewindable_kv_storage<Cache, typename Decoder::scalar_type> &&
    std::copyable<Sampler>
        speculative_result generate_speculative(Decoder& dec, Cache& cache, Drafter& draft,
                                                std::span<const token_id> prompt, Sampler& sample, Stop& stop,
                                                const speculative_options& options = {},
                                                const token_callback& on_token = {}) {
    return detail::generate_speculative_impl(dec, cache, draft, nullptr, prompt, sample, stop, options, on_token);
}

// The policies built from `options` (make_sampler, make_stopping) and its n_logprobs, as
// generate(dec, cache, tok, prompt, options) does; the draws use options.sampling.seed (speculative.seed is ignored), and no
// round drafts beyond options.max_new_tokens. Throws invalid_argument_error for bad options, for
// n_samples != 1, mirostat or XTC (naming the field).
template <class Decoder, class Cache, drafter Drafter>
requires token_decoder<Decoder, Cache> && rewindable_kv_storage<Cache, typename Decoder::scalar_type> speculative_result
generate_speculative(Decoder& dec, Cache& cache, Drafter& draft, const tokenizer& tok, std::span<const token_id> prompt,
                     const generation_options& options, const speculative_options& speculative = {},
                     const token_callback& on_token = {}) {
    options.validate();
    detail::check_speculative_sampling(options);
    auto sample = make_sampler(options, tok);
    auto stop = make_stopping(options, tok);
    speculative_options spec = speculative;
    spec.seed = options.sampling.seed;
    return detail::generate_speculative_impl(dec, cache, draft, &tok, prompt, sample, stop, spec, on_token,
                                             options.max_new_tokens, options.n_logprobs);
}

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/speculative/impl/generate_speculative.ipp>
#endif

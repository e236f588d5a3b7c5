// The policies generate() runs for a generation_options: the sampler (make_sampler) and the stopping
// criteria (make_stopping). Both need the tokenizer: for the EOS ids (min-new-tokens, ignore-eos, the
// EOS criterion) and to turn DRY's string breakers into token sequences.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/detail/loop_settings.hpp>
#include <nexttok/generation/generation_options.hpp>
#include <nexttok/sampling/any_sampler.hpp>
#include <nexttok/sampling/dry.hpp>
#include <nexttok/sampling/make_sampler.hpp>
#include <nexttok/sampling/min_new_tokens.hpp>
#include <nexttok/stopping/any_of_criteria.hpp>
#include <nexttok/stopping/cancellation.hpp>
#include <nexttok/stopping/deadline.hpp>
#include <nexttok/stopping/eos_criterion.hpp>
#include <nexttok/stopping/max_length.hpp>
#include <nexttok/stopping/max_new_tokens.hpp>
#include <nexttok/stopping/stop_strings.hpp>
#include <nexttok/stopping/stop_token_sequences.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include <cstdint>
#include <vector>

namespace nexttok {

// The EOS ids of a generation: options.eos_ids, or the tokenizer's EOS.
NEXTTOK_DECL std::vector<token_id> eos_ids_of(const generation_options& options, const tokenizer& tok);

// options.sampling with what needs the tokenizer resolved: DRY's string breakers converted (only when
// DRY is enabled: the conversion reads the whole vocabulary), ignore_eos as a -inf bias on every EOS id.
NEXTTOK_DECL sampling_options resolve_sampling(const generation_options& options, const tokenizer& tok);

// The sampler of sample `sample_index` (its seed is options.sampling.seed + sample_index): the chain of
// make_sampler(sampling_options) with min-new-tokens (EOS masked) after the constraints. `resolved`:
// resolve_sampling(options, tok), computed once for several samples.
NEXTTOK_DECL any_sampler make_sampler(const generation_options& options, const tokenizer& tok,
                                      const sampling_options& resolved, std::int64_t sample_index = 0);

NEXTTOK_DECL any_sampler make_sampler(const generation_options& options, const tokenizer& tok,
                                      std::int64_t sample_index = 0);

// The stopping criteria, checked in this order (the first that fires names the reason): EOS (unless
// ignore_eos), max_new_tokens, max_length, stop_token_sequences, stop strings, the timeout, the
// cancellation token. Validates the options (throws invalid_argument_error).
NEXTTOK_DECL any_of_criteria make_stopping(const generation_options& options, const tokenizer& tok);

// What one sample of `options` runs on: its sampler, its stopping criteria and the loop settings
// taken from it (n_logprobs; context shift is the caller's). Throws invalid_argument_error when
// options.n_samples != 1, naming `caller` and what to do instead (`hint`).
struct single_sample_policies {
    any_sampler sample;
    any_of_criteria stop;
    detail::loop_settings settings;
};

NEXTTOK_DECL single_sample_policies make_single_sample(const generation_options& options, const tokenizer& tok,
                                                       const char* caller, const char* hint);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/generation/impl/make_generation.ipp>
#endif

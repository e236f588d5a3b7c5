// The policies generate() runs for a generation_options: the sampler (make_sampler) and the stopping
// criteria (make_stopping). Both need the tokenizer: for the EOS ids (min-new-tokens, ignore-eos, the
// EOS criterion) and to turn DRY's string breakers into token sequences.
#pragma once

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

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace nexttok {

// The EOS ids of a generation: options.eos_ids, or the tokenizer's EOS.
inline std::vector<token_id> eos_ids_of(const generation_options& options, const tokenizer& tok) {
    if (!options.eos_ids.empty()) return options.eos_ids;
    return {tok.eos()};
}

// options.sampling with what needs the tokenizer resolved: DRY's string breakers converted (only when
// DRY is enabled: the conversion reads the whole vocabulary), ignore_eos as a -inf bias on every EOS id.
inline sampling_options resolve_sampling(const generation_options& options, const tokenizer& tok) {
    options.validate();
    sampling_options s = options.sampling;
    const bool dry_on = s.dry_multiplier != 0.0f && s.dry_base >= 1.0f && s.dry_penalty_last_n != 0;
    if (dry_on && !options.dry_sequence_breakers.empty()) {
        auto breakers = dry_sequence_breakers(tok, options.dry_sequence_breakers);
        s.dry_sequence_breakers.insert(s.dry_sequence_breakers.end(), breakers.begin(), breakers.end());
    }
    if (options.ignore_eos)
        for (token_id id : eos_ids_of(options, tok))
            if (id >= 0) s.logit_bias.push_back({id, -INFINITY});
    return s;
}

// The sampler of sample `sample_index` (its seed is options.sampling.seed + sample_index): the chain of
// make_sampler(sampling_options) with min-new-tokens (EOS masked) after the constraints. `resolved`:
// resolve_sampling(options, tok), computed once for several samples.
inline any_sampler make_sampler(const generation_options& options, const tokenizer& tok,
                                const sampling_options& resolved, std::int64_t sample_index = 0) {
    sampling_options s = resolved;
    s.seed += static_cast<std::uint64_t>(sample_index);
    std::vector<any_processor> extra;
    if (options.min_new_tokens > 0 && !options.ignore_eos)
        extra.emplace_back(min_new_tokens(options.min_new_tokens, eos_ids_of(options, tok)));
    return make_sampler(s, std::move(extra));
}

inline any_sampler make_sampler(const generation_options& options, const tokenizer& tok,
                                std::int64_t sample_index = 0) {
    return make_sampler(options, tok, resolve_sampling(options, tok), sample_index);
}

// The stopping criteria, checked in this order (the first that fires names the reason): EOS (unless
// ignore_eos), max_new_tokens, max_length, stop_token_sequences, stop strings, the timeout, the
// cancellation token. Validates the options (throws invalid_argument_error).
inline any_of_criteria make_stopping(const generation_options& options, const tokenizer& tok) {
    options.validate();
    any_of_criteria stop;
    if (!options.ignore_eos) stop.add(eos_criterion(eos_ids_of(options, tok)));
    if (options.max_new_tokens >= 0) stop.add(max_new_tokens(options.max_new_tokens));
    if (options.max_length > 0) stop.add(max_length(options.max_length));
    if (!options.stop_token_sequences.empty()) stop.add(stop_token_sequences(options.stop_token_sequences));
    if (!options.stop.empty()) stop.add(stop_strings(options.stop, options.include_stop_string));
    if (options.timeout.count() > 0) stop.add(deadline::after(options.timeout));
    if (options.cancel.stop_possible()) stop.add(cancellation(options.cancel));
    return stop;
}

// What one sample of `options` runs on: its sampler, its stopping criteria and the loop settings
// taken from it (n_logprobs; context shift is the caller's). Throws invalid_argument_error when
// options.n_samples != 1, naming `caller` and what to do instead (`hint`).
struct single_sample_policies {
    any_sampler sample;
    any_of_criteria stop;
    detail::loop_settings settings;
};

inline single_sample_policies make_single_sample(const generation_options& options, const tokenizer& tok,
                                                 const char* caller, const char* hint) {
    if (options.n_samples != 1)
        throw invalid_argument_error(std::string(caller) + ": n_samples = " + std::to_string(options.n_samples) + ": " +
                                     hint);
    single_sample_policies p{make_sampler(options, tok), make_stopping(options, tok), {}};
    p.settings.n_logprobs = options.n_logprobs;
    return p;
}

}  // namespace nexttok

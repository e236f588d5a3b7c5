// The definitions of make_generation.hpp.
#pragma once

#include <nexttok/generation/make_generation.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace nexttok {

NEXTTOK_DECL std::vector<token_id> eos_ids_of(const generation_options& options, const tokenizer& tok) {
    if (!options.eos_ids.empty()) return options.eos_ids;
    return {tok.eos()};
}

NEXTTOK_DECL sampling_options resolve_sampling(const generation_options& options, const tokenizer& tok) {
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

NEXTTOK_DECL any_sampler make_sampler(const generation_options& options, const tokenizer& tok,
                                      const sampling_options& resolved, std::int64_t sample_index) {
    sampling_options s = resolved;
    s.seed += static_cast<std::uint64_t>(sample_index);
    std::vector<any_processor> extra;
    if (options.min_new_tokens > 0 && !options.ignore_eos)
        extra.emplace_back(min_new_tokens(options.min_new_tokens, eos_ids_of(options, tok)));
    return make_sampler(s, std::move(extra));
}

NEXTTOK_DECL any_sampler make_sampler(const generation_options& options, const tokenizer& tok,
                                      std::int64_t sample_index) {
    return make_sampler(options, tok, resolve_sampling(options, tok), sample_index);
}

NEXTTOK_DECL any_of_criteria make_stopping(const generation_options& options, const tokenizer& tok) {
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

NEXTTOK_DECL single_sample_policies make_single_sample(const generation_options& options, const tokenizer& tok,
                                                       const char* caller, const char* hint) {
    if (options.n_samples != 1)
        throw invalid_argument_error(std::string(caller) + ": n_samples = " + std::to_string(options.n_samples) + ": " +
                                     hint);
    single_sample_policies p{make_sampler(options, tok), make_stopping(options, tok), {}};
    p.settings.n_logprobs = options.n_logprobs;
    return p;
}

}  // namespace nexttok

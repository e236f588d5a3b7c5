// The definitions of sampling_options.hpp.
#pragma once

#include <nexttok/sampling/sampling_options.hpp>

#include <cmath>
#include <string>

namespace nexttok {

NEXTTOK_DECL void sampling_options::validate() const {
    auto finite = [](float x) {
        return std::isfinite(x);
    };
    if (!finite(temperature) || temperature < 0.0f)
        fail_("temperature", std::to_string(temperature), "must be finite and >= 0 (0 = greedy)");
    if (!finite(dynatemp_range) || dynatemp_range < 0.0f)
        fail_("dynatemp_range", std::to_string(dynatemp_range), "must be finite and >= 0 (0 = off)");
    if (!finite(dynatemp_exponent)) fail_("dynatemp_exponent", std::to_string(dynatemp_exponent), "must be finite");
    if (top_k < 0) fail_("top_k", std::to_string(top_k), "must be >= 0 (0 = disabled)");
    if (!(top_p > 0.0f && top_p <= 1.0f)) fail_("top_p", std::to_string(top_p), "must be in (0, 1] (1 = disabled)");
    if (!(min_p >= 0.0f && min_p <= 1.0f)) fail_("min_p", std::to_string(min_p), "must be in [0, 1] (0 = disabled)");
    if (!(typical_p > 0.0f && typical_p <= 1.0f))
        fail_("typical_p", std::to_string(typical_p), "must be in (0, 1] (1 = disabled)");
    if (!finite(top_n_sigma)) fail_("top_n_sigma", std::to_string(top_n_sigma), "must be finite (<= 0 = disabled)");
    if (!(epsilon_cutoff >= 0.0f && epsilon_cutoff < 1.0f))
        fail_("epsilon_cutoff", std::to_string(epsilon_cutoff), "must be in [0, 1) (0 = disabled)");
    if (!(eta_cutoff >= 0.0f && eta_cutoff < 1.0f))
        fail_("eta_cutoff", std::to_string(eta_cutoff), "must be in [0, 1) (0 = disabled)");
    if (!(xtc_probability >= 0.0f && xtc_probability <= 1.0f))
        fail_("xtc_probability", std::to_string(xtc_probability), "must be in [0, 1] (0 = disabled)");
    if (!(xtc_threshold >= 0.0f && xtc_threshold <= 1.0f))
        fail_("xtc_threshold", std::to_string(xtc_threshold), "must be in [0, 1] (> 0.5 = disabled)");
    if (!finite(repeat_penalty) || repeat_penalty <= 0.0f)
        fail_("repeat_penalty", std::to_string(repeat_penalty), "must be finite and > 0 (1 = disabled)");
    if (!finite(frequency_penalty)) fail_("frequency_penalty", std::to_string(frequency_penalty), "must be finite");
    if (!finite(presence_penalty)) fail_("presence_penalty", std::to_string(presence_penalty), "must be finite");
    if (repeat_last_n < -1) fail_("repeat_last_n", std::to_string(repeat_last_n), "must be >= -1 (-1 = all, 0 = off)");
    if (!finite(dry_multiplier)) fail_("dry_multiplier", std::to_string(dry_multiplier), "must be finite");
    if (!finite(dry_base)) fail_("dry_base", std::to_string(dry_base), "must be finite");
    if (dry_allowed_length < 1) fail_("dry_allowed_length", std::to_string(dry_allowed_length), "must be >= 1");
    if (dry_penalty_last_n < -1)
        fail_("dry_penalty_last_n", std::to_string(dry_penalty_last_n), "must be >= -1 (-1 = all, 0 = off)");
    if (no_repeat_ngram_size < 0)
        fail_("no_repeat_ngram_size", std::to_string(no_repeat_ngram_size), "must be >= 0 (0 = off)");
    for (const auto& b : logit_bias)
        if (b.id < 0 || std::isnan(b.bias) || b.bias == INFINITY)
            fail_("logit_bias", std::to_string(b.id) + "=" + std::to_string(b.bias),
                  "needs an id >= 0 and a finite bias or -inf");
    for (const auto& s : banned_sequences)
        if (s.empty()) fail_("banned_sequences", "{}", "a banned sequence must not be empty");
    if (mirostat < 0 || mirostat > 2) fail_("mirostat", std::to_string(mirostat), "must be 0 (off), 1 or 2");
    if (!finite(mirostat_tau)) fail_("mirostat_tau", std::to_string(mirostat_tau), "must be finite");
    if (!finite(mirostat_eta)) fail_("mirostat_eta", std::to_string(mirostat_eta), "must be finite");
}

NEXTTOK_DECL void sampling_options::fail_(const char* field, const std::string& value, const char* rule) {
    throw invalid_argument_error(std::string("sampling_options: ") + field + " = " + value + ": " + rule);
}

}  // namespace nexttok

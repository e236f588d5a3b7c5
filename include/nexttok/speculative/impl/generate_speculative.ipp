// The definitions of generate_speculative.hpp.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/speculative/generate_speculative.hpp>

#include <string>

namespace nexttok::detail {

NEXTTOK_DECL void check_speculative_sampling(const generation_options& options) {
    const sampling_options& s = options.sampling;
    if (options.n_samples != 1)
        throw invalid_argument_error("generate_speculative: n_samples = " + std::to_string(options.n_samples) +
                                     ": speculative decoding generates one sample");
    if (options.context_shift)
        throw invalid_argument_error(
            "generate_speculative: context_shift is not supported with speculative decoding "
            "(generation ends with cache_full at the cache's capacity)");
    if (s.mirostat != 0)
        throw invalid_argument_error("generate_speculative: sampling.mirostat = " + std::to_string(s.mirostat) +
                                     ": mirostat cannot be verified exactly (its select() updates mu from the token it "
                                     "draws, so its distribution cannot be stated without drawing); use mirostat = 0");
    if (s.xtc_probability > 0.0f && s.xtc_threshold <= 0.5f)
        throw invalid_argument_error(
            "generate_speculative: sampling.xtc_probability = " + std::to_string(s.xtc_probability) +
            ": XTC cannot be verified exactly (its apply() draws a random number, so the candidates "
            "it leaves are not a distribution); use xtc_probability = 0");
}

}  // namespace nexttok::detail

// The runtime description of the default sampling policy, with llama.cpp's defaults
// (common_params_sampling). make_sampler() (make_sampler.hpp) turns it into a sampler.
#pragma once

#include <nexttok/error.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

namespace nexttok {

struct sampling_options {
    // 0.8: logits are divided by it before the draw; 0 means greedy (exactly the argmax token). Must be
    // finite and >= 0 (llama.cpp also treats < 0 as greedy; we reject it as a likely mistake).
    float temperature = 0.8f;
    // 40: keep the 40 most likely tokens; 0 disables the filter. Must be >= 0.
    int top_k = 40;
    // 0.95: keep the smallest set of most likely tokens whose probability sums to >= 0.95; 1 disables.
    // Must be in (0, 1].
    float top_p = 0.95f;
    // 0.05: drop tokens less likely than 0.05 times the most likely one; 0 disables. Must be in [0, 1].
    float min_p = 0.05f;
    // 1: top-p and min-p keep at least this many tokens. llama.cpp's default is 0, which both filters
    // treat exactly as 1 (they always keep the most likely token).
    std::size_t min_keep = 1;
    // 0: the seed of the categorical draw. Same options and seed -> same tokens. llama.cpp's default
    // (0xFFFFFFFF) means "a random seed"; ours is fixed on purpose (determinism): pass your own, e.g.
    // from std::random_device, for varied output.
    std::uint64_t seed = 0;

    // Throws invalid_argument_error naming the first bad field and its value.
    void validate() const {
        if (!std::isfinite(temperature) || temperature < 0.0f)
            fail_("temperature", std::to_string(temperature), "must be finite and >= 0 (0 = greedy)");
        if (top_k < 0) fail_("top_k", std::to_string(top_k), "must be >= 0 (0 = disabled)");
        if (!(top_p > 0.0f && top_p <= 1.0f)) fail_("top_p", std::to_string(top_p), "must be in (0, 1] (1 = disabled)");
        if (!(min_p >= 0.0f && min_p <= 1.0f)) fail_("min_p", std::to_string(min_p), "must be in [0, 1] (0 = disabled)");
    }

private:
    [[noreturn]] static void fail_(const char* field, const std::string& value, const char* rule) {
        throw invalid_argument_error(std::string("sampling_options: ") + field + " = " + value + ": " + rule);
    }
};

}  // namespace nexttok

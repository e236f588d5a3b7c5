// Dynamic temperature ("entropy-based temperature", kalomaze 2023; cf. Zhang et al. 2024, "EDT:
// Improving Large Language Models' Generation by Entropy-based Dynamic Temperature Sampling"), as
// llama.cpp's temp-ext sampler (llama_sampler_temp_ext_apply): the temperature moves within
// [max(0, t - range), t + range] with the normalized entropy of the distribution.
//   - range <= 0: exactly temperature(t) (see temperature.hpp).
//   - fewer than two candidates: no-op.
//   - otherwise: the set is sorted, probs = softmax; H = -sum p ln p over p > 0 (float),
//     H_max = ln(n); t_dyn = t_min + (t_max - t_min) * (H / H_max)^exponent; then temperature(t_dyn)
//     (t_dyn can be 0 when t_min is: only the maximum survives). llama.cpp also recomputes probs; here
//     probs_valid is cleared and the next stage that needs them computes them.
// last_temperature() reports the t_dyn of the last apply (for tests and logging). Not thread-safe.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/validate.hpp>
#include <nexttok/sampling/temperature.hpp>

#include <cstddef>

namespace nexttok {

class dynamic_temperature {
public:
    // Throws invalid_argument_error when t, range or exponent is NaN.
    dynamic_temperature(float t, float range, float exponent = 1.0f) : t_(t), range_(range), exponent_(exponent) {
        detail::require_not_nan(t, "dynamic_temperature", "t");
        detail::require_not_nan(range, "dynamic_temperature", "range");
        detail::require_not_nan(exponent, "dynamic_temperature", "exponent");
    }

    NEXTTOK_DECL void apply(candidates& c);

    float t() const noexcept { return t_; }
    float range() const noexcept { return range_; }
    float exponent() const noexcept { return exponent_; }
    float last_temperature() const noexcept { return last_t_; }

private:
    float t_, range_, exponent_;
    float last_t_ = 0.0f;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/dynamic_temperature.ipp>
#endif

// The definitions of rope_scaling.hpp: the checks of a scaling and the per-pair frequencies.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/model/rope_scaling.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

namespace nexttok {

NEXTTOK_DECL void rope_scaling_config::validate(const std::string& file, std::int64_t rope_dim) const {
    auto fail = [&](const std::string& what) {
        throw format_error(file + ": hyper-parameters: rope_scaling (" + std::string(rope_scaling_name(type)) +
                           "): " + what);
    };
    if (!(factor > 0.0f) || !std::isfinite(factor)) fail("factor = " + std::to_string(factor) + " (expected > 0)");
    if (type == rope_scaling_type::yarn) {
        if (original_max_seq_len <= 0)
            fail("original context length = " + std::to_string(original_max_seq_len) + " (expected > 0)");
        if (!(beta_fast > 0.0f) || !(beta_slow > 0.0f))
            fail("beta_fast = " + std::to_string(beta_fast) + ", beta_slow = " + std::to_string(beta_slow) +
                 " (expected > 0)");
        if (!std::isfinite(ext_factor) || !std::isfinite(attn_factor))
            fail("ext_factor and attn_factor must be finite");
    }
    if (!freq_factors.empty() && static_cast<std::int64_t>(freq_factors.size()) != rope_dim / 2)
        fail(std::to_string(freq_factors.size()) +
             " frequency factors (expected rope_dim / 2 = " + std::to_string(rope_dim / 2) + ")");
    for (std::size_t i = 0; i < freq_factors.size(); ++i)
        if (!(freq_factors[i] > 0.0f) || !std::isfinite(freq_factors[i]))
            fail("frequency factor " + std::to_string(i) + " = " + std::to_string(freq_factors[i]) + " (expected > 0)");
}

namespace detail {

// ggml_rope_yarn_corr_dim: the pair index whose frequency turns n_rot times over n_ctx_orig positions.
NEXTTOK_DECL double yarn_corr_dim(std::int64_t rope_dim, std::int64_t n_ctx_orig, double n_rot, double theta) noexcept {
    return static_cast<double>(rope_dim) *
           std::log(static_cast<double>(n_ctx_orig) / (n_rot * 2.0 * std::numbers::pi)) / (2.0 * std::log(theta));
}

}  // namespace detail

NEXTTOK_DECL std::vector<double> rope_pair_frequencies(const rope_scaling_config& s, std::int64_t rope_dim,
                                                       float theta) {
    const std::int64_t n_pairs = rope_dim / 2;
    std::vector<double> omega(static_cast<std::size_t>(n_pairs));
    const double freq_scale =
        s.type == rope_scaling_type::linear || s.type == rope_scaling_type::yarn ? 1.0 / s.factor : 1.0;
    double low = 0.0, high = 0.0;
    if (s.type == rope_scaling_type::yarn) {
        low = std::max(0.0, std::floor(detail::yarn_corr_dim(rope_dim, s.original_max_seq_len, s.beta_fast, theta)));
        high = std::min(static_cast<double>(rope_dim - 1),
                        std::ceil(detail::yarn_corr_dim(rope_dim, s.original_max_seq_len, s.beta_slow, theta)));
    }
    for (std::int64_t i = 0; i < n_pairs; ++i) {
        double f = rope_frequency(i, rope_dim, theta);
        if (!s.freq_factors.empty()) f /= static_cast<double>(s.freq_factors[static_cast<std::size_t>(i)]);
        double scale = freq_scale;
        if (s.type == rope_scaling_type::yarn) {
            const double y = (static_cast<double>(i) - low) / std::max(0.001, high - low);
            const double ramp = (1.0 - std::clamp(y, 0.0, 1.0)) * s.ext_factor;
            scale = freq_scale * (1.0 - ramp) + ramp;
        }
        omega[static_cast<std::size_t>(i)] = f * scale;
    }
    return omega;
}

NEXTTOK_DECL std::vector<float> llama3_frequency_factors(std::int64_t rope_dim, float theta, float factor,
                                                         float low_freq_factor, float high_freq_factor,
                                                         std::int64_t original_max_seq_len) {
    std::vector<float> factors(static_cast<std::size_t>(rope_dim / 2));
    const double old_len = static_cast<double>(original_max_seq_len);
    const double low_wavelen = old_len / low_freq_factor, high_wavelen = old_len / high_freq_factor;
    for (std::int64_t i = 0; i < rope_dim / 2; ++i) {
        // torch: 1.0 / (base ** (arange(0, dim, 2, dtype=float32) / dim)), all in float32.
        const float exponent = static_cast<float>(2 * i) / static_cast<float>(rope_dim);
        const float freq = 1.0f / std::pow(theta, exponent);
        const double wavelen = 2.0 * std::numbers::pi / static_cast<double>(freq);
        double f = 1.0;
        if (wavelen > low_wavelen) {
            f = factor;
        } else if (wavelen >= high_wavelen) {
            const double smooth = (old_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
            f = 1.0 / ((1.0 - smooth) / factor + smooth);
        }
        factors[static_cast<std::size_t>(i)] = static_cast<float>(f);
    }
    return factors;
}

}  // namespace nexttok

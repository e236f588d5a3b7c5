// RoPE scaling: how a model runs positions beyond the context it was trained for, as llama.cpp
// applies it (ggml's rope: freq_scale, per-pair freq_factors, YaRN's ramp and magnitude), reduced
// to what the decoder needs: one angular frequency per rotated pair and one magnitude on q and k.
//
//   pair i, unscaled:   f_i = theta^(-2i/rope_dim) / freq_factors[i]   (llama3's factors; else 1)
//   none, llama3:       omega_i = f_i
//   linear:             omega_i = f_i / factor                         (positions divided by factor)
//   yarn:               omega_i = f_i * ((1 - r_i) / factor + r_i),     r_i = ext_factor * ramp(i),
//                       ramp(i) = 1 - clamp((i - low) / max(0.001, high - low), 0, 1), with low/high
//                       ggml_rope_yarn_corr_dims: floor/ceil of rope_dim ln(orig / (2 pi beta)) / (2 ln theta)
//                       for beta_fast / beta_slow, clamped to [0, rope_dim - 1];
//                       magnitude = attn_factor * (1 + 0.1 ln(factor)) on both cos and sin.
//
// Every angle is pos * omega_i, linear in the position, so rotations compose: a cached key moves
// by d positions under the rotation of angle d * omega_i (magnitude 1), as a context shift needs.
#pragma once

#include <nexttok/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

// The unscaled angular frequency of pair i (radians per position): theta^(-2i/rope_dim), in double.
inline double rope_frequency(std::int64_t i, std::int64_t rope_dim, float theta) noexcept {
    return std::pow(static_cast<double>(theta), -2.0 * static_cast<double>(i) / static_cast<double>(rope_dim));
}

enum class rope_scaling_type {
    none,    // plain RoPE
    linear,  // position interpolation: every frequency divided by factor
    llama3,  // Llama 3.1's per-frequency factors (freq_factors)
    yarn,    // YaRN: interpolation of the low frequencies, extrapolation of the high, a magnitude on q and k
};

inline std::string_view rope_scaling_name(rope_scaling_type t) noexcept {
    switch (t) {
        case rope_scaling_type::none:
            return "none";
        case rope_scaling_type::linear:
            return "linear";
        case rope_scaling_type::llama3:
            return "llama3";
        case rope_scaling_type::yarn:
            return "yarn";
    }
    return "?";
}

struct rope_scaling_config {
    rope_scaling_type type = rope_scaling_type::none;
    float factor = 1.0f;  // context extension; linear and yarn divide frequencies by it (llama3's is in freq_factors)
    std::int64_t original_max_seq_len =
        0;                          // the context before extension (yarn's correction dims; llama3's wavelengths)
    float beta_fast = 32.0f;        // yarn: pairs turning more than this per original context extrapolate
    float beta_slow = 1.0f;         // yarn: pairs turning less than this interpolate fully
    float ext_factor = 1.0f;        // yarn: weight of the extrapolation ramp (llama.cpp's yarn_ext_factor)
    float attn_factor = 1.0f;       // yarn: multiplies the magnitude 1 + 0.1 ln(factor)
    float low_freq_factor = 1.0f;   // llama3, as config.json gives it (GGUF carries only freq_factors)
    float high_freq_factor = 4.0f;  // llama3
    std::vector<float>
        freq_factors;  // (rope_dim / 2) divisor of each pair's frequency (GGUF rope_freqs.weight); empty: none

    // Throws format_error "<file>: hyper-parameters: rope_scaling...: <what>" for numbers that
    // cannot describe a scaling.
    void validate(const std::string& file, std::int64_t rope_dim) const {
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
                fail("frequency factor " + std::to_string(i) + " = " + std::to_string(freq_factors[i]) +
                     " (expected > 0)");
    }
};

namespace detail {

// ggml_rope_yarn_corr_dim: the pair index whose frequency turns n_rot times over n_ctx_orig positions.
inline double yarn_corr_dim(std::int64_t rope_dim, std::int64_t n_ctx_orig, double n_rot, double theta) noexcept {
    return static_cast<double>(rope_dim) *
           std::log(static_cast<double>(n_ctx_orig) / (n_rot * 2.0 * std::numbers::pi)) / (2.0 * std::log(theta));
}

}  // namespace detail

// omega_i (radians per position) of the rope_dim / 2 rotated pairs, in double; see the top of the file.
inline std::vector<double> rope_pair_frequencies(const rope_scaling_config& s, std::int64_t rope_dim, float theta) {
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

// The factor on cos and sin (so on q and k): YaRN's attn_factor * (1 + 0.1 ln(factor)) when its
// ramp is on (ext_factor != 0), as ggml's rope_yarn; 1 otherwise.
inline double rope_magnitude(const rope_scaling_config& s) noexcept {
    if (s.type != rope_scaling_type::yarn) return 1.0;
    return static_cast<double>(s.attn_factor) *
           (s.ext_factor != 0.0f ? 1.0 + 0.1 * std::log(static_cast<double>(s.factor)) : 1.0);
}

// Llama 3.1's per-pair frequency factors from config.json's rope_scaling, as Hugging Face's
// _compute_llama3_parameters and llama.cpp's converter (rope_freqs.weight) compute them: with the
// pair's wavelength w = 2 pi / theta^(-2i/rope_dim) (float32, as both do) and the original context
// L, 1 where w < L / high_freq_factor, factor where w > L / low_freq_factor, and between them
// 1 / ((1 - s) / factor + s) with s = (L / w - low_freq_factor) / (high_freq_factor - low_freq_factor).
inline std::vector<float> llama3_frequency_factors(std::int64_t rope_dim, float theta, float factor,
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

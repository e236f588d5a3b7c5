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

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>

#include <cmath>
#include <cstdint>
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
    NEXTTOK_DECL void validate(const std::string& file, std::int64_t rope_dim) const;
};

// omega_i (radians per position) of the rope_dim / 2 rotated pairs, in double; see the top of the file.
NEXTTOK_DECL std::vector<double> rope_pair_frequencies(const rope_scaling_config& s, std::int64_t rope_dim,
                                                       float theta);

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
NEXTTOK_DECL std::vector<float> llama3_frequency_factors(std::int64_t rope_dim, float theta, float factor,
                                                         float low_freq_factor, float high_freq_factor,
                                                         std::int64_t original_max_seq_len);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/model/impl/rope_scaling.ipp>
#endif

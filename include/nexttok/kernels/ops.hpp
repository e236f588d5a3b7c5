// Element-wise and per-vector operations of the decoder: RMSNorm, LayerNorm, RoPE (adjacent
// and NeoX pairing), softmax, SwiGLU and GELU.
// Everything computes in float (sums of squares in double); outputs may be stored in any Scalar.
#pragma once

#include <nexttok/kernels/detail/simd.hpp>

#include <cmath>
#include <cstdint>

namespace nexttok {

// out[i] = Scalar(x[i] / rms(x) * weight[i]), rms(x) = sqrt(mean(x^2) + eps).
template <class Out>
inline void rms_norm(const float* x, const float* weight, std::int64_t n, float eps, Out* out) noexcept {
    double ss = 0.0;
    for (std::int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float scale = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
    for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(x[i] * scale * weight[i]);
}

// out[i] = Scalar((x[i] - mean) / sqrt(var + eps) * weight[i] + bias[i]); bias may be null.
template <class Out>
inline void layer_norm(const float* x, const float* weight, const float* bias, std::int64_t n, float eps,
                       Out* out) noexcept {
    double sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) sum += x[i];
    const double mean = sum / static_cast<double>(n);
    double var = 0.0;
    for (std::int64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
    const float scale = static_cast<float>(1.0 / std::sqrt(var / static_cast<double>(n) + eps));
    const float m = static_cast<float>(mean);
    for (std::int64_t i = 0; i < n; ++i)
        out[i] = static_cast<Out>((x[i] - m) * scale * weight[i] + (bias != nullptr ? bias[i] : 0.0f));
}

// Rotates pairs (x[i], x[i + n_pairs]) of the first 2*n_pairs dimensions of one head: the
// "rotate_half" pairing of GPT-NeoX, Qwen2 and Hugging Face's Llama (llama.cpp's NeoX mode).
inline void rope_neox(float* x, const float* cos_sin, std::int64_t n_pairs) noexcept {
    for (std::int64_t i = 0; i < n_pairs; ++i) {
        const float c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
        const float x0 = x[i], x1 = x[i + n_pairs];
        x[i] = x0 * c - x1 * s;
        x[i + n_pairs] = x0 * s + x1 * c;
    }
}

// Rotates adjacent pairs (x[2i], x[2i+1]) of the first 2*n_pairs dimensions of one head by
// pos * theta_i, with cos/sin given per pair (see rope_table). This is the pairing of llama2.c and
// of GGUF's llama layout (llama.cpp's "normal" RoPE mode).
inline void rope_adjacent(float* x, const float* cos_sin, std::int64_t n_pairs) noexcept {
    for (std::int64_t i = 0; i < n_pairs; ++i) {
        const float c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
        const float x0 = x[2 * i], x1 = x[2 * i + 1];
        x[2 * i] = x0 * c - x1 * s;
        x[2 * i + 1] = x0 * s + x1 * c;
    }
}

// cos_sin[2i], cos_sin[2i+1] = cos, sin of pos * theta^(-2i/rope_dim), computed in double.
inline void rope_table(std::int64_t pos, std::int64_t rope_dim, float theta, float* cos_sin) noexcept {
    for (std::int64_t i = 0; i < rope_dim / 2; ++i) {
        const double freq = std::pow(static_cast<double>(theta), -2.0 * static_cast<double>(i) / static_cast<double>(rope_dim));
        const double angle = static_cast<double>(pos) * freq;
        cos_sin[2 * i] = static_cast<float>(std::cos(angle));
        cos_sin[2 * i + 1] = static_cast<float>(std::sin(angle));
    }
}

// In place: x = exp(x - max) / sum. Returns nothing; n >= 1.
inline void softmax(float* x, std::int64_t n) noexcept {
    float max = x[0];
    for (std::int64_t i = 1; i < n; ++i) max = x[i] > max ? x[i] : max;
    double sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
        x[i] = std::exp(x[i] - max);
        sum += x[i];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (std::int64_t i = 0; i < n; ++i) x[i] *= inv;
}

// out[i] = Scalar(silu(gate[i]) * up[i]), silu(g) = g / (1 + exp(-g)).
template <class Out>
inline void swiglu(const float* gate, const float* up, std::int64_t n, Out* out) noexcept {
    for (std::int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        out[i] = static_cast<Out>(g / (1.0f + std::exp(-g)) * up[i]);
    }
}

// out[i] = Scalar(gelu(x[i])) with GPT-2's tanh approximation:
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
template <class Out>
inline void gelu_tanh(const float* x, std::int64_t n, Out* out) noexcept {
    constexpr float sqrt_2_over_pi = 0.7978845608028654f;
    for (std::int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        out[i] = static_cast<Out>(0.5f * v * (1.0f + std::tanh(sqrt_2_over_pi * (v + 0.044715f * v * v * v))));
    }
}

}  // namespace nexttok

// Element-wise and per-vector operations of the decoder: RMSNorm, RoPE, softmax, SwiGLU.
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

}  // namespace nexttok

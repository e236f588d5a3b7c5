// Quantization of float rows to the formats nexttok can also write, following ggml's reference
// rounding (quantize_row_q8_0_ref, quantize_row_q4_0_ref) so that files we write quantize as
// llama.cpp's would. For tests and a GGUF writer; not used in the token loop.
//
//   q8_0: d = amax / 127, q = round-half-away-from-zero(x / d)          (|q| <= 127)
//   q4_0: d = max / -8, where max is the element of largest magnitude (the first one on a tie),
//         q = min(15, trunc(x / d + 8.5)): round half up, then clamp; the stored nibble is q and
//         the value (q - 8) * d, so max itself maps to -8 exactly and the top half step (x / d in
//         (7.5, 8]) is clamped to 7.
// Both use 1 / d in float for x / d and store d rounded to half precision (nearest even).
// Non-finite inputs give unspecified quants, never undefined behaviour.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace nexttok {

namespace detail {

inline void check_quantize_length(std::int64_t n, int block_size, const char* what) {
    if (n < 0 || n % block_size != 0)
        throw invalid_argument_error(std::string(what) + ": row length " + std::to_string(n) +
                                     " is not a multiple of the block size " + std::to_string(block_size));
}

// v, stored and reloaded so that no compiler fuses the rounding of v with a following addition
// (GCC contracts a * b + c into an FMA by default, across statements and casts).
inline float rounded(float v) noexcept {
    volatile float r = v;
    return r;
}

// Converts a float known to lie in [lo, hi] when finite; NaN becomes 0.
inline int clamp_to_int(float v, int lo, int hi) noexcept {
    if (!(v >= static_cast<float>(lo))) return v != v ? 0 : lo;
    if (v >= static_cast<float>(hi)) return hi;
    return static_cast<int>(v);  // truncates toward zero
}

}  // namespace detail

// y[0, n / 32) = x[0, n) quantized to q8_0. Throws invalid_argument_error unless n % 32 == 0.
inline void quantize_row_q8_0(const float* x, block_q8_0* y, std::int64_t n) {
    detail::check_quantize_length(n, block_q8_0::block_size, "quantize_row_q8_0");
    for (std::int64_t b = 0; b < n / 32; ++b, x += 32) {
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = packed_half::from_float(d);
        for (int j = 0; j < 32; ++j)
            y[b].qs[j] = static_cast<std::int8_t>(detail::clamp_to_int(std::round(x[j] * id), -127, 127));
    }
}

// y[0, n / 32) = x[0, n) quantized to q4_0. Throws invalid_argument_error unless n % 32 == 0.
inline void quantize_row_q4_0(const float* x, block_q4_0* y, std::int64_t n) {
    detail::check_quantize_length(n, block_q4_0::block_size, "quantize_row_q4_0");
    for (std::int64_t b = 0; b < n / 32; ++b, x += 32) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < 32; ++j) {
            if (amax < std::fabs(x[j])) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = packed_half::from_float(d);
        // x * id is rounded to float before 8.5 is added, as ggml's reference is written.
        auto scaled = [&](int j) {
            return detail::rounded(x[j] * id) + 8.5f;
        };
        for (int j = 0; j < 16; ++j) {
            const int q0 = detail::clamp_to_int(scaled(j), 0, 15);
            const int q1 = detail::clamp_to_int(scaled(j + 16), 0, 15);
            y[b].qs[j] = static_cast<std::uint8_t>(q0 | (q1 << 4));
        }
    }
}

}  // namespace nexttok

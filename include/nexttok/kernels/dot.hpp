// Dot products of a row of weights (or cache) with activation vectors, accumulated in float.
// Rows of float, Eigen::half or Eigen::bfloat16 are here; rows of quantized blocks in
// quant_dot.hpp, under the same name and contract.
//
// Determinism: the order of every addition depends only on n and on the SIMD backend chosen at
// compile time, never on how many vectors are processed together (nt), on the thread, or on the
// batch. So a row multiplied by one token (decode) and by a tile of tokens (prefill) gives
// bitwise the same result, and so do 1 and N threads.
#pragma once

#include <nexttok/kernels/detail/simd.hpp>
#include <nexttok/kernels/quant_dot.hpp>

#include <Eigen/Core>

#include <concepts>
#include <cstdint>

namespace nexttok {

// A type of one element of a dense vector: weights, activations and cache entries.
template <class T>
concept dense_element = std::same_as<T, float> || std::same_as<T, Eigen::half> || std::same_as<T, Eigen::bfloat16>;

// out[t] = sum_i w[i] * x[t][i] for t < NT. W and X are float, Eigen::half or Eigen::bfloat16.
template <int NT, dense_element W, class X>
inline void dot_tile(const W* w, const X* const* x, std::int64_t n, float* out) noexcept {
    namespace s = detail::simd;
    constexpr int A = s::accumulators;
    constexpr std::int64_t step = static_cast<std::int64_t>(A) * s::width;
    s::vec acc[NT][A];
    for (int t = 0; t < NT; ++t)
        for (int a = 0; a < A; ++a) acc[t][a] = s::zero();
    std::int64_t i = 0;
    for (; i + step <= n; i += step) {
        for (int a = 0; a < A; ++a) {
            const s::vec wv = s::load(w + i + a * s::width);
            for (int t = 0; t < NT; ++t) acc[t][a] = s::fmadd(wv, s::load(x[t] + i + a * s::width), acc[t][a]);
        }
    }
    for (; i + s::width <= n; i += s::width) {
        const s::vec wv = s::load(w + i);
        for (int t = 0; t < NT; ++t) acc[t][0] = s::fmadd(wv, s::load(x[t] + i), acc[t][0]);
    }
    for (int t = 0; t < NT; ++t) {
        s::vec sum = acc[t][0];
        for (int a = 1; a < A; ++a) sum = s::add(sum, acc[t][a]);
        float total = s::reduce(sum);
        for (std::int64_t j = i; j < n; ++j) total += s::to_float(w[j]) * s::to_float(x[t][j]);
        out[t] = total;
    }
}

// W may also be a quantized block (quant_dot.hpp).
template <class W, class X>
inline float dot(const W* w, const X* x, std::int64_t n) noexcept {
    float out;
    const X* xs[1] = {x};
    dot_tile<1>(w, xs, n, &out);
    return out;
}

// y[i] += a * x[i], with x converted to float.
template <class X>
inline void axpy(float a, const X* x, float* y, std::int64_t n) noexcept {
    for (std::int64_t i = 0; i < n; ++i) y[i] += a * detail::simd::to_float(x[i]);
}

}  // namespace nexttok

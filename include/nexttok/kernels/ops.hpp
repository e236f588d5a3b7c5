// Element-wise and per-vector operations of the decoder: RMSNorm, LayerNorm, RoPE (adjacent
// and NeoX pairing), softmax, SwiGLU and GELU (the last three with the SIMD exponential).
// Everything computes in float (sums of squares in double); outputs may be stored in any Scalar.
#if !defined(NEXTTOK_KERNEL_PASS)
#include <nexttok/kernels/detail/passes.hpp>
#else

#include <nexttok/model/rope_scaling.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace nexttok::NEXTTOK_KERNEL_PASS {

namespace kernel_detail {

// The sum of term(i) for i < n in double, as N partial sums of the indexes i % N added in a fixed
// pairwise tree: it vectorizes, and gives one result for every thread count and batch.
template <int N, class F>
inline double fixed_order_sum(std::int64_t n, F&& term) noexcept {
    double part[N] = {};
    std::int64_t j = 0;
    for (; j + N <= n; j += N)
        for (int k = 0; k < N; ++k) part[k] += term(j + k);
    for (int k = 0; k < N; ++k)
        if (j + k < n) part[k] += term(j + k);
    for (int w = N / 2; w >= 1; w /= 2)
        for (int k = 0; k < w; ++k) part[k] = part[2 * k] + part[2 * k + 1];
    return part[0];
}

}  // namespace kernel_detail

// out[i] = Scalar(x[i] / rms(x) * weight[i]), rms(x) = sqrt(mean(x^2) + eps), the sum of squares
// in double (kernel_detail::fixed_order_sum, 8 partial sums).
template <class Out>
inline void rms_norm(const float* x, const float* weight, std::int64_t n, float eps, Out* out) noexcept {
    const double ss =
        kernel_detail::fixed_order_sum<8>(n, [x](std::int64_t i) { return static_cast<double>(x[i]) * x[i]; });
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

// cos_sin[2i], cos_sin[2i+1] = magnitude * cos, magnitude * sin of pos * freqs[i] for i < n_pairs,
// computed in double. freqs are per-pair angular frequencies after any RoPE scaling (see
// model/rope_scaling.hpp); magnitude is YaRN's factor on q and k (1 otherwise). The angle is linear
// in pos, so rotations compose: the table of a position delta (magnitude 1) moves a rotated key.
inline void rope_table(std::int64_t pos, const double* freqs, std::int64_t n_pairs, double magnitude,
                       float* cos_sin) noexcept {
    for (std::int64_t i = 0; i < n_pairs; ++i) {
        const double angle = static_cast<double>(pos) * freqs[i];
        cos_sin[2 * i] = static_cast<float>(magnitude * std::cos(angle));
        cos_sin[2 * i + 1] = static_cast<float>(magnitude * std::sin(angle));
    }
}

// cos_sin[2i], cos_sin[2i+1] = cos, sin of pos * theta^(-2i/rope_dim) (rope_frequency, in
// model/rope_scaling.hpp), computed in double (unscaled RoPE).
inline void rope_table(std::int64_t pos, std::int64_t rope_dim, float theta, float* cos_sin) noexcept {
    for (std::int64_t i = 0; i < rope_dim / 2; ++i) {
        const double angle = static_cast<double>(pos) * rope_frequency(i, rope_dim, theta);
        cos_sin[2 * i] = static_cast<float>(std::cos(angle));
        cos_sin[2 * i + 1] = static_cast<float>(std::sin(angle));
    }
}

namespace kernel_detail {

// For i in [0, n) by SIMD vectors: out[i] = Out(f(a[i], b[i])), f taking and returning simd::vec.
// The last partial vector goes through a zero-padded copy, so every element takes the same
// instructions whatever its position (and results do not depend on n).
template <class Out, class F>
inline void map_vectors(const float* a, const float* b, std::int64_t n, Out* out, F&& f) noexcept {
    namespace s = simd;
    // (The tails count k up to the vector width: a loop up to n - i made GCC warn, with n known.)
    auto put = [](Out* o, s::vec v, std::int64_t count) {
        alignas(64) float tmp[s::width];
        s::store(tmp, v);
        for (int k = 0; k < s::width; ++k)
            if (k < count) o[k] = static_cast<Out>(tmp[k]);
    };
    std::int64_t i = 0;
    for (; i + s::width <= n; i += s::width) {
        const s::vec v = f(s::load(a + i), s::load(b + i));
        if constexpr (std::is_same_v<Out, float>)
            s::store(out + i, v);
        else
            put(out + i, v, s::width);
    }
    if (i < n) {
        alignas(64) float ta[s::width] = {}, tb[s::width] = {};
        for (int k = 0; k < s::width; ++k)
            if (i + k < n) ta[k] = a[i + k], tb[k] = b[i + k];
        put(out + i, f(s::load(ta), s::load(tb)), n - i);
    }
}

}  // namespace kernel_detail

// In place: x = exp(x - max) / sum (exp: simd::exp, within 2 ulp; the sum in double,
// kernel_detail::fixed_order_sum with 4 partial sums). n >= 1.
inline void softmax(float* x, std::int64_t n) noexcept {
    namespace s = kernel_detail::simd;
    float mx[8];  // partial maxima (max is exact in any order)
    for (int k = 0; k < 8; ++k) mx[k] = x[0];
    std::int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; ++k) mx[k] = x[j + k] > mx[k] ? x[j + k] : mx[k];
    for (int k = 0; k < 8; ++k)
        if (j + k < n) mx[k] = x[j + k] > mx[k] ? x[j + k] : mx[k];
    float max = mx[0];
    for (int k = 1; k < 8; ++k) max = mx[k] > max ? mx[k] : max;
    const s::vec m = s::set1(max);
    kernel_detail::map_vectors(x, x, n, x, [m](s::vec v, s::vec) { return s::exp(s::sub(v, m)); });
    const double sum = kernel_detail::fixed_order_sum<4>(n, [x](std::int64_t i) { return static_cast<double>(x[i]); });
    const s::vec inv = s::set1(static_cast<float>(1.0 / sum));
    kernel_detail::map_vectors(x, x, n, x, [inv](s::vec v, s::vec) { return s::mul(v, inv); });
}

// out[i] = Scalar(silu(gate[i]) * up[i]), silu(g) = g / (1 + exp(-g)).
template <class Out>
inline void swiglu(const float* gate, const float* up, std::int64_t n, Out* out) noexcept {
    namespace s = kernel_detail::simd;
    const s::vec one = s::set1(1.0f);
    kernel_detail::map_vectors(gate, up, n, out, [one](s::vec g, s::vec u) {
        return s::mul(s::div(g, s::add(one, s::exp(s::sub(s::zero(), g)))), u);
    });
}

// out[i] = Scalar(gelu(x[i])) with GPT-2's tanh approximation:
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), tanh(y) = 1 - 2 / (exp(2y) + 1).
template <class Out>
inline void gelu_tanh(const float* x, std::int64_t n, Out* out) noexcept {
    namespace s = kernel_detail::simd;
    const s::vec one = s::set1(1.0f), two = s::set1(2.0f), half = s::set1(0.5f);
    const s::vec c = s::set1(0.7978845608028654f), c3 = s::set1(0.044715f);
    kernel_detail::map_vectors(x, x, n, out, [=](s::vec v, s::vec) {
        const s::vec y = s::mul(c, s::fmadd(s::mul(c3, v), s::mul(v, v), v));
        const s::vec t = s::sub(one, s::div(two, s::add(s::exp(s::mul(two, y)), one)));
        return s::mul(s::mul(half, v), s::add(one, t));
    });
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS

#endif  // NEXTTOK_KERNEL_PASS

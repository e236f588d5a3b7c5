// f32, f16 and bf16 weights (the float kernels, dot.hpp) and the exponential of SwiGLU and GELU
// (simd::exp) on this program's kernel path, bitwise against scalar references of the documented
// orders written here: a dot product keeps 16 lanes, lane j taking elements 16 k + j by fused
// multiply-adds in ascending k, reduced by the fixed tree, then the columns past the last whole 16
// by fused multiply-adds in ascending order; e^x is the clamp, x = n ln 2 + r and the degree-7
// polynomial of detail/simd.hpp. The AVX-512 path holds the 16 lanes in one register, the AVX2
// path in two, the portable path computes them one by one: every path must give these bits, with
// 1 and 2 threads and any split of the tokens into calls (prefill = decode).
#include "kernel_path.hpp"

#include <nexttok/kernels/matmul.hpp>
#include <nexttok/kernels/ops.hpp>

#include <Eigen/Core>
#include <gtest/gtest.h>

#if defined(__AVX512BF16__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace nexttok {
namespace {

// x rounded to bfloat16 as vcvtneps2bf16 does, written from its definition: a subnormal becomes a
// zero of its sign, NaN a quiet NaN, the rest rounds to nearest, ties to the even word (by the
// float arithmetic of the two neighbours, not by the library's bit trick).
std::uint16_t rounded_bf16_bits(float x) {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
    if (std::isnan(x)) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
    if (std::fpclassify(x) == FP_SUBNORMAL) return static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const auto lo = static_cast<std::uint16_t>(u >> 16);
    const auto as_float = [](std::uint32_t word) {
        return std::bit_cast<float>(word << 16);
    };
    if (as_float(lo) == x) return lo;
    // The next word away from zero: infinity past the largest bfloat16, rounded to as if it were 2^128.
    const auto hi = static_cast<std::uint16_t>(lo + 1);
    const double hi_value = std::isinf(as_float(hi)) ? std::copysign(0x1p128, x) : as_float(hi);
    const double below = std::fabs(static_cast<double>(x) - as_float(lo)), above = std::fabs(hi_value - x);
    if (below != above) return below < above ? lo : hi;
    return (lo & 1u) ? hi : lo;
}

// The documented dot product of n elements.
template <class W>
float dot_reference(const W* w, const float* x, std::int64_t n) {
    float lanes[16] = {};
    const std::int64_t whole = n / 16 * 16;
    for (std::int64_t i = 0; i < whole; ++i) lanes[i % 16] = std::fma(static_cast<float>(w[i]), x[i], lanes[i % 16]);
    float total = test::reduce16_tree(lanes);
    for (std::int64_t i = whole; i < n; ++i) total = std::fma(static_cast<float>(w[i]), x[i], total);
    return total;
}

// bfloat16 weights (dot.hpp, bf16_block_range): the activations rounded to bfloat16, lane j taking
// columns 32 k + 2 j + 1, then 32 k + 2 j, of each step k of 32 by fused multiply-adds (vdpbf16ps's
// order), reduced by the same tree, then the columns past the last whole 32 in ascending order.
float dot_reference(const Eigen::bfloat16* w, const float* x, std::int64_t n) {
    const auto rounded = [&](std::int64_t i) {
        return std::bit_cast<float>(static_cast<std::uint32_t>(rounded_bf16_bits(x[i])) << 16);
    };
    float lanes[16] = {};
    const std::int64_t whole = n / 32 * 32;
    for (std::int64_t k = 0; k < whole; k += 32)
        for (std::int64_t j = 0; j < 16; ++j) {
            lanes[j] = std::fma(static_cast<float>(w[k + 2 * j + 1]), rounded(k + 2 * j + 1), lanes[j]);
            lanes[j] = std::fma(static_cast<float>(w[k + 2 * j]), rounded(k + 2 * j), lanes[j]);
        }
    float total = test::reduce16_tree(lanes);
    for (std::int64_t i = whole; i < n; ++i) total = std::fma(static_cast<float>(w[i]), rounded(i), total);
    return total;
}

template <class W>
struct float_weights {
    static constexpr tensor_type type = std::is_same_v<W, float>         ? tensor_type::f32
                                        : std::is_same_v<W, Eigen::half> ? tensor_type::f16
                                                                         : tensor_type::bf16;
};

template <class W>
class float_paths : public ::testing::Test {};

using float_types = ::testing::Types<float, Eigen::half, Eigen::bfloat16>;
TYPED_TEST_SUITE(float_paths, float_types);

template <class W>
void expect_documented_order(std::int64_t rows, std::int64_t cols, std::int64_t n) {
    std::mt19937_64 rng(11);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<W> weights(static_cast<std::size_t>(rows * cols));
    for (auto& v : weights) v = static_cast<W>(dist(rng));
    const std::vector<float> x = test::activations(n, cols, 12);
    tensor_view w;
    w.name = "w";
    w.type = float_weights<W>::type;
    w.n_dims = 2;
    w.ne = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows), 1, 1};
    w.data = reinterpret_cast<const std::byte*>(weights.data());
    w.n_bytes = weights.size() * sizeof(W);
    test::expect_matmul_bitwise(w, x, n, [&](std::int64_t r, std::int64_t t) {
        return dot_reference(weights.data() + r * cols, x.data() + t * cols, cols);
    });
}

// 37 rows (not a whole tile), 1064 columns (whole ranges of 512 packed columns, a partial one and
// a tail of 8 past the last 16), 20 tokens (more than the in-place limit of dense matmul).
TYPED_TEST(float_paths, matmul_matches_the_documented_order) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    expect_documented_order<TypeParam>(37, 1064, 20);
}

// Whole steps of 16 columns, an odd number of them (65), with 101 rows (tasks of 48, 48 and 5) and
// 53 tokens (tiles of 8 and 5): on Intel CPUs with AVX-512, the outer-product prefill of all three
// (kernels/detail/outer_prefill_avx512.hpp); 17 tokens, one past the in-place limit.
TYPED_TEST(float_paths, whole_steps_match_the_documented_order) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    expect_documented_order<TypeParam>(101, 1040, 53);
    expect_documented_order<TypeParam>(37, 1024, 17);
}

// Floats that exercise the rounding to bfloat16: exact words, ties to even both ways, the largest
// finite floats (to infinity), subnormals, zeros, infinities, NaN, and random values of any exponent.
std::vector<float> bf16_rounding_cases() {
    std::vector<float> v{1.0f,
                         -1.0f,
                         0.0f,
                         -0.0f,
                         std::bit_cast<float>(0x3f808000u),
                         std::bit_cast<float>(0x3f818000u),
                         std::bit_cast<float>(0x3f808001u),
                         std::bit_cast<float>(0xbf817fffu),
                         std::bit_cast<float>(0x7f7f7fffu),
                         std::bit_cast<float>(0x7f7f8000u),
                         std::numeric_limits<float>::max(),
                         -std::numeric_limits<float>::max(),
                         std::numeric_limits<float>::denorm_min(),
                         -1e-39f,
                         std::numeric_limits<float>::min(),
                         std::bit_cast<float>(0x007fffffu),
                         std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::quiet_NaN()};
    std::mt19937_64 rng(17);
    for (int i = 0; i < 20000; ++i) v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
    return v;
}

TEST(float_paths, bf16_rounding_matches_its_definition) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    for (const float x : bf16_rounding_cases()) {
        const std::uint16_t want = rounded_bf16_bits(x), got = round_to_bf16(x).bits;
        if (std::isnan(x))
            EXPECT_TRUE((got & 0x7f80u) == 0x7f80u && (got & 0x7fu) != 0) << std::hex << got;
        else
            EXPECT_EQ(got, want) << "x = " << x << " (bits " << std::hex << std::bit_cast<std::uint32_t>(x) << ")";
    }
}

#if defined(__AVX512BF16__)
// The instructions themselves, where this program has them: vcvtne2ps2bf16 rounds as round_to_bf16,
// and vdpbf16ps adds as bf16_block_range's documented order (checked above through matmul) on the
// values models have: the odd product, then the even one, each rounded once.
TEST(float_paths, avx512bf16_instructions_match_the_documented_rounding_and_order) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    const std::vector<float> cases = bf16_rounding_cases();
    for (std::size_t i = 0; i + 32 <= cases.size(); i += 32) {
        const __m512bh r = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(&cases[i + 16]), _mm512_loadu_ps(&cases[i]));
        std::uint16_t words[32];
        std::memcpy(words, &r, sizeof words);
        for (int k = 0; k < 32; ++k) {
            if (!std::isnan(cases[i + k])) {
                EXPECT_EQ(words[k], round_to_bf16(cases[i + k]).bits) << cases[i + k];
            }
        }
    }
    std::mt19937_64 rng(19);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::uniform_int_distribution<int> exponent(-30, 30);
    for (int round = 0; round < 2000; ++round) {
        std::uint16_t w[32], x[32];
        float acc[16], out[16];
        for (int k = 0; k < 32; ++k) {
            w[k] = round_to_bf16(std::ldexp(dist(rng), exponent(rng))).bits;
            x[k] = round_to_bf16(std::ldexp(dist(rng), exponent(rng))).bits;
        }
        for (float& a : acc) a = std::ldexp(dist(rng), exponent(rng));
        __m512i wv, xv;
        std::memcpy(&wv, w, 64);
        std::memcpy(&xv, x, 64);
        _mm512_storeu_ps(out, _mm512_dpbf16_ps(_mm512_loadu_ps(acc), reinterpret_cast<__m512bh>(wv),
                                               reinterpret_cast<__m512bh>(xv)));
        const auto f = [](std::uint16_t b) {
            return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
        };
        for (int j = 0; j < 16; ++j) {
            float want = std::fma(f(w[2 * j + 1]), f(x[2 * j + 1]), acc[j]);
            want = std::fma(f(w[2 * j]), f(x[2 * j]), want);
            EXPECT_EQ(std::bit_cast<std::uint32_t>(out[j]), std::bit_cast<std::uint32_t>(want)) << "lane " << j;
        }
    }
}

// Prefill's two ways with bfloat16 weights (matmul.hpp, pack_tiles): operands packed as words for
// vdpbf16ps, or as floats for two FMAs per pair. This CPU's choice (bf16_dot_in_prefill) is the one
// the matmul test above checks; here both give the same accumulators, bitwise, over two ranges of
// columns, on values of any exponent.
TEST(float_paths, bf16_prefill_by_vdpbf16ps_matches_two_fmas) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    using namespace kernel_detail;
    constexpr int R = packed_tile_rows, T = packed_tile_tokens;
    constexpr std::int64_t cols = 2 * packed_range_steps * bf16_step, ld = T * acc_slot;
    std::mt19937_64 rng(23);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::uniform_int_distribution<int> exponent(-20, 20);
    std::vector<Eigen::bfloat16> w(static_cast<std::size_t>(R * cols));
    std::vector<bf16_act> x(static_cast<std::size_t>(T * cols));
    for (auto& v : w) v = Eigen::bfloat16(std::ldexp(dist(rng), exponent(rng)));
    for (auto& v : x) v = round_to_bf16(std::ldexp(dist(rng), exponent(rng)));
    const auto accumulators = [&](bool words) {
        const std::int64_t steps = words ? cols / bf16_step : cols / dot_step;
        std::vector<float> pw(static_cast<std::size_t>(steps * R * 16)), px(static_cast<std::size_t>(steps * T * 16));
        pack_tiles<Eigen::bfloat16, true>(w.data(), cols, R, steps, R, true, pw.data(), R, 0, words);
        pack_tiles<bf16_act, true>(x.data(), cols, T, steps, T, false, px.data(), T, 0, words);
        std::vector<float> acc(static_cast<std::size_t>(R * ld));
        for (std::int64_t k0 = 0; k0 < steps; k0 += packed_range_steps) {
            const std::int64_t k1 = std::min(steps, k0 + packed_range_steps);
            const float* wp = pw.data() + packed_tile_offset(k0, k1, R, 0);
            const float* xp = px.data() + packed_tile_offset(k0, k1, T, 0);
            if (words)
                packed_bf16_block_range_dp<R, T>(wp, xp, k1 - k0, acc.data(), ld, k0 == 0);
            else
                packed_block_range<R, T>(wp, xp, k1 - k0, acc.data(), ld, k0 == 0);
        }
        return acc;
    };
    const std::vector<float> by_words = accumulators(true), by_floats = accumulators(false);
    ASSERT_EQ(by_words.size(), by_floats.size());
    for (std::size_t i = 0; i < by_words.size(); ++i)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(by_words[i]), std::bit_cast<std::uint32_t>(by_floats[i]))
            << "float " << i;
}
#endif

// e^x as detail/simd.hpp documents it: x clamped to [-104, 89] (NaN stays NaN), n = x / ln 2 rounded
// to the nearest integer (ties to even), r = x - n ln 2 with ln 2 in two parts, the polynomial by
// fused multiply-adds, times 2^n (rounded once).
float exp_reference(float x) {
    const float low = -104.0f > x ? -104.0f : x;
    x = 89.0f < low ? 89.0f : low;
    const float n = std::nearbyint(x * 1.44269504088896341f);
    float r = std::fma(n, -0.693359375f, x);
    r = std::fma(n, 2.12194440e-4f, r);
    float p = 1.9875691500e-4f;
    p = std::fma(p, r, 1.3981999507e-3f);
    p = std::fma(p, r, 8.3334519073e-3f);
    p = std::fma(p, r, 4.1665795894e-2f);
    p = std::fma(p, r, 1.6666665459e-1f);
    p = std::fma(p, r, 5.0000001201e-1f);
    const float r2 = r * r, r1 = r + 1.0f;
    p = std::fma(p, r2, r1);
    return std::isnan(n) ? n : std::ldexp(p, static_cast<int>(n));
}

// Arguments over the whole range of the exponential and past it: both clamps, results that are
// subnormal or overflow, ties of the rounding, zeros, infinities and NaN; n not a multiple of 8.
std::vector<float> exp_arguments() {
    std::vector<float> v{0.0f,
                         -0.0f,
                         88.7f,
                         89.0f,
                         90.0f,
                         -87.0f,
                         -100.0f,
                         -103.9f,
                         -104.0f,
                         -120.0f,
                         0.34657359f,
                         1.0397208f,
                         std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::quiet_NaN()};
    std::mt19937_64 rng(13);
    std::uniform_real_distribution<float> wide(-110.0f, 95.0f), narrow(-4.0f, 4.0f);
    for (int i = 0; i < 300; ++i) v.push_back(i % 2 ? wide(rng) : narrow(rng));
    return v;
}

// Bitwise equal, or both NaN (whose payload the instructions do not define alike).
bool same_bits(float a, float b) {
    return std::isnan(a) ? std::isnan(b) : std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

TEST(float_paths, swiglu_and_gelu_match_the_documented_exponential) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    const std::vector<float> g = exp_arguments();
    std::vector<float> u(g.size());
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = 0.5f + static_cast<float>(i % 7);
    const auto n = static_cast<std::int64_t>(g.size());
    std::vector<float> silu(g.size()), gelu(g.size());
    swiglu(g.data(), u.data(), n, silu.data());
    gelu_tanh(g.data(), n, gelu.data());
    for (std::size_t i = 0; i < g.size(); ++i) {
        const float want_silu = (g[i] / (1.0f + exp_reference(0.0f - g[i]))) * u[i];
        const float y = 0.7978845608028654f * std::fma(0.044715f * g[i], g[i] * g[i], g[i]);
        const float t = 1.0f - 2.0f / (exp_reference(2.0f * y) + 1.0f);
        const float want_gelu = (0.5f * g[i]) * (1.0f + t);
        EXPECT_TRUE(same_bits(silu[i], want_silu)) << test::kernel_path() << " path: swiglu(" << g[i] << ", " << u[i]
                                                   << ") = " << silu[i] << ", reference " << want_silu;
        EXPECT_TRUE(same_bits(gelu[i], want_gelu))
            << test::kernel_path() << " path: gelu(" << g[i] << ") = " << gelu[i] << ", reference " << want_gelu;
    }
}

}  // namespace
}  // namespace nexttok

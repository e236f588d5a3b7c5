// The attention products (attention.hpp) over rows in float, half and bfloat16. Oracles:
// dot_rows gives, bitwise, dot() of each row times the scale (so its sixteen-at-once reduction
// adds the same pairs as the one-row reduction); weighted_rows is within a few float roundings
// of the sum in double, and each head's output is bitwise the same computed alone or with others,
// or over the positions in several ranges (weighted_rows_range).
// Over rows of q8_0 blocks (q8_0_row, a q8_0 KV cache), both give bitwise what they give over the
// same rows dequantized to float (d * q) first, but for the few scalar terms past the last whole
// vector (within rounding there: the compiler may fuse a multiply and an add or not).
#include <nexttok/kernels/attention.hpp>
#include <nexttok/kernels/dot.hpp>
#include <nexttok/kernels/q8_0_rows.hpp>
#include <nexttok/tensor/quantize.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace nexttok {
namespace {

// count rows of n values (normal, spread over several magnitudes so that the order of additions
// shows in the last bits), at a row stride of n + 3 so that rows are not aligned.
template <class T>
std::vector<T> random_rows(std::int64_t count, std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<T> rows(static_cast<std::size_t>(count * (n + 3)));
    for (auto& v : rows) v = static_cast<T>(dist(rng) * std::exp2(static_cast<float>(rng() % 12) - 6.0f));
    return rows;
}

template <class T>
void check_dot_rows(std::int64_t n) {
    const std::int64_t count = 53, queries = 3, ldo = 60;  // three blocks of sixteen rows and five single ones
    const std::vector<T> rows = random_rows<T>(count, n, 1);
    const std::vector<float> q = random_rows<float>(queries, n, 2);  // query k at k * (n + 3)
    const auto row = [&](std::int64_t t) {
        return rows.data() + t * (n + 3);
    };
    std::vector<float> out(static_cast<std::size_t>(queries * ldo));
    dot_rows(row, count, q.data(), queries, n + 3, n, 0.125f, out.data(), ldo);
    for (std::int64_t k = 0; k < queries; ++k)
        for (std::int64_t t = 0; t < count; ++t) {
            const float want = dot(row(t), q.data() + k * (n + 3), n) * 0.125f;
            ASSERT_EQ(std::bit_cast<std::uint32_t>(out[static_cast<std::size_t>(k * ldo + t)]),
                      std::bit_cast<std::uint32_t>(want))
                << "n " << n << " query " << k << " row " << t;
        }
}

TEST(dot_rows, equals_dot_per_row_bitwise) {
    // 16 and 96 a vector at a time, 64 and 128 as one chunk; 72 and 8: not whole vectors, one row at a time
    for (std::int64_t n : {16, 96, 64, 128, 72, 8}) {
        check_dot_rows<float>(n);
        check_dot_rows<Eigen::half>(n);
        check_dot_rows<Eigen::bfloat16>(n);
    }
}

template <class T>
void check_weighted_rows(std::int64_t n) {
    const std::int64_t count = 37, heads = 6, ldp = 40, ldo = n + 5;
    const std::vector<T> rows = random_rows<T>(count, n, 3);
    std::mt19937_64 rng(4);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::vector<float> p(static_cast<std::size_t>(heads * ldp));
    for (auto& v : p) v = unit(rng);
    const auto row = [&](std::int64_t t) {
        return rows.data() + t * (n + 3);
    };
    std::vector<float> all(static_cast<std::size_t>(heads * ldo)), alone(static_cast<std::size_t>(ldo));
    weighted_rows(p.data(), ldp, heads, row, count, n, all.data(), ldo);
    // The same positions in three ranges (as causal_attention walks them): bitwise the same sums.
    std::vector<float> split(all.size());
    for (const auto& [t0, t1] : {std::pair<std::int64_t, std::int64_t>{0, 5}, {5, 21}, {21, count}})
        weighted_rows_range(p.data(), ldp, heads, row, t0, t1, n, split.data(), ldo);
    for (std::int64_t k = 0; k < heads; ++k)
        for (std::int64_t j = 0; j < n; ++j) {
            const auto at = static_cast<std::size_t>(k * ldo + j);
            ASSERT_EQ(std::bit_cast<std::uint32_t>(split[at]), std::bit_cast<std::uint32_t>(all[at]))
                << "n " << n << " head " << k << " column " << j << " in ranges";
        }
    for (std::int64_t k = 0; k < heads; ++k) {
        weighted_rows(p.data() + k * ldp, ldp, 1, row, count, n, alone.data(), ldo);
        for (std::int64_t j = 0; j < n; ++j) {
            const float got = all[static_cast<std::size_t>(k * ldo + j)];
            ASSERT_EQ(std::bit_cast<std::uint32_t>(got),
                      std::bit_cast<std::uint32_t>(alone[static_cast<std::size_t>(j)]))
                << "n " << n << " head " << k << " column " << j;
            double want = 0.0, scale = 0.0;
            for (std::int64_t t = 0; t < count; ++t) {
                const double term =
                    static_cast<double>(p[static_cast<std::size_t>(k * ldp + t)]) * static_cast<float>(row(t)[j]);
                want += term;
                scale += std::fabs(term);
            }
            // count roundings of at most half an ulp of a partial sum, each below scale
            ASSERT_LE(std::fabs(got - want), static_cast<double>(count) * 0x1p-24 * scale)
                << "n " << n << " head " << k << " column " << j;
        }
    }
}

TEST(weighted_rows, within_float_rounding_of_the_sum_and_the_same_for_any_head_set) {
    for (std::int64_t n : {64, 128, 200, 8}) {  // 200: 12 vectors and 8 scalar columns with AVX-512
        check_weighted_rows<float>(n);
        check_weighted_rows<Eigen::half>(n);
        check_weighted_rows<Eigen::bfloat16>(n);
    }
}

// count rows of `blocks` q8_0 blocks (random_rows quantized), and the same rows dequantized.
struct q8_0_rows_fixture {
    std::int64_t blocks;
    std::vector<block_q8_0> q;
    std::vector<float> f;  // row t at t * blocks * 32

    q8_0_rows_fixture(std::int64_t count, std::int64_t blocks_per_row, std::uint64_t seed)
            : blocks(blocks_per_row),
              q(static_cast<std::size_t>(count * blocks_per_row)),
              f(static_cast<std::size_t>(count * blocks_per_row * 32)) {
        const std::int64_t n = blocks * 32;
        const std::vector<float> x = random_rows<float>(count, n, seed);
        for (std::int64_t t = 0; t < count; ++t) quantize_row_q8_0(x.data() + t * (n + 3), q.data() + t * blocks, n);
        for (std::size_t b = 0; b < q.size(); ++b)
            for (int j = 0; j < 32; ++j) f[b * 32 + j] = static_cast<float>(q[b].qs[j]) * q[b].d.to_float();
    }
    q8_0_row quantized(std::int64_t t, std::int64_t offset) const { return {q.data() + t * blocks, offset}; }
    const float* dequantized(std::int64_t t, std::int64_t offset) const { return f.data() + t * blocks * 32 + offset; }
};

// (offset, n) views of 5-block rows: whole vectors from a block start, from its middle (16), from
// offsets that make vectors straddle two blocks (24, 8), and a scalar-only length.
const std::pair<std::int64_t, std::int64_t> q8_0_views[] = {{0, 64},  {64, 64}, {0, 128}, {16, 128},
                                                            {24, 72}, {8, 8},   {40, 120}};

TEST(q8_0_row, reads_each_value_as_d_times_q) {
    const q8_0_rows_fixture rows(3, 5, 7);
    for (std::int64_t t = 0; t < 3; ++t)
        for (std::int64_t j = 0; j < 160; ++j)
            ASSERT_EQ(std::bit_cast<std::uint32_t>(rows.quantized(t, 0)[j]),
                      std::bit_cast<std::uint32_t>(rows.dequantized(t, 0)[j]))
                << "row " << t << " value " << j;
    float max_error = 0.0f;  // and the quantization is q8_0's: within half a step d / 2 of the input
    const std::vector<float> x = random_rows<float>(3, 160, 7);
    for (std::int64_t t = 0; t < 3; ++t)
        for (std::int64_t j = 0; j < 160; ++j) {
            const float d = rows.q[static_cast<std::size_t>(t * 5 + j / 32)].d.to_float();
            const float err = std::fabs(rows.quantized(t, 0)[j] - x[static_cast<std::size_t>(t * 163 + j)]);
            ASSERT_LE(err, 0.5f * d * 1.01f) << "row " << t << " value " << j;
            max_error = std::max(max_error, err);
        }
    EXPECT_GT(max_error, 0.0f);
}

TEST(dot_rows, over_q8_0_rows_equals_the_dequantized_rows) {
    const std::int64_t count = 37, queries = 3, ldo = 40;
    const q8_0_rows_fixture rows(count, 5, 8);
    const std::vector<float> q = random_rows<float>(queries, 160, 9);  // query k at k * 163
    for (const auto& view : q8_0_views) {
        const std::int64_t offset = view.first, n = view.second;  // named: lambdas capture them
        std::vector<float> got(static_cast<std::size_t>(queries * ldo)), want(got.size());
        dot_rows([&](std::int64_t t) { return rows.quantized(t, offset); }, count, q.data(), queries, 163, n, 0.125f,
                 got.data(), ldo);
        dot_rows([&](std::int64_t t) { return rows.dequantized(t, offset); }, count, q.data(), queries, 163, n, 0.125f,
                 want.data(), ldo);
        for (std::int64_t k = 0; k < queries; ++k)
            for (std::int64_t t = 0; t < count; ++t) {
                const std::size_t i = static_cast<std::size_t>(k * ldo + t);
                const float one = dot(rows.quantized(t, offset), q.data() + k * 163, n) * 0.125f;
                ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(one))
                    << "offset " << offset << " n " << n;
                if (n % dot_step == 0) {
                    ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i]))
                        << "offset " << offset << " n " << n << " query " << k << " row " << t;
                } else {  // the last n % dot_step terms one by one: the compiler may fuse them or not
                    double scale = 0.0;
                    for (std::int64_t j = 0; j < n; ++j)
                        scale += std::fabs(static_cast<double>(rows.dequantized(t, offset)[j]) *
                                           q[static_cast<std::size_t>(k * 163 + j)]);
                    ASSERT_LE(std::fabs(got[i] - want[i]), static_cast<double>(n) * 0x1p-24 * scale * 0.125)
                        << "offset " << offset << " n " << n << " query " << k << " row " << t;
                }
            }
    }
}

TEST(weighted_rows, over_q8_0_rows_equals_the_dequantized_rows) {
    const std::int64_t count = 29, heads = 5, ldp = 32, ldo = 130;
    const q8_0_rows_fixture rows(count, 5, 10);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::vector<float> p(static_cast<std::size_t>(heads * ldp));
    for (auto& v : p) v = unit(rng);
    for (const auto& view : q8_0_views) {
        const std::int64_t offset = view.first, n = view.second;  // named: lambdas capture them
        std::vector<float> got(static_cast<std::size_t>(heads * ldo)), want(got.size());
        weighted_rows(
            p.data(), ldp, heads, [&](std::int64_t t) { return rows.quantized(t, offset); }, count, n, got.data(), ldo);
        weighted_rows(
            p.data(), ldp, heads, [&](std::int64_t t) { return rows.dequantized(t, offset); }, count, n, want.data(),
            ldo);
        const std::int64_t vector_cols = n / kernel_detail::simd::width * kernel_detail::simd::width;
        for (std::int64_t k = 0; k < heads; ++k)
            for (std::int64_t j = 0; j < n; ++j) {
                const std::size_t i = static_cast<std::size_t>(k * ldo + j);
                if (j < vector_cols) {
                    ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i]))
                        << "offset " << offset << " n " << n << " head " << k << " column " << j;
                } else {  // scalar columns: the compiler may fuse their terms or not
                    double scale = 0.0;
                    for (std::int64_t t = 0; t < count; ++t)
                        scale += std::fabs(static_cast<double>(p[static_cast<std::size_t>(k * ldp + t)]) *
                                           rows.dequantized(t, offset)[j]);
                    ASSERT_LE(std::fabs(got[i] - want[i]), static_cast<double>(count) * 0x1p-24 * scale)
                        << "offset " << offset << " n " << n << " head " << k << " column " << j;
                }
            }
    }
}

}  // namespace
}  // namespace nexttok

// The attention products (attention.hpp) over rows in float, half and bfloat16. Oracles:
// dot_rows gives, bitwise, dot() of each row times the scale (so its sixteen-at-once reduction
// adds the same pairs as the one-row reduction); weighted_rows is within a few float roundings
// of the sum in double, and each head's output is bitwise the same computed alone or with others.
#include <nexttok/kernels/attention.hpp>
#include <nexttok/kernels/dot.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
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
    const auto row = [&](std::int64_t t) { return rows.data() + t * (n + 3); };
    std::vector<float> out(static_cast<std::size_t>(queries * ldo));
    dot_rows(row, count, q.data(), queries, n + 3, n, 0.125f, out.data(), ldo);
    for (std::int64_t k = 0; k < queries; ++k)
        for (std::int64_t t = 0; t < count; ++t) {
            const float want = dot(row(t), q.data() + k * (n + 3), n) * 0.125f;
            ASSERT_EQ(std::bit_cast<std::uint32_t>(out[static_cast<std::size_t>(k * ldo + t)]), std::bit_cast<std::uint32_t>(want))
                << "n " << n << " query " << k << " row " << t;
        }
}

TEST(dot_rows, equals_dot_per_row_bitwise) {
    for (std::int64_t n : {16, 64, 128, 72, 8}) {  // 72 and 8: not whole vectors, one row at a time
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
    const auto row = [&](std::int64_t t) { return rows.data() + t * (n + 3); };
    std::vector<float> all(static_cast<std::size_t>(heads * ldo)), alone(static_cast<std::size_t>(ldo));
    weighted_rows(p.data(), ldp, heads, row, count, n, all.data(), ldo);
    for (std::int64_t k = 0; k < heads; ++k) {
        weighted_rows(p.data() + k * ldp, ldp, 1, row, count, n, alone.data(), ldo);
        for (std::int64_t j = 0; j < n; ++j) {
            const float got = all[static_cast<std::size_t>(k * ldo + j)];
            ASSERT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(alone[static_cast<std::size_t>(j)]))
                << "n " << n << " head " << k << " column " << j;
            double want = 0.0, scale = 0.0;
            for (std::int64_t t = 0; t < count; ++t) {
                const double term = static_cast<double>(p[static_cast<std::size_t>(k * ldp + t)]) * static_cast<float>(row(t)[j]);
                want += term;
                scale += std::fabs(term);
            }
            // count roundings of at most half an ulp of a partial sum, each below scale
            ASSERT_LE(std::fabs(got - want), static_cast<double>(count) * 0x1p-24 * scale) << "n " << n << " head " << k << " column " << j;
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

}  // namespace
}  // namespace nexttok

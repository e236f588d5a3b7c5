// matmul over shapes that exercise every path of the tiling: rows not a multiple of the register
// tile, columns split into several prefill ranges with a tail, more tokens than one prefill group,
// grouped matrices. Oracle: a double-precision dot per output (for q8_0/q4_0/q4_k, of the 8-bit
// activations, see quant_act.hpp); and bitwise equality between 1 and 2 threads, between a prefill
// of n tokens and n single-token calls, and between matmul_group and separate calls.
#include <nexttok/kernels/matmul.hpp>
#include <nexttok/kernels/quant_act.hpp>
#include <nexttok/kernels/thread_pool.hpp>

#include "quant_test_util.hpp"

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace nexttok {
namespace {

// A rows x cols matrix of type W (dense values uniform in +-1, or random blocks) with its view.
template <class W>
struct matrix {
    matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
        if constexpr (quant_block<W>) {
            test::block_source src(seed);
            blocks.resize(static_cast<std::size_t>(rows * cols / W::block_size));
            for (auto& b : blocks) {
                if constexpr (std::is_same_v<W, block_q8_0>)
                    b = src.q8_0();
                else if constexpr (std::is_same_v<W, block_q4_0>)
                    b = src.q4_0();
                else {
                    int sc[8], m[8];
                    b = src.template k_block<W>(sc, m);
                }
            }
            view.data = reinterpret_cast<const std::byte*>(blocks.data());
            view.n_bytes = blocks.size() * sizeof(W);
        } else {
            std::mt19937_64 rng(seed);
            std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
            dense.resize(static_cast<std::size_t>(rows * cols));
            for (auto& v : dense) v = static_cast<W>(dist(rng));
            view.data = reinterpret_cast<const std::byte*>(dense.data());
            view.n_bytes = dense.size() * sizeof(W);
        }
        view.name = std::string("w");  // not = "w": GCC 12 reports a false -Wrestrict
        if constexpr (quant_block<W>)
            view.type = W::type;
        else
            view.type = std::is_same_v<W, float>         ? tensor_type::f32
                        : std::is_same_v<W, Eigen::half> ? tensor_type::f16
                                                         : tensor_type::bf16;
        view.n_dims = 2;
        view.ne = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows), 1, 1};
    }
    // Row r as floats (exact).
    std::vector<float> row(std::int64_t r) const {
        const auto cols = static_cast<std::int64_t>(view.cols());
        std::vector<float> out(static_cast<std::size_t>(cols));
        read_row(view, r, out.data());
        return out;
    }
    std::vector<W> dense;
    std::vector<W> blocks;
    tensor_view view;
};

template <class W, class X>
void check_matmul(std::int64_t rows, std::int64_t cols, std::int64_t n) {
    const matrix<W> w(rows, cols, 11);
    std::mt19937_64 rng(12);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<X> x(static_cast<std::size_t>(n * cols));
    for (auto& v : x) v = static_cast<X>(dist(rng));
    thread_pool one(1), two(2);
    std::vector<float> y1(n * rows), y2(n * rows), y_single(n * rows);
    matmul(w.view, x.data(), cols, n, y1.data(), rows, one);
    matmul(w.view, x.data(), cols, n, y2.data(), rows, two);
    for (std::int64_t t = 0; t < n; ++t)
        matmul(w.view, x.data() + t * cols, cols, 1, y_single.data() + t * rows, rows, two);
    for (std::int64_t r = 0; r < rows; ++r) {
        const std::vector<float> wr = w.row(r);
        for (std::int64_t t = 0; t < n; ++t) {
            const std::size_t i = static_cast<std::size_t>(t * rows + r);
            ASSERT_EQ(std::bit_cast<std::uint32_t>(y1[i]), std::bit_cast<std::uint32_t>(y2[i]))
                << "token " << t << " row " << r;
            ASSERT_EQ(std::bit_cast<std::uint32_t>(y1[i]), std::bit_cast<std::uint32_t>(y_single[i]))
                << "token " << t << " row " << r;
            std::vector<float> xf(static_cast<std::size_t>(cols));
            if constexpr (has_int8_kernel<W>) {
                q8_activations q;
                q.resize(1, cols);
                q.quantize(0, x.data() + t * cols);
                for (std::int64_t j = 0; j < cols; ++j) {
                    const test::q8_value a = test::activation_q8<W>(q.row(0), j);
                    xf[j] = static_cast<float>(a.d * a.q);
                }
            } else {
                for (std::int64_t j = 0; j < cols; ++j) xf[j] = static_cast<float>(x[t * cols + j]);
            }
            double ref = 0.0, scale = 0.0;
            for (std::int64_t j = 0; j < cols; ++j) {
                const double p = static_cast<double>(wr[j]) * xf[j];
                ref += p;
                scale += std::fabs(p);
            }
            ASSERT_LE(std::fabs(y1[i] - ref), 1e-5 * scale) << "token " << t << " row " << r;
        }
    }
}

// 37 rows (tiles of 4 or 8 and single rows), 53 tokens (prefill groups of 6 or 12 and a tail, a tile
// of 6 and tails), 1000 or 1024 columns (two ranges of 512; 1000 leaves a tail of 8 for dense,
// whose packed ranges are then 512 and 480 columns).
TEST(matmul, f32_weights) { check_matmul<float, float>(37, 1000, 53); }
TEST(matmul, f16_weights_half_activations) { check_matmul<Eigen::half, Eigen::half>(37, 1000, 53); }
TEST(matmul, bf16_weights_bfloat16_activations) { check_matmul<Eigen::bfloat16, Eigen::bfloat16>(37, 1000, 53); }
TEST(matmul, f16_weights_float_activations) { check_matmul<Eigen::half, float>(37, 1000, 9); }
// Dense weights and several tokens go by tasks of 48 rows: 101 rows make three tasks (two threads
// take them), the last of 5 rows (a tile of 4 and a single row).
TEST(matmul, f16_weights_three_row_tasks) { check_matmul<Eigen::half, float>(101, 1000, 70); }
// Whole steps of columns (no tail): prefill reduces sixteen rows of a token at once.
TEST(matmul, f16_weights_sixteen_row_reductions) { check_matmul<Eigen::half, float>(101, 1024, 13); }
// Whole steps and more tokens than the in-place limit: on Intel with AVX-512, the outer-product
// prefill (kernels/detail/outer_prefill_avx512.hpp), 48 rows by 8 tokens and the partial tiles of
// both.
TEST(matmul, f16_weights_whole_steps_prefill) { check_matmul<Eigen::half, float>(101, 1040, 53); }
TEST(matmul, f32_weights_whole_steps_prefill) { check_matmul<float, float>(37, 512, 70); }
// 7-16 tokens of dense weights in place (with AVX-512 by wide tiles of 8 and 7 over packed
// activations, kernels/detail/packed_dense.hpp): 15 (8 + 7), 16 (8 + 8) and 7, with a column tail
// and several chunks of 512.
TEST(matmul, wide_dense_tiles) {
    check_matmul<Eigen::half, float>(101, 1000, 15);
    check_matmul<Eigen::half, float>(101, 2080, 16);
    check_matmul<float, float>(37, 1000, 7);
}
// Rows shorter than one step of the vector kernels: all of a row is the tail.
TEST(matmul, rows_shorter_than_one_step) { check_matmul<float, float>(21, 8, 7); }
TEST(matmul, q8_0_weights) { check_matmul<block_q8_0, float>(37, 1024, 53); }
TEST(matmul, q4_0_weights) { check_matmul<block_q4_0, Eigen::half>(37, 1024, 53); }
// 33, 34 and 35 blocks a row: the integer kernels' groups of 4 (q8_0) or 8 (q4_0) blocks end with
// a partial group; for q4_0 also 37 and 39 (partial groups of 5 and 7 blocks, past byte 72).
TEST(matmul, q8_0_weights_partial_block_groups) {
    check_matmul<block_q8_0, float>(37, 1056, 53);
    check_matmul<block_q8_0, float>(37, 1088, 7);
    check_matmul<block_q8_0, float>(37, 1120, 7);
}
TEST(matmul, q4_0_weights_partial_block_groups) {
    check_matmul<block_q4_0, float>(37, 1056, 53);
    check_matmul<block_q4_0, float>(37, 1088, 7);
    check_matmul<block_q4_0, float>(37, 1120, 7);
    check_matmul<block_q4_0, float>(37, 1184, 7);
    check_matmul<block_q4_0, float>(37, 1248, 53);
}
TEST(matmul, q4_k_weights) { check_matmul<block_q4_k, float>(37, 1536, 53); }
// Rows longer than one prefill range of the integer kernels (2048 columns), the second range
// ending in a partial group: the ranges' partial sums must give the decode results bitwise.
TEST(matmul, integer_kernels_over_two_column_ranges) {
    check_matmul<block_q8_0, float>(21, 2048 + 96, 15);   // 64 + 3 blocks
    check_matmul<block_q4_0, float>(21, 2048 + 224, 15);  // 64 + 7 blocks
    check_matmul<block_q4_k, float>(21, 2048 + 512, 15);  // 8 + 2 super-blocks
}

TEST(matmul, group_equals_separate_calls) {
    const matrix<block_q4_0> a(40, 512, 1);
    const matrix<Eigen::half> b(19, 512, 2);
    std::vector<float> x(3 * 512);
    std::mt19937_64 rng(3);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (auto& v : x) v = dist(rng);
    thread_pool pool(2);
    matmul_workspace ws;
    std::vector<float> ya(3 * 40), yb(3 * 19), ga(3 * 40), gb(3 * 19);
    matmul(a.view, x.data(), 512, 3, ya.data(), 40, pool, ws);
    matmul(b.view, x.data(), 512, 3, yb.data(), 19, pool, ws);
    const matmul_target targets[] = {{&a.view, ga.data(), 40}, {&b.view, gb.data(), 19}};
    matmul_group(std::span<const matmul_target>(targets), x.data(), 512, 3, pool, ws);
    EXPECT_EQ(std::memcmp(ya.data(), ga.data(), ya.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(yb.data(), gb.data(), yb.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace nexttok

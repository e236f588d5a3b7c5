// The quantized dot kernels and their dispatch: dot_tile over rows of blocks against a
// double-precision dot of the dequantized row (itself checked against the layout formulas in
// quant_blocks_test), bitwise equality across tile widths (the determinism contract of dot.hpp),
// matmul across thread counts and token counts (with 8-bit activations for q8_0, q4_0, q4_k), read_row, and the errors for unsupported types.
#include <nexttok/error.hpp>
#include <nexttok/kernels/dot.hpp>
#include <nexttok/kernels/matmul.hpp>
#include <nexttok/kernels/quant_act.hpp>
#include <nexttok/kernels/thread_pool.hpp>
#include <nexttok/tensor/weight_types.hpp>

#include "quant_test_util.hpp"

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace nexttok {
namespace {

template <class Block, class X>
struct combo {
    using block = Block;
    using x_type = X;
};

template <class Block>
Block random_block(test::block_source& src) {
    if constexpr (std::is_same_v<Block, block_q8_0>) {
        return src.q8_0();
    } else if constexpr (std::is_same_v<Block, block_q4_0>) {
        return src.q4_0();
    } else if constexpr (std::is_same_v<Block, block_q6_k>) {
        return src.q6_k();
    } else {
        int sc[8], m[8];
        return src.k_block<Block>(sc, m);
    }
}

// A (rows x cols) weight matrix of random blocks, as bytes, with a tensor_view over them.
template <class Block>
struct block_matrix {
    block_matrix(std::int64_t rows, std::int64_t n_blocks, std::uint64_t seed) : blocks(rows * n_blocks) {
        test::block_source src(seed);
        for (auto& b : blocks) b = random_block<Block>(src);
        view.name = "blk.0.ffn_up.weight";
        view.type = Block::type;
        view.n_dims = 2;
        view.ne = {static_cast<std::uint64_t>(n_blocks * Block::block_size), static_cast<std::uint64_t>(rows), 1, 1};
        view.data = reinterpret_cast<const std::byte*>(blocks.data());
        view.n_bytes = blocks.size() * sizeof(Block);
        view.file_offset = 0x1e240;
    }
    const Block* row(std::int64_t r) const { return blocks.data() + r * (view.cols() / Block::block_size); }

    std::vector<Block> blocks;
    tensor_view view;
};

template <class X>
std::vector<X> random_activations(std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<X> x(static_cast<std::size_t>(n));
    for (auto& v : x) v = static_cast<X>(dist(rng));
    return x;
}

// sum_i w_i x_i in double, and sum_i |w_i x_i| (the scale of the rounding errors).
template <class Block, class X>
std::pair<double, double> reference_dot(const Block* w, const X* x, std::int64_t n) {
    std::vector<float> wf(static_cast<std::size_t>(n));
    dequantize_row(w, wf.data(), n);
    double sum = 0.0, abs_sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
        const double p = static_cast<double>(wf[i]) * static_cast<double>(static_cast<float>(x[i]));
        sum += p;
        abs_sum += std::fabs(p);
    }
    return {sum, abs_sum};
}

// As reference_dot with x quantized by quantize_activations: {sum, sum of |products|, bound on
// the difference from the unquantized sum: sum_i |w_i| d_i / 2}.
template <class Block, class X>
std::tuple<double, double, double> reference_dot_q8(const Block* w, const X* x, std::int64_t n) {
    std::vector<float> wf(static_cast<std::size_t>(n));
    dequantize_row(w, wf.data(), n);
    q8_activations xq;
    xq.resize(1, n);
    xq.quantize(0, x);
    const q8_act_row& q = xq.row(0);
    double sum = 0.0, abs_sum = 0.0, bound = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
        const auto [d, qi] = test::activation_q8<Block>(q, i);
        const double p = static_cast<double>(wf[i]) * d * qi;
        sum += p;
        abs_sum += std::fabs(p);
        bound += std::fabs(static_cast<double>(wf[i])) * d * (0.5 + 1e-6);
    }
    return {sum, abs_sum, bound};
}

template <class C>
class quant_dot_test : public ::testing::Test {};

using combos =
    ::testing::Types<combo<block_q8_0, float>, combo<block_q8_0, Eigen::half>, combo<block_q8_0, Eigen::bfloat16>,
                     combo<block_q4_0, float>, combo<block_q4_0, Eigen::half>, combo<block_q4_0, Eigen::bfloat16>,
                     combo<block_q4_k, float>, combo<block_q4_k, Eigen::half>, combo<block_q4_k, Eigen::bfloat16>,
                     combo<block_q5_k, float>, combo<block_q5_k, Eigen::half>, combo<block_q5_k, Eigen::bfloat16>,
                     combo<block_q6_k, float>, combo<block_q6_k, Eigen::half>, combo<block_q6_k, Eigen::bfloat16>>;
TYPED_TEST_SUITE(quant_dot_test, combos);

// Rows of 1, 2, 3 and 5 blocks (odd counts exercise a partial group of blocks), 4 tokens.
TYPED_TEST(quant_dot_test, matches_double_dot_and_is_independent_of_the_tile_width) {
    using Block = typename TypeParam::block;
    using X = typename TypeParam::x_type;
    for (std::int64_t n_blocks : {1, 2, 3, 5}) {
        const std::int64_t n = n_blocks * Block::block_size;
        const block_matrix<Block> w(1, n_blocks, 100 + n_blocks);
        std::vector<std::vector<X>> xs;
        for (int t = 0; t < 4; ++t) xs.push_back(random_activations<X>(n, 200 + 10 * n_blocks + t));
        const X* ptrs[4] = {xs[0].data(), xs[1].data(), xs[2].data(), xs[3].data()};

        float tile4[4], tile3[3], tile2[2];
        dot_tile<4>(w.row(0), ptrs, n, tile4);
        dot_tile<3>(w.row(0), ptrs + 1, n, tile3);
        dot_tile<2>(w.row(0), ptrs + 2, n, tile2);
        for (int t = 0; t < 4; ++t) {
            float one;
            dot_tile<1>(w.row(0), ptrs + t, n, &one);
            const auto [ref, scale] = reference_dot(w.row(0), ptrs[t], n);
            EXPECT_LE(std::fabs(one - ref), 1e-5 * scale)
                << n_blocks << " blocks, token " << t << ": " << one << " vs " << ref;
            EXPECT_EQ(std::bit_cast<std::uint32_t>(one), std::bit_cast<std::uint32_t>(tile4[t]))
                << n_blocks << " blocks, token " << t;
            if (t >= 1) {
                EXPECT_EQ(std::bit_cast<std::uint32_t>(one), std::bit_cast<std::uint32_t>(tile3[t - 1]));
            }
            if (t >= 2) {
                EXPECT_EQ(std::bit_cast<std::uint32_t>(one), std::bit_cast<std::uint32_t>(tile2[t - 2]));
            }
            EXPECT_EQ(std::bit_cast<std::uint32_t>(one), std::bit_cast<std::uint32_t>(dot(w.row(0), ptrs[t], n)));
        }
    }
}

// matmul over 37 rows (several row tasks) and 7 tokens (a tile of 4 plus 3 single tokens) gives
// bitwise the same outputs with 1 and 2 threads and token by token (prefill vs decode).
TYPED_TEST(quant_dot_test, matmul_is_bitwise_independent_of_threads_and_token_count) {
    using Block = typename TypeParam::block;
    using X = typename TypeParam::x_type;
    const std::int64_t rows = 37, n_blocks = 2, cols = n_blocks * Block::block_size, n = 7;
    const block_matrix<Block> w(rows, n_blocks, 300);
    const auto x = random_activations<X>(n * cols, 301);
    thread_pool one(1), two(2);
    std::vector<float> y1(n * rows), y2(n * rows), y_decode(n * rows);
    matmul(w.view, x.data(), cols, n, y1.data(), rows, one);
    matmul(w.view, x.data(), cols, n, y2.data(), rows, two);
    for (std::int64_t t = 0; t < n; ++t)
        matmul(w.view, x.data() + t * cols, cols, 1, y_decode.data() + t * rows, rows, one);
    for (std::int64_t t = 0; t < n; ++t) {
        for (std::int64_t r = 0; r < rows; ++r) {
            const std::size_t i = static_cast<std::size_t>(t * rows + r);
            ASSERT_EQ(std::bit_cast<std::uint32_t>(y1[i]), std::bit_cast<std::uint32_t>(y2[i]))
                << "token " << t << " row " << r;
            ASSERT_EQ(std::bit_cast<std::uint32_t>(y1[i]), std::bit_cast<std::uint32_t>(y_decode[i]))
                << "token " << t << " row " << r;
            const auto [ref, scale] = reference_dot(w.row(r), x.data() + t * cols, cols);
            if constexpr (has_int8_kernel<Block>) {
                // Activations rounded to 8 bits per 32, or per 256 for q4_k with AVX-512
                // (quant_act.hpp): exact against the rounded activations, and within the rounding
                // bound sum |w_i| d_block / 2 of the exact ones.
                const auto [qref, qscale, bound] = reference_dot_q8(w.row(r), x.data() + t * cols, cols);
                ASSERT_LE(std::fabs(y1[i] - qref), 1e-5 * qscale) << "token " << t << " row " << r;
                ASSERT_LE(std::fabs(y1[i] - ref), bound + 1e-5 * scale) << "token " << t << " row " << r;
            } else {
                ASSERT_LE(std::fabs(y1[i] - ref), 1e-5 * scale) << "token " << t << " row " << r;
            }
        }
    }
}

TYPED_TEST(quant_dot_test, read_row_dequantizes_the_row) {
    using Block = typename TypeParam::block;
    const std::int64_t rows = 5, n_blocks = 3, cols = n_blocks * Block::block_size;
    const block_matrix<Block> w(rows, n_blocks, 400);
    for (std::int64_t r = 0; r < rows; ++r) {
        std::vector<float> got(cols), want(cols);
        read_row(w.view, r, got.data());
        dequantize_row(w.row(r), want.data(), cols);
        EXPECT_EQ(got, want) << "row " << r;
    }
}

TEST(weight_types, supported_types_are_exactly_those_dispatched) {
    std::vector<std::byte> zeros(4096);  // room for one row of 256 elements of any type
    std::vector<float> out(256);
    int n_supported = 0;
    for (std::uint32_t id = 0; id < 64; ++id) {
        const auto traits = find_tensor_type_traits(id);
        if (!traits) continue;
        tensor_view v;
        v.name = "t";
        v.type = static_cast<tensor_type>(id);
        v.n_dims = 2;
        v.ne = {256, 1, 1, 1};
        v.data = zeros.data();
        v.n_bytes = 256 / traits->block_size * traits->block_bytes;
        if (supports_weight_type(v.type)) {
            ++n_supported;
            EXPECT_NO_THROW(read_row(v, 0, out.data())) << traits->name;
            for (float f : out) ASSERT_EQ(f, 0.0f) << traits->name;  // all-zero bytes are zeros in every format
        } else {
            EXPECT_THROW(read_row(v, 0, out.data()), unsupported_error) << traits->name;
        }
    }
    EXPECT_EQ(n_supported, 15);  // f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k iq4_nl iq4_xs
}

TEST(weight_types, unsupported_type_error_names_tensor_offset_and_type) {
    std::vector<std::byte> bytes(66 * 2);
    tensor_view v;
    v.name = "blk.3.attn_q.weight";
    v.type = tensor_type::iq2_xxs;
    v.n_dims = 2;
    v.ne = {256, 2, 1, 1};
    v.data = bytes.data();
    v.n_bytes = bytes.size();
    v.file_offset = 0x1e240;
    std::vector<float> x(256), y(2);
    thread_pool pool(1);
    try {
        matmul(v, x.data(), 256, 1, y.data(), 2, pool);
        FAIL() << "iq2_xxs is not supported";
    } catch (const unsupported_error& e) {
        EXPECT_STREQ(e.what(),
                     "tensor 'blk.3.attn_q.weight' at offset 0x1e240: type iq2_xxs is not supported by matmul");
    }
}

TEST(weight_types, rows_must_be_whole_blocks) {
    std::vector<block_q8_0> blocks(2);
    tensor_view v;
    v.name = "odd";
    v.type = tensor_type::q8_0;
    v.n_dims = 2;
    v.ne = {48, 1, 1, 1};
    v.data = reinterpret_cast<const std::byte*>(blocks.data());
    v.n_bytes = sizeof(blocks[0]) * 2;
    std::vector<float> out(48);
    try {
        read_row(v, 0, out.data());
        FAIL() << "48 is not a multiple of 32";
    } catch (const format_error& e) {
        EXPECT_NE(std::string(e.what()).find("row length 48 is not a multiple of the q8_0 block size 32"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace nexttok

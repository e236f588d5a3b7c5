// q8_activations (the 8-bit activation rows of the integer kernels) against its definition:
// d = amax / 127, q = x / d rounded to nearest (even on ties), |q| <= 127, the lane sums, the
// scale per lane and the scaled block sum, the zero padding and the kernels' groupings; and
// qdot_block against a double dot of the same quantized values for every tile shape, bitwise
// equal across shapes.
#include <nexttok/kernels/quant_act.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

#include "quant_test_util.hpp"

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

namespace nexttok {
namespace {

template <class X>
std::vector<X> normal_values(std::int64_t n, std::uint64_t seed, float sigma) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> dist(0.0f, sigma);
    std::vector<X> x(static_cast<std::size_t>(n));
    for (auto& v : x) v = static_cast<X>(dist(rng));
    return x;
}

template <class X>
void check_quantization(const std::vector<X>& x) {
    const auto n = static_cast<std::int64_t>(x.size());
    q8_activations q;
    q.resize(1, n);
    q.quantize(0, x.data());
    const q8_act_row& o = q.row(0);
    for (std::int64_t b = 0; b < n / 32; ++b) {
        float amax = 0.0f;
        for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(static_cast<float>(x[b * 32 + i])));
        const float d = o.lane_scales[8 * b];
        ASSERT_EQ(d, amax / 127.0f) << "block " << b;
        int sum = 0;
        for (int i = 0; i < 32; ++i) {
            const float v = static_cast<float>(x[b * 32 + i]);
            const float scaled = amax > 0.0f ? v * (127.0f / amax) : 0.0f;
            const int qi = o.qs[b * 32 + i];
            ASSERT_EQ(qi, static_cast<int>(std::nearbyint(scaled))) << "block " << b << " element " << i;
            ASSERT_LE(std::abs(qi), 127);
            ASSERT_LE(std::fabs(v - d * qi), d * 0.5f * (1.0f + 1e-5f) + 1e-30f);
            sum += qi;
        }
        EXPECT_EQ(o.dsum[b], d * static_cast<float>(sum));
        for (int l = 0; l < 8; ++l) {
            const std::int8_t* ql = o.qs + b * 32 + 4 * l;
            EXPECT_EQ(o.minus8_sums[8 * b + l], -8 * (ql[0] + ql[1] + ql[2] + ql[3]));
            EXPECT_EQ(o.lane_scales[8 * b + l], d);
        }
    }
    // The padding to 64 bytes is zero (kernels read a whole pair of blocks).
    for (std::int64_t i = n; i < (n + 63) / 64 * 64; ++i) EXPECT_EQ(o.qs[i], 0);
    for (std::int64_t i = n / 4; i < (n + 63) / 64 * 16; ++i) {
        EXPECT_EQ(o.minus8_sums[i], 0);
        EXPECT_EQ(o.lane_scales[i], 0.0f);
    }
    if (!q8_act_grouped) return;
    // The q8_0 grouping: quads of 4 blocks, first halves then last halves, zero past the row.
    const std::int64_t n4 = (n + 127) / 128 * 128;
    for (std::int64_t i = 0; i < n4; ++i) {
        const std::int64_t k = i / 128, half = (i % 128) / 64, blk = (i % 64) / 16, j = i % 16;
        const std::int64_t e = 32 * (4 * k + blk) + 16 * half + j;
        ASSERT_EQ(o.quad_qs[i], e < n ? o.qs[e] : 0) << "quad_qs " << i;
    }
    for (std::int64_t l = 0; l < n4 / 8; ++l) {
        const std::int8_t* lo = o.quad_qs + 128 * (l / 16) + 4 * (l % 16);
        EXPECT_EQ(o.quad_minus128_sums[l], -128 * (lo[0] + lo[1] + lo[2] + lo[3] + lo[64] + lo[65] + lo[66] + lo[67]))
            << "lane " << l;
        const std::int64_t blk = 4 * (l / 16) + (l % 16) / 4;
        EXPECT_EQ(o.quad_lane_scales[l], blk < n / 32 ? o.lane_scales[8 * blk] : 0.0f) << "lane " << l;
    }
    // The q4_0 octet grouping: octets of 8 blocks, parts of element offsets 0, 16, 8, 24.
    const std::int64_t n8 = (n + 255) / 256 * 256;
    const int part_offset[4] = {0, 16, 8, 24};
    for (std::int64_t i = 0; i < n8; ++i) {
        const std::int64_t oct = i / 256, m = (i % 256) / 64, k = (i % 64) / 8, j = i % 8;
        const std::int64_t e = 32 * (8 * oct + k) + part_offset[m] + j;
        ASSERT_EQ(o.octet_qs[i], e < n ? o.qs[e] : 0) << "octet_qs " << i;
    }
    for (std::int64_t l = 0; l < n8 / 16; ++l) {
        const std::int8_t* lane = o.octet_qs + 256 * (l / 16) + 4 * (l % 16);
        int sum = 0;
        for (int m = 0; m < 4; ++m) sum += lane[64 * m] + lane[64 * m + 1] + lane[64 * m + 2] + lane[64 * m + 3];
        EXPECT_EQ(o.octet_minus8_sums[l], -8 * sum) << "lane " << l;
        const std::int64_t blk = l / 2;
        EXPECT_EQ(o.octet_lane_scales[l], blk < n / 32 ? o.lane_scales[8 * blk] : 0.0f) << "lane " << l;
    }
    // q4_k's quantization by 256 (q8k_scales = amax / 127 of the 256, q rounded to nearest even), its
    // values in the q4_k grouping (blocks 0, 2, 1, 3, 4, 6, 5, 7), the sums of its blocks.
    if (n % 256 != 0) return;
    const int order[8] = {0, 2, 1, 3, 4, 6, 5, 7};
    for (std::int64_t k = 0; k < n / 256; ++k) {
        float amax = 0.0f;
        for (int i = 0; i < 256; ++i) amax = std::max(amax, std::fabs(static_cast<float>(x[256 * k + i])));
        const float d = o.q8k_scales[k];
        ASSERT_EQ(d, amax / 127.0f) << "super-block " << k;
        for (int j = 0; j < 8; ++j) {
            int sum = 0;
            for (int e = 0; e < 32; ++e) {
                const float v = static_cast<float>(x[256 * k + 32 * j + e]);
                const float scaled = amax > 0.0f ? v * (127.0f / amax) : 0.0f;
                const int qi = o.q8k_qs[256 * k + 32 * order[j] + e];
                ASSERT_EQ(qi, static_cast<int>(std::nearbyint(scaled)))
                    << "super-block " << k << " element " << 32 * j + e;
                ASSERT_LE(std::abs(qi), 127);
                ASSERT_LE(std::fabs(v - d * qi), d * 0.5f * (1.0f + 1e-5f) + 1e-30f);
                sum += qi;
            }
            EXPECT_EQ(o.q8k_block_sums[8 * k + j], sum) << "super-block " << k << " block " << j;
        }
    }
}

TEST(quantize_activations, follows_its_definition) {
    check_quantization(normal_values<float>(32 * 64, 1, 1.0f));
    check_quantization(normal_values<float>(32 * 8, 2, 1e-3f));
    check_quantization(normal_values<Eigen::half>(32 * 16, 3, 2.0f));
    check_quantization(normal_values<Eigen::bfloat16>(32 * 16, 4, 0.5f));
    check_quantization(normal_values<float>(32 * 3, 5, 1.0f));  // an odd block count: padded
    check_quantization(std::vector<float>(256, 0.0f));          // all zero: d = 0, q = 0
}

template <class Block>
Block any_block(test::block_source& src) {
    if constexpr (std::is_same_v<Block, block_q8_0>)
        return src.q8_0();
    else if constexpr (std::is_same_v<Block, block_q4_0>)
        return src.q4_0();
    else {
        int sc[8], m[8];
        return src.k_block<Block>(sc, m);
    }
}

template <class Block>
class qdot_block_test : public ::testing::Test {};
using int8_blocks = ::testing::Types<block_q8_0, block_q4_0, block_q4_k>;
TYPED_TEST_SUITE(qdot_block_test, int8_blocks);

// 3 rows x 4 tokens of 2 blocks of 256 (or 16 of 32): the 3x4, 1x4, 3x1 and 1x1 tiles agree
// bitwise, and match sum_i w_i d_b q_i in double.
TYPED_TEST(qdot_block_test, matches_double_dot_in_every_tile_shape) {
    using Block = TypeParam;
    constexpr std::int64_t n = 512, nb = n / Block::block_size;
    test::block_source src(77);
    std::vector<Block> w(3 * nb);
    for (auto& b : w) b = any_block<Block>(src);
    q8_activations xq;
    xq.resize(4, n);
    for (int t = 0; t < 4; ++t) xq.quantize(t, normal_values<float>(n, 10 + t, 1.0f).data());
    const Block* rows[3] = {w.data(), w.data() + nb, w.data() + 2 * nb};
    const q8_act_row* xs[4] = {&xq.row(0), &xq.row(1), &xq.row(2), &xq.row(3)};
    float big[12], col[4], row3[3];
    qdot_block<3, 4>(rows, xs, n, big);
    for (int r = 0; r < 3; ++r) {
        qdot_block<1, 4>(rows + r, xs, n, col);
        std::vector<float> wf(n);
        dequantize_row(rows[r], wf.data(), n);
        for (int t = 0; t < 4; ++t) {
            float one;
            qdot_block<1, 1>(rows + r, xs + t, n, &one);
            qdot_block<3, 1>(rows, xs + t, n, row3);
            EXPECT_EQ(std::bit_cast<std::uint32_t>(one), std::bit_cast<std::uint32_t>(big[r * 4 + t]));
            EXPECT_EQ(std::bit_cast<std::uint32_t>(one), std::bit_cast<std::uint32_t>(col[t]));
            EXPECT_EQ(std::bit_cast<std::uint32_t>(one), std::bit_cast<std::uint32_t>(row3[r]));
            double ref = 0.0, scale = 0.0;
            for (std::int64_t i = 0; i < n; ++i) {
                const test::q8_value a = test::activation_q8<Block>(*xs[t], i);
                const double p = static_cast<double>(wf[i]) * a.d * a.q;
                ref += p;
                scale += std::fabs(p);
            }
            EXPECT_LE(std::fabs(one - ref), 1e-5 * scale) << "row " << r << " token " << t;
        }
    }
}

}  // namespace
}  // namespace nexttok

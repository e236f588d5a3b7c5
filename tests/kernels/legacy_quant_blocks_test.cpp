// Dequantization of q4_1, q5_0, q5_1 and iq4_nl blocks against ggml's layout formulas: blocks
// built by hand (scales and quant bytes written literally, expected values worked out by hand),
// then random blocks against a per-element oracle written here (element e -> its nibble, its
// fifth bit, its scale and minimum, in double). Each weight is d * q exactly, plus m rounded
// once, so the comparison is bitwise.
#include <nexttok/kernels/dequantize.hpp>
#include <nexttok/kernels/matmul.hpp>
#include <nexttok/tensor/quant_blocks.hpp>
#include <nexttok/tensor/tensor_view.hpp>
#include <nexttok/tensor/weight_types.hpp>

#include "quant_test_util.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace nexttok {
namespace {

using test::expect_exact;

// ggml's kvalues_iq4nl, written out again.
constexpr int iq4_nl_levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

template <class Block>
constexpr bool has_qh = std::is_same_v<Block, block_q5_0> || std::is_same_v<Block, block_q5_1>;
template <class Block>
constexpr bool has_min = std::is_same_v<Block, block_q4_1> || std::is_same_v<Block, block_q5_1>;

// Exact weights (double) from the layout: nibble e (e < 16: low nibble of qs[e], else high
// nibble of qs[e - 16]), fifth bit = bit e of the little-endian qh, then the type's formula.
template <class Block>
std::vector<double> oracle(const Block& b) {
    std::vector<double> w(32);
    const double d = test::half_value(test::bits_of(b.d));
    for (int e = 0; e < 32; ++e) {
        int q = e < 16 ? (b.qs[e] & 15) : (b.qs[e - 16] >> 4);
        if constexpr (has_qh<Block>) q += 16 * ((b.qh[e / 8] >> (e % 8)) & 1);
        if constexpr (std::is_same_v<Block, block_q5_0>)
            w[e] = d * (q - 16);
        else if constexpr (std::is_same_v<Block, block_iq4_nl>)
            w[e] = d * iq4_nl_levels[q];
        else
            w[e] = d * q + test::half_value(test::bits_of(b.m));
    }
    return w;
}

template <class Block>
Block random_legacy_block(test::block_source& src) {
    Block b;
    src.fill_bytes(b);
    b.d = test::half_bits(src.half());
    if constexpr (has_min<Block>) b.m = test::half_bits(src.half());
    return b;
}

TEST(legacy_quant_blocks, layouts_match_ggml) {
    EXPECT_EQ(sizeof(block_q4_1), 20u);
    EXPECT_EQ(sizeof(block_q5_0), 22u);
    EXPECT_EQ(sizeof(block_q5_1), 24u);
    EXPECT_EQ(sizeof(block_iq4_nl), 18u);
    EXPECT_EQ(find_tensor_type_traits(3)->block_bytes, sizeof(block_q4_1));
    EXPECT_EQ(find_tensor_type_traits(6)->block_bytes, sizeof(block_q5_0));
    EXPECT_EQ(find_tensor_type_traits(7)->block_bytes, sizeof(block_q5_1));
    EXPECT_EQ(find_tensor_type_traits(20)->block_bytes, sizeof(block_iq4_nl));
    for (auto t : {tensor_type::q4_1, tensor_type::q5_0, tensor_type::q5_1, tensor_type::iq4_nl})
        EXPECT_TRUE(supports_weight_type(t)) << to_string(t);
}

TEST(legacy_quant_blocks, q4_1_by_hand) {
    block_q4_1 b{};
    b.d = test::half_bits(0x3800);  // 0.5
    b.m = test::half_bits(0xBD00);  // -1.25
    b.qs[0] = 0x3A;                 // element 0: 10, element 16: 3
    b.qs[15] = 0xF0;                // element 15: 0, element 31: 15
    float y[32];
    dequantize_block(b, y);
    EXPECT_EQ(y[0], 3.75f);   // 10 * 0.5 - 1.25
    EXPECT_EQ(y[16], 0.25f);  // 3 * 0.5 - 1.25
    EXPECT_EQ(y[15], -1.25f);
    EXPECT_EQ(y[31], 6.25f);
    EXPECT_EQ(y[1], -1.25f);
}

TEST(legacy_quant_blocks, q5_0_by_hand) {
    block_q5_0 b{};
    b.d = test::half_bits(0x3400);                        // 0.25
    const std::uint8_t qh[4] = {0x01, 0x80, 0x00, 0xFF};  // bits 0, 15 and 24..31
    std::memcpy(b.qh, qh, 4);
    b.qs[0] = 0x3A;   // element 0: 10 + 16, element 16: 3
    b.qs[15] = 0x5F;  // element 15: 15 + 16, element 31: 5 + 16
    b.qs[8] = 0x21;   // element 8: 1, element 24: 2 + 16
    float y[32];
    dequantize_block(b, y);
    EXPECT_EQ(y[0], 2.5f);     // (26 - 16) * 0.25
    EXPECT_EQ(y[16], -3.25f);  // (3 - 16) * 0.25
    EXPECT_EQ(y[15], 3.75f);   // (31 - 16) * 0.25
    EXPECT_EQ(y[31], 1.25f);   // (21 - 16) * 0.25
    EXPECT_EQ(y[8], -3.75f);   // (1 - 16) * 0.25
    EXPECT_EQ(y[24], 0.5f);    // (18 - 16) * 0.25
    EXPECT_EQ(y[1], -4.0f);    // (0 - 16) * 0.25
}

TEST(legacy_quant_blocks, q5_1_by_hand) {
    block_q5_1 b{};
    b.d = test::half_bits(0x3C00);                        // 1
    b.m = test::half_bits(0xC000);                        // -2
    const std::uint8_t qh[4] = {0x02, 0x00, 0x01, 0x80};  // bits 1, 16 and 31
    std::memcpy(b.qh, qh, 4);
    b.qs[1] = 0x74;   // element 1: 4 + 16, element 17: 7
    b.qs[0] = 0x09;   // element 0: 9, element 16: 0 + 16
    b.qs[15] = 0xF0;  // element 15: 0, element 31: 15 + 16
    float y[32];
    dequantize_block(b, y);
    EXPECT_EQ(y[1], 18.0f);
    EXPECT_EQ(y[17], 5.0f);
    EXPECT_EQ(y[0], 7.0f);
    EXPECT_EQ(y[16], 14.0f);
    EXPECT_EQ(y[15], -2.0f);
    EXPECT_EQ(y[31], 29.0f);
}

TEST(legacy_quant_blocks, iq4_nl_by_hand) {
    block_iq4_nl b{};
    b.d = test::half_bits(0x2000);  // 2^-7
    for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<std::uint8_t>(j | ((15 - j) << 4));
    float y[32];
    dequantize_block(b, y);
    EXPECT_EQ(y[0], -127.0f / 128.0f);  // level 0
    EXPECT_EQ(y[16], 113.0f / 128.0f);  // level 15
    EXPECT_EQ(y[8], 1.0f / 128.0f);     // level 8
    EXPECT_EQ(y[7], -10.0f / 128.0f);   // level 7
    EXPECT_EQ(y[20], 38.0f / 128.0f);   // element 20: high nibble of qs[4], 15 - 4 = 11
    for (int e = 0; e < 32; ++e) EXPECT_EQ(y[e], (e < 16 ? iq4_nl_levels[e] : iq4_nl_levels[31 - e]) / 128.0f) << e;
}

template <class Block>
void check_random_blocks(std::uint64_t seed) {
    test::block_source src(seed);
    std::vector<Block> row;
    for (int i = 0; i < 200; ++i) row.push_back(random_legacy_block<Block>(src));
    std::vector<float> y(32 * row.size());
    dequantize_row(row.data(), y.data(), static_cast<std::int64_t>(y.size()));
    for (std::size_t i = 0; i < row.size(); ++i) {
        SCOPED_TRACE("block " + std::to_string(i));
        expect_exact(y.data() + 32 * i, oracle(row[i]));
    }
    // read_row, through the weight type dispatch: rows of 40 blocks.
    tensor_view view;
    view.name = std::string("w");
    view.type = Block::type;
    view.n_dims = 2;
    view.ne = {32 * 40, 5, 1, 1};
    view.data = reinterpret_cast<const std::byte*>(row.data());
    view.n_bytes = row.size() * sizeof(Block);
    std::vector<float> r3(32 * 40);
    read_row(view, 3, r3.data());
    for (std::size_t e = 0; e < r3.size(); ++e)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(r3[e]), std::bit_cast<std::uint32_t>(y[32 * 120 + e])) << e;
}

TEST(legacy_quant_blocks, random_q4_1_blocks) { check_random_blocks<block_q4_1>(1); }
TEST(legacy_quant_blocks, random_q5_0_blocks) { check_random_blocks<block_q5_0>(2); }
TEST(legacy_quant_blocks, random_q5_1_blocks) { check_random_blocks<block_q5_1>(3); }
TEST(legacy_quant_blocks, random_iq4_nl_blocks) { check_random_blocks<block_iq4_nl>(4); }

}  // namespace
}  // namespace nexttok

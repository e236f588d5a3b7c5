// Dequantization of q8_0, q4_0, q4_k, q5_k and q6_k blocks against the layout formulas: blocks
// built by hand (d, dmin, scale and quant bytes written literally, a few expected values worked
// out by hand), then random blocks against the per-element oracle of quant_test_util.hpp. Every
// product in these formats is exact in float, so the comparison is bitwise.
#include <nexttok/kernels/dequantize.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

#include "quant_test_util.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

namespace nexttok {
namespace {

// Each float equals the oracle's exact value rounded once to float, bit for bit.
using test::expect_exact;

// The hand-packed scale bytes used below, and their 6-bit scales and mins worked out by hand.
constexpr std::uint8_t hand_scales[12] = {0xC1, 0x7F, 0x11, 0x60, 0x80, 0x3F, 0x09, 0xE8, 0x5A, 0x3C, 0xF0, 0x0F};
constexpr int hand_sc[8] = {1, 63, 17, 32, 58, 28, 0, 31};
constexpr int hand_m[8] = {0, 63, 9, 40, 37, 3, 15, 48};

TEST(quant_blocks, layouts_match_ggml) {
    EXPECT_EQ(sizeof(block_q8_0), 34u);
    EXPECT_EQ(sizeof(block_q4_0), 18u);
    EXPECT_EQ(sizeof(block_q4_k), 144u);
    EXPECT_EQ(sizeof(block_q5_k), 176u);
    EXPECT_EQ(sizeof(block_q6_k), 210u);
    for (auto t : {block_q8_0::type, block_q4_0::type, block_q4_k::type, block_q5_k::type, block_q6_k::type}) {
        const auto traits = find_tensor_type_traits(static_cast<std::uint32_t>(t));
        ASSERT_TRUE(traits.has_value());
    }
    EXPECT_EQ(find_tensor_type_traits(8)->block_bytes, sizeof(block_q8_0));
    EXPECT_EQ(find_tensor_type_traits(2)->block_bytes, sizeof(block_q4_0));
    EXPECT_EQ(find_tensor_type_traits(12)->block_bytes, sizeof(block_q4_k));
    EXPECT_EQ(find_tensor_type_traits(13)->block_bytes, sizeof(block_q5_k));
    EXPECT_EQ(find_tensor_type_traits(14)->block_bytes, sizeof(block_q6_k));
}

TEST(quant_blocks, half_scales_decode_exactly) {
    EXPECT_EQ(test::half_bits(0x3C00).to_float(), 1.0f);
    EXPECT_EQ(test::half_bits(0xB800).to_float(), -0.5f);
    EXPECT_EQ(test::half_bits(0x0001).to_float(), std::ldexp(1.0f, -24));  // smallest subnormal
    EXPECT_EQ(test::half_bits(0x7BFF).to_float(), 65504.0f);
    EXPECT_EQ(test::bits_of(packed_half::from_float(0.1f)), 0x2E66);  // nearest half to 0.1
}

TEST(quant_blocks, q8_0_by_hand) {
    block_q8_0 b;
    b.d = test::half_bits(0xB800);  // -0.5
    const std::int8_t first[8] = {-128, -127, -1, 0, 1, 2, 3, 127};
    for (int j = 0; j < 32; ++j) b.qs[j] = j < 8 ? first[j] : static_cast<std::int8_t>(j - 16);
    float y[32];
    dequantize_block(b, y);
    EXPECT_EQ(y[0], 64.0f);
    EXPECT_EQ(y[1], 63.5f);
    EXPECT_EQ(y[7], -63.5f);
    EXPECT_EQ(y[31], -7.5f);
    expect_exact(y, test::oracle(b));

    b.d = test::half_bits(0x0001);  // 2^-24, subnormal
    b.qs[0] = 100;
    dequantize_block(b, y);
    EXPECT_EQ(y[0], std::ldexp(100.0f, -24));
}

TEST(quant_blocks, q4_0_by_hand) {
    block_q4_0 b;
    b.d = test::half_bits(0x3E00);  // 1.5
    for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<std::uint8_t>(j | ((15 - j) << 4));
    float y[32];
    dequantize_block(b, y);
    EXPECT_EQ(y[0], -12.0f);   // low nibble 0 of qs[0]
    EXPECT_EQ(y[15], 10.5f);   // low nibble 15 of qs[15]
    EXPECT_EQ(y[16], 10.5f);   // high nibble 15 of qs[0]
    EXPECT_EQ(y[31], -12.0f);  // high nibble 0 of qs[15]
    expect_exact(y, test::oracle(b));
}

TEST(quant_blocks, k_scale_packing_by_hand) {
    for (int j = 0; j < 8; ++j) {
        const detail::k_scale_min sm = detail::unpack_k_scale_min(hand_scales, j);
        EXPECT_EQ(sm.scale, hand_sc[j]) << "scale " << j;
        EXPECT_EQ(sm.min, hand_m[j]) << "min " << j;
    }
    const auto packed = test::pack_k_scales(hand_sc, hand_m);  // the tests' packer agrees with the hand work
    for (int i = 0; i < 12; ++i) EXPECT_EQ(packed[i], hand_scales[i]) << "byte " << i;
}

TEST(quant_blocks, q4_k_by_hand) {
    block_q4_k b;
    b.d = test::half_bits(0x3400);     // 0.25
    b.dmin = test::half_bits(0x3000);  // 0.125
    std::memcpy(b.scales, hand_scales, 12);
    for (int i = 0; i < 128; ++i) b.qs[i] = static_cast<std::uint8_t>((i * 7 + 3) & 0xff);
    std::vector<float> y(256);
    dequantize_block(b, y.data());
    EXPECT_EQ(y[0], 0.75f);      // sub-block 0: 0.25 * 1 * 3 - 0.125 * 0
    EXPECT_EQ(y[32], -7.875f);   // sub-block 1, high nibble 0 of qs[0]: -0.125 * 63
    EXPECT_EQ(y[192], -1.875f);  // sub-block 6 (scale 0), low nibble 3 of qs[96] = 0xa3: -0.125 * 15
    EXPECT_EQ(y[224], 71.5f);    // sub-block 7, high nibble 10 of qs[96]: 0.25 * 31 * 10 - 0.125 * 48
    expect_exact(y.data(), test::oracle(b, hand_sc, hand_m));
}

TEST(quant_blocks, q5_k_by_hand) {
    block_q5_k b;
    b.d = test::half_bits(0x3400);     // 0.25
    b.dmin = test::half_bits(0x3000);  // 0.125
    std::memcpy(b.scales, hand_scales, 12);
    for (int i = 0; i < 128; ++i) b.qs[i] = static_cast<std::uint8_t>((i * 7 + 3) & 0xff);
    for (int i = 0; i < 32; ++i) b.qh[i] = static_cast<std::uint8_t>((i * 37) & 0xff);
    b.qh[0] = 0x82;  // fifth bit set for sub-blocks 1 and 7 at l = 0
    std::vector<float> y(256);
    dequantize_block(b, y.data());
    EXPECT_EQ(y[0], 0.75f);      // bit 0 clear: as q4_k
    EXPECT_EQ(y[32], 244.125f);  // q = 0 + 16: 0.25 * 63 * 16 - 0.125 * 63
    EXPECT_EQ(y[224], 195.5f);   // q = 10 + 16: 0.25 * 31 * 26 - 0.125 * 48
    expect_exact(y.data(), test::oracle(b, hand_sc, hand_m));
}

TEST(quant_blocks, q6_k_by_hand) {
    block_q6_k b;
    b.d = test::half_bits(0x3800);  // 0.5
    const std::int8_t scales[16] = {-128, -1, 0, 1, 127, -64, 33, -7, 100, -100, 5, -5, 2, -2, 64, -32};
    std::memcpy(b.scales, scales, 16);
    for (int i = 0; i < 128; ++i) b.ql[i] = static_cast<std::uint8_t>((i * 13 + 5) & 0xff);
    for (int i = 0; i < 64; ++i) b.qh[i] = static_cast<std::uint8_t>((i * 29 + 7) & 0xff);
    b.ql[0] = 0x5A;
    b.ql[32] = 0xC3;
    b.qh[0] = 0xE4;  // 2-bit fields 0, 1, 2, 3 for quarters 0..3 at l = 0
    std::vector<float> y(256);
    dequantize_block(b, y.data());
    EXPECT_EQ(y[0], 1408.0f);  // q = 10 - 32, scale -128
    EXPECT_EQ(y[32], 0.0f);    // q = 3 + 16 - 32, scale 0
    EXPECT_EQ(y[64], 317.5f);  // q = 5 + 32 - 32, scale 127
    EXPECT_EQ(y[96], 462.0f);  // q = 12 + 48 - 32, scale 33
    expect_exact(y.data(), test::oracle(b));
}

TEST(quant_blocks, random_blocks_match_the_layout_formulas) {
    test::block_source src(20240611);
    std::vector<float> y(256);
    for (int i = 0; i < 300; ++i) {
        const block_q8_0 a = src.q8_0();
        dequantize_block(a, y.data());
        expect_exact(y.data(), test::oracle(a));
        const block_q4_0 b = src.q4_0();
        dequantize_block(b, y.data());
        expect_exact(y.data(), test::oracle(b));
        int sc[8], m[8];
        const auto c = src.k_block<block_q4_k>(sc, m);
        dequantize_block(c, y.data());
        expect_exact(y.data(), test::oracle(c, sc, m));
        const auto d = src.k_block<block_q5_k>(sc, m);
        dequantize_block(d, y.data());
        expect_exact(y.data(), test::oracle(d, sc, m));
        const block_q6_k e = src.q6_k();
        dequantize_block(e, y.data());
        expect_exact(y.data(), test::oracle(e));
        if (HasFatalFailure()) return;
    }
}

// A row is its blocks one after the other, read in place at any byte address (blocks are
// 1-byte aligned, as they sit in a mapped file).
template <class Block, class Make>
void check_row_at_odd_address(Make make) {
    constexpr int n_blocks = 3, qk = Block::block_size;
    std::vector<std::uint8_t> storage(1 + n_blocks * sizeof(Block));
    std::vector<float> expected(n_blocks * qk);
    for (int b = 0; b < n_blocks; ++b) {
        const Block blk = make();
        std::memcpy(storage.data() + 1 + b * sizeof(Block), &blk, sizeof(Block));
        dequantize_block(blk, expected.data() + b * qk);
    }
    std::vector<float> got(n_blocks * qk);
    dequantize_row(reinterpret_cast<const Block*>(storage.data() + 1), got.data(), n_blocks * qk);
    EXPECT_EQ(got, expected);
}

TEST(quant_blocks, rows_are_consecutive_blocks_at_any_address) {
    test::block_source src(7);
    int sc[8], m[8];
    check_row_at_odd_address<block_q8_0>([&] { return src.q8_0(); });
    check_row_at_odd_address<block_q4_0>([&] { return src.q4_0(); });
    check_row_at_odd_address<block_q4_k>([&] { return src.k_block<block_q4_k>(sc, m); });
    check_row_at_odd_address<block_q5_k>([&] { return src.k_block<block_q5_k>(sc, m); });
    check_row_at_odd_address<block_q6_k>([&] { return src.q6_k(); });
}

}  // namespace
}  // namespace nexttok

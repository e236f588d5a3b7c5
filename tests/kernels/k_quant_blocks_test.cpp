// Dequantization of q2_k, q3_k and iq4_xs blocks against ggml's layouts, written here
// independently of the library: blocks built by hand (bytes written literally, a few expected
// values worked out by hand), then random blocks against per-element formulas in double. q3_k's
// scales are decoded the way ggml's dequantize_row_q3_K does (three uint32 words and the masks
// 0x03030303 / 0x0f0f0f0f), not per scale as the library does. Every product in these formats is
// exact in float, so the comparison is bitwise.
#include <nexttok/kernels/dequantize.hpp>
#include <nexttok/kernels/matmul.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

#include "quant_test_util.hpp"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cstring>
#include <vector>

namespace nexttok {
namespace {

constexpr int levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};  // kvalues_iq4nl

using test::expect_exact;

double half_of(packed_half h) { return test::half_value(test::bits_of(h)); }

// Element e: half h, quarter j (32 elements each), position l.
struct place {
    int h, j, l;
};
place place_of(int e) { return {e / 128, e % 128 / 32, e % 32}; }

std::vector<double> oracle(const block_q2_k& b) {
    std::vector<double> w(256);
    for (int e = 0; e < 256; ++e) {
        const place p = place_of(e);
        const int q = (b.qs[32 * p.h + p.l] >> (2 * p.j)) & 3;
        const int is = e / 16;  // ggml: is = 8h + 2j + (l >= 16)
        EXPECT_EQ(is, 8 * p.h + 2 * p.j + (p.l >= 16 ? 1 : 0));
        w[e] = half_of(b.d) * (b.scales[is] & 15) * q - half_of(b.dmin) * (b.scales[is] >> 4);
    }
    return w;
}

// ggml's decoding of the 12 q3_k scale bytes, as three little-endian words.
std::array<int, 16> q3_k_scales_ggml(const std::uint8_t* bytes) {
    std::uint32_t aux[4];
    std::memcpy(aux, bytes, 12);
    const std::uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f, tmp = aux[2];
    aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
    aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
    aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
    aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
    std::array<int, 16> s{};
    for (int i = 0; i < 16; ++i)
        s[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(aux[i / 4] >> (8 * (i % 4))) - 32;
    return s;
}

std::vector<double> oracle(const block_q3_k& b) {
    const auto s = q3_k_scales_ggml(b.scales);
    std::vector<double> w(256);
    for (int e = 0; e < 256; ++e) {
        const place p = place_of(e);
        const int low = (b.qs[32 * p.h + p.l] >> (2 * p.j)) & 3;
        const int q = low - ((b.hmask[p.l] & (1 << (4 * p.h + p.j))) ? 0 : 4);
        w[e] = half_of(b.d) * s[static_cast<std::size_t>(e / 16)] * q;
    }
    return w;
}

std::vector<double> oracle(const block_iq4_xs& b) {
    const int scales_h = b.scales_h[0] | (b.scales_h[1] << 8);
    std::vector<double> w(256);
    for (int e = 0; e < 256; ++e) {
        const int ib = e / 32, k = e % 32;
        const int ls = ((b.scales_l[ib / 2] >> (4 * (ib % 2))) & 15) | (((scales_h >> (2 * ib)) & 3) << 4);
        const int nibble = k < 16 ? (b.qs[16 * ib + k] & 15) : (b.qs[16 * ib + k - 16] >> 4);
        w[e] = half_of(b.d) * (ls - 32) * levels[nibble];
    }
    return w;
}

template <class Block>
std::vector<float> dequantized(const Block& b) {
    std::vector<float> y(256);
    dequantize_block(b, y.data());
    return y;
}

TEST(k_quant_blocks, layouts_match_ggml) {
    EXPECT_EQ(sizeof(block_q2_k), 84u);
    EXPECT_EQ(sizeof(block_q3_k), 110u);
    EXPECT_EQ(sizeof(block_iq4_xs), 136u);
    EXPECT_EQ(find_tensor_type_traits(10)->block_bytes, sizeof(block_q2_k));
    EXPECT_EQ(find_tensor_type_traits(11)->block_bytes, sizeof(block_q3_k));
    EXPECT_EQ(find_tensor_type_traits(23)->block_bytes, sizeof(block_iq4_xs));
    for (auto t : {tensor_type::q2_k, tensor_type::q3_k, tensor_type::iq4_xs}) EXPECT_TRUE(supports_weight_type(t));
}

TEST(k_quant_blocks, q2_k_by_hand) {
    block_q2_k b{};
    b.d = test::half_bits(0x3800);     // 0.5
    b.dmin = test::half_bits(0x3400);  // 0.25
    b.scales[0] = 0x31;                // sub-block 0: scale 1, min 3
    b.scales[1] = 0xF0;                // sub-block 1: scale 0, min 15
    b.scales[5] = 0x0F;                // sub-block 5 (elements 80-95): scale 15, min 0
    b.scales[15] = 0xA7;               // sub-block 15: scale 7, min 10
    b.qs[0] = 0xE4;                    // elements 0, 32, 64, 96: q = 0, 1, 2, 3
    b.qs[16] = 0x02;                   // element 16: q = 2 (in sub-block 1: scale 0)
    b.qs[63] = 0xC0;                   // element 255 (h 1, quarter 3, l 31): q = 3
    const auto y = dequantized(b);
    EXPECT_EQ(y[0], 0.5f * 1 * 0 - 0.25f * 3);    // -0.75
    EXPECT_EQ(y[16], 0.5f * 0 * 2 - 0.25f * 15);  // -3.75
    EXPECT_EQ(y[32], 0.0f);                       // sub-block 2: scale 0, min 0
    EXPECT_EQ(y[64], 0.0f);
    EXPECT_EQ(y[96], 0.0f);  // sub-block 6
    EXPECT_EQ(y[1], -0.75f);
    EXPECT_EQ(y[255], 0.5f * 7 * 3 - 0.25f * 10);  // 8
    b.qs[16] = 0x32;  // element 80 (h 0, quarter 2, l 16): bits 4-5 of qs[16] = 3; element 16 still 2
    EXPECT_EQ(dequantized(b)[80], 0.5f * 15 * 3);
    expect_exact(dequantized(b).data(), oracle(b));
}

TEST(k_quant_blocks, q3_k_scale_packing_by_hand) {
    // Scales s_i (0..63, stored; the value is s_i - 32) for i = 0..15, packed by the layout: low
    // nibble of i in byte i % 8 (low nibble for i < 8, high for i >= 8), top 2 bits in byte
    // 8 + i % 4 at bits 2 (i / 4).
    constexpr int s[16] = {0, 63, 32, 31, 1, 17, 48, 5, 60, 33, 2, 47, 16, 40, 62, 9};
    std::uint8_t bytes[12] = {};
    for (int i = 0; i < 16; ++i) {
        bytes[i % 8] = static_cast<std::uint8_t>(bytes[i % 8] | ((s[i] & 15) << (i < 8 ? 0 : 4)));
        bytes[8 + i % 4] = static_cast<std::uint8_t>(bytes[8 + i % 4] | ((s[i] >> 4) << (2 * (i / 4))));
    }
    // Worked out by hand: byte 0 = low nibbles of s0 (0) and s8 (60 -> 0xC): 0xC0; byte 8 = top bits
    // of s0 (0), s4 (0), s8 (3), s12 (1): 0b01110000 = 0x70.
    EXPECT_EQ(bytes[0], 0xC0);
    EXPECT_EQ(bytes[8], 0x70);
    const auto ggml = q3_k_scales_ggml(bytes);
    int ours[16];
    detail::unpack_q3_k_scales(bytes, ours);
    for (int i = 0; i < 16; ++i) {
        EXPECT_EQ(ggml[static_cast<std::size_t>(i)], s[i] - 32) << "scale " << i;
        EXPECT_EQ(ours[i], s[i] - 32) << "scale " << i;
    }
}

TEST(k_quant_blocks, q3_k_by_hand) {
    block_q3_k b{};
    b.d = test::half_bits(0xBC00);  // -1
    // All scales 0 (value -32) except sub-block 0: stored 33 (value 1), sub-block 15: stored 63 (31).
    b.scales[0] = 0x01;          // low nibble of s0 = 1
    b.scales[8] = 0x02;          // top bits of s0 = 2 (33 = 0b100001)
    b.scales[7] = 0xF0;          // low nibble of s15 = 15
    b.scales[11] = 0xC0 | 0x02;  // top bits of s15 = 3 (bits 6-7); s3's top bits = 2 (stored 32: value 0)
    b.qs[0] = 0x1B;              // element 0: low 2 bits 3; element 32: 2; element 64: 1; element 96: 0
    b.hmask[0] = 0x01;           // element 0 has its high bit (q = 3), elements 32, 64, 96 do not (q - 4)
    b.qs[63] = 0x40;             // element 255 (h 1, quarter 3, l 31): low bits 1, high bit (bit 7 of hmask[31]) clear
    const auto y = dequantized(b);
    EXPECT_EQ(y[0], -1.0f * 1 * 3);
    EXPECT_EQ(y[1], -1.0f * 1 * -4);  // low bits 0, no high bit
    EXPECT_EQ(y[32], -1.0f * -32 * (2 - 4));
    EXPECT_EQ(y[48], -1.0f * 0 * -4);  // sub-block 3: value 0
    EXPECT_EQ(y[255], -1.0f * 31 * (1 - 4));
    b.hmask[31] = 0x80;
    EXPECT_EQ(dequantized(b)[255], -1.0f * 31 * 1);
    expect_exact(dequantized(b).data(), oracle(b));
}

TEST(k_quant_blocks, iq4_xs_by_hand) {
    block_iq4_xs b{};
    b.d = test::half_bits(0x3000);  // 0.125
    // Sub-block 0: ls = 33 (value 1): low nibble 1, top bits 2; sub-block 1: ls = 0 (value -32);
    // sub-block 7: ls = 63 (value 31): nibble 15 (high nibble of scales_l[3]), top bits 3.
    b.scales_l[0] = 0x01;
    b.scales_l[3] = 0xF0;
    b.scales_h[0] = 0x02;  // bits 0-1: sub-block 0
    b.scales_h[1] = 0xC0;  // bits 14-15: sub-block 7
    b.qs[0] = 0xF0;        // element 0: level 0 (-127); element 16: level 15 (113)
    b.qs[16] = 0x98;       // element 32: level 8 (1); element 48: level 9 (13)
    b.qs[127] = 0x07;      // element 239 (sub-block 7, k = 15): level 7 (-10); element 255: level 0
    const auto y = dequantized(b);
    EXPECT_EQ(y[0], 0.125f * 1 * -127);
    EXPECT_EQ(y[16], 0.125f * 1 * 113);
    EXPECT_EQ(y[32], 0.125f * -32 * 1);
    EXPECT_EQ(y[48], 0.125f * -32 * 13);
    EXPECT_EQ(y[239], 0.125f * 31 * -10);
    EXPECT_EQ(y[255], 0.125f * 31 * -127);
    EXPECT_EQ(y[64], 0.125f * -32 * -127);  // sub-block 2: ls 0, all-zero nibbles
    expect_exact(dequantized(b).data(), oracle(b));
}

TEST(k_quant_blocks, random_blocks_match_the_layout_formulas) {
    test::block_source src(2026);
    for (int i = 0; i < 200; ++i) {
        block_q2_k a;
        src.fill_bytes(a);
        a.d = test::half_bits(src.half());
        a.dmin = test::half_bits(src.half());
        expect_exact(dequantized(a).data(), oracle(a));
        block_q3_k b;
        src.fill_bytes(b);
        b.d = test::half_bits(src.half());
        expect_exact(dequantized(b).data(), oracle(b));
        block_iq4_xs c;
        src.fill_bytes(c);
        c.d = test::half_bits(src.half());
        expect_exact(dequantized(c).data(), oracle(c));
    }
}

// read_row (the embedding lookup) dispatches the three types and reads rows in place.
TEST(k_quant_blocks, read_row_dispatches_each_type) {
    test::block_source src(7);
    std::vector<block_q3_k> blocks(6);  // 2 rows of 768
    for (auto& b : blocks) {
        src.fill_bytes(b);
        b.d = test::half_bits(src.half());
    }
    tensor_view w;
    w.name = "t";
    w.type = tensor_type::q3_k;
    w.n_dims = 2;
    w.ne = {768, 2, 1, 1};
    w.data = reinterpret_cast<const std::byte*>(blocks.data());
    std::vector<float> row(768);
    read_row(w, 1, row.data());
    for (int k = 0; k < 3; ++k) expect_exact(row.data() + 256 * k, oracle(blocks[static_cast<std::size_t>(3 + k)]));
}

}  // namespace
}  // namespace nexttok

// The low-bit 256-element ggml block types (q2_k, q3_k, iq4_xs), with ggml's exact byte layouts,
// and their dequantization to float. Included by quant_blocks.hpp (packed_half, the quant_block
// concept and the other block types live there; iq4_nl_values in legacy_quant_blocks.hpp).
//
// Layouts (element e < 256 of a block, value in float; h = e / 128, j = e % 128 / 32, l = e % 32):
//   q2_k   (84 bytes / 256):  scales[16], qs[64], d, dmin
//                              16 sub-blocks of 16 with 4-bit scale sc = scales[e / 16] & 15 and
//                              4-bit min m = scales[e / 16] >> 4: w = (d * sc) * q - (dmin * m),
//                              q = bits 2j, 2j + 1 of qs[32h + l]
//   q3_k   (110 bytes / 256): hmask[32], qs[64], scales[12], d
//                              w = (d * (s(e / 16) - 32)) * q, q = (bits 2j, 2j + 1 of qs[32h + l])
//                              - 4 + 4 * bit 4h + j of hmask[l]  (-4..3); s(i), 6 bits: the low 4
//                              are the low (i < 8) or high (i >= 8) nibble of scales[i % 8], the
//                              top 2 are bits 2 (i / 4), 2 (i / 4) + 1 of scales[8 + i % 4]
//   iq4_xs (136 bytes / 256): d, scales_h (uint16, little-endian), scales_l[4], qs[128]
//                              8 sub-blocks of 32 (ib = e / 32, k = e % 32): w = (d * (ls - 32)) *
//                              iq4_nl_values[n], ls = nibble ib % 2 of scales_l[ib / 2] | bits 2ib,
//                              2ib + 1 of scales_h << 4; n = low nibble of qs[16ib + k] for k < 16,
//                              high nibble of qs[16ib + k - 16] for k >= 16
//
// Exactness: d and dmin are half precision (11 significant bits), the integer factors have at most
// 4 + 2 (q2_k), 6 + 3 (q3_k) or 6 + 7 (iq4_xs) significant bits, so every product above is exact in
// float; only the subtraction of the min in q2_k rounds, once. So these are the same floats as
// ggml's dequantize_row_q2_K / q3_K / iq4_xs, whatever the evaluation order or FMA contraction.
#pragma once

#include <nexttok/tensor/legacy_quant_blocks.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace nexttok {

struct block_q2_k {
    static constexpr int block_size = 256;
    static constexpr tensor_type type = tensor_type::q2_k;
    std::uint8_t scales[16];  // low nibble: scale, high nibble: min, of sub-block i
    std::uint8_t qs[64];
    packed_half d;
    packed_half dmin;
};

struct block_q3_k {
    static constexpr int block_size = 256;
    static constexpr tensor_type type = tensor_type::q3_k;
    std::uint8_t hmask[32];
    std::uint8_t qs[64];
    std::uint8_t scales[12];
    packed_half d;
};

// The 16 bytes that end at the last scale byte of `b` (4 bytes of qs, then the 12 scale bytes), for
// one unaligned 16-byte load. Counted from the block's first byte: a pointer before `scales` would
// leave that array.
inline const std::uint8_t* q3_k_scales_minus_4(const block_q3_k& b) noexcept {
    return reinterpret_cast<const std::uint8_t*>(&b) + offsetof(block_q3_k, scales) - 4;
}

struct block_iq4_xs {
    static constexpr int block_size = 256;
    static constexpr tensor_type type = tensor_type::iq4_xs;
    packed_half d;
    std::uint8_t scales_h[2];  // a little-endian uint16 (bytes keep the block 1-byte aligned)
    std::uint8_t scales_l[4];
    std::uint8_t qs[128];
};

static_assert(sizeof(block_q2_k) == 84 && alignof(block_q2_k) == 1 && offsetof(block_q2_k, qs) == 16 &&
              offsetof(block_q2_k, d) == 80 && offsetof(block_q2_k, dmin) == 82);
static_assert(sizeof(block_q3_k) == 110 && alignof(block_q3_k) == 1 && offsetof(block_q3_k, qs) == 32 &&
              offsetof(block_q3_k, scales) == 96 && offsetof(block_q3_k, d) == 108);
static_assert(sizeof(block_iq4_xs) == 136 && alignof(block_iq4_xs) == 1 && offsetof(block_iq4_xs, scales_l) == 4 &&
              offsetof(block_iq4_xs, qs) == 8);

// The 256-element block types whose integer kernels (kernels/detail/k_quant_qdot*.hpp) keep one
// accumulator layout and one float order on every instruction set (see k_quant_qdot.hpp).
template <class W>
inline constexpr bool is_k_quant_int8_block =
    std::is_same_v<W, block_q2_k> || std::is_same_v<W, block_q3_k> || std::is_same_v<W, block_iq4_xs>;

namespace detail {

// The 16 signed scales s(i) - 32 (-32..31) of a q3_k block from its 12 scale bytes.
inline void unpack_q3_k_scales(const std::uint8_t* s, int* out) noexcept {
    for (int i = 0; i < 16; ++i) {
        const int low = i < 8 ? (s[i] & 0x0f) : (s[i - 8] >> 4);
        const int high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
        out[i] = (low | (high << 4)) - 32;
    }
}

// The 8 signed scales ls - 32 (-32..31) of an iq4_xs block.
inline void unpack_iq4_xs_scales(const block_iq4_xs& b, int* out) noexcept {
    const unsigned h = b.scales_h[0] | (unsigned{b.scales_h[1]} << 8);
    for (int ib = 0; ib < 8; ++ib) {
        const int low = (b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0x0f;
        out[ib] = (low | static_cast<int>(((h >> (2 * ib)) & 3u) << 4)) - 32;
    }
}

}  // namespace detail

// y[0, 256) = the block's weights (scalar code: these serve read_row; the kernels read the blocks
// in place).
inline void dequantize_block(const block_q2_k& b, float* y) noexcept {
    const float d = b.d.to_float(), dmin = b.dmin.to_float();
    for (int e = 0; e < 256; ++e) {
        const int h = e / 128, j = e % 128 / 32, l = e % 32;
        const int q = (b.qs[32 * h + l] >> (2 * j)) & 3;
        const float scale = d * static_cast<float>(b.scales[e / 16] & 0x0f);
        const float min = dmin * static_cast<float>(b.scales[e / 16] >> 4);
        y[e] = scale * static_cast<float>(q) - min;  // scale * q is exact: one rounding either way
    }
}

inline void dequantize_block(const block_q3_k& b, float* y) noexcept {
    int s[16];
    detail::unpack_q3_k_scales(b.scales, s);
    const float d = b.d.to_float();
    for (int e = 0; e < 256; ++e) {
        const int h = e / 128, j = e % 128 / 32, l = e % 32;
        const int q = ((b.qs[32 * h + l] >> (2 * j)) & 3) - 4 + 4 * ((b.hmask[l] >> (4 * h + j)) & 1);
        y[e] = d * static_cast<float>(s[e / 16]) * static_cast<float>(q);
    }
}

inline void dequantize_block(const block_iq4_xs& b, float* y) noexcept {
    int s[8];
    detail::unpack_iq4_xs_scales(b, s);
    const float d = b.d.to_float();
    for (int ib = 0; ib < 8; ++ib) {
        const float scale = d * static_cast<float>(s[ib]);
        const std::uint8_t* q = b.qs + 16 * ib;
        for (int k = 0; k < 16; ++k) {
            y[32 * ib + k] = scale * static_cast<float>(iq4_nl_values[q[k] & 0x0f]);
            y[32 * ib + 16 + k] = scale * static_cast<float>(iq4_nl_values[q[k] >> 4]);
        }
    }
}

}  // namespace nexttok

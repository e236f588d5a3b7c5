// The remaining 32-element ggml block types ("legacy" quants and iq4_nl), with ggml's exact byte
// layouts, and their dequantization to float. Included by quant_blocks.hpp (packed_half, the
// quant_block concept and the other block types live there).
//
// Layouts (element e < 32 of a block, value in float; nibble n(e) is the low nibble of qs[e] for
// e < 16 and the high nibble of qs[e - 16] for e >= 16, as in q4_0):
//   q4_1   (20 bytes / 32): d, m, qs[16]            w = d * n(e) + m
//   q5_0   (22 bytes / 32): d, qh[4], qs[16]        w = d * (q(e) - 16), q(e) = n(e) + 16 * bit e of qh
//                                                    (qh read as a little-endian uint32)
//   q5_1   (24 bytes / 32): d, m, qh[4], qs[16]     w = d * q(e) + m, q(e) as in q5_0
//   iq4_nl (18 bytes / 32): d, qs[16]               w = d * iq4_nl_values[n(e)] (a fixed non-linear
//                                                    table of 16 int8 levels)
//
// Exactness: d is half precision (11 significant bits) and the integer factors have at most 8
// bits, so d * q is exact in float; only the addition of the minimum m in q4_1 and q5_1 rounds,
// once. So these are the same floats as ggml's dequantize_row_* (which computes x * d + m),
// whatever the evaluation order or FMA contraction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace nexttok {

// The 16 levels of iq4_nl (ggml's kvalues_iq4nl), indexed by the nibble; iq4_xs uses them too.
// Declared before the include below: quant_blocks.hpp includes this file and k_quant_blocks.hpp,
// which needs the table, whichever of the three a program includes first.
inline constexpr std::int8_t iq4_nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                  1,    13,   25,  38,  53,  69,  89,  113};

}  // namespace nexttok

#include <nexttok/tensor/quant_blocks.hpp>

namespace nexttok {

struct block_q4_1 {
    static constexpr int block_size = 32;
    static constexpr tensor_type type = tensor_type::q4_1;
    packed_half d;
    packed_half m;
    std::uint8_t qs[16];
};

struct block_q5_0 {
    static constexpr int block_size = 32;
    static constexpr tensor_type type = tensor_type::q5_0;
    packed_half d;
    std::uint8_t qh[4];
    std::uint8_t qs[16];
};

struct block_q5_1 {
    static constexpr int block_size = 32;
    static constexpr tensor_type type = tensor_type::q5_1;
    packed_half d;
    packed_half m;
    std::uint8_t qh[4];
    std::uint8_t qs[16];
};

struct block_iq4_nl {
    static constexpr int block_size = 32;
    static constexpr tensor_type type = tensor_type::iq4_nl;
    packed_half d;
    std::uint8_t qs[16];
};

static_assert(sizeof(block_q4_1) == 20 && alignof(block_q4_1) == 1 && offsetof(block_q4_1, qs) == 4);
static_assert(sizeof(block_q5_0) == 22 && alignof(block_q5_0) == 1 && offsetof(block_q5_0, qs) == 6);
static_assert(sizeof(block_q5_1) == 24 && alignof(block_q5_1) == 1 && offsetof(block_q5_1, qh) == 4 &&
              offsetof(block_q5_1, qs) == 8);
static_assert(sizeof(block_iq4_nl) == 18 && alignof(block_iq4_nl) == 1);

// The 32-element block types whose integer kernels (kernels/detail/legacy_qdot_*.hpp) share one
// accumulator layout and one float order on every instruction set (see legacy_qdot.hpp).
template <class W>
inline constexpr bool is_legacy_int8_block = std::is_same_v<W, block_q4_1> || std::is_same_v<W, block_q5_0> ||
                                             std::is_same_v<W, block_q5_1> || std::is_same_v<W, block_iq4_nl>;

namespace detail {

inline std::uint32_t load_qh(const std::uint8_t* qh) noexcept {
    std::uint32_t v;
    std::memcpy(&v, qh, 4);
    return v;
}

// The 32 integer levels of a nibble block (4 or 5 bits), element order.
inline void unpack_levels(const std::uint8_t* qs, std::uint32_t qh, int* q) noexcept {
    for (int j = 0; j < 16; ++j) {
        q[j] = (qs[j] & 0x0f) | static_cast<int>(((qh >> j) & 1u) << 4);
        q[j + 16] = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
    }
}

}  // namespace detail

// y[0, 32) = the block's weights (scalar code: these serve read_row, and kernels read the blocks
// in place).
inline void dequantize_block(const block_q4_1& b, float* y) noexcept {
    int q[32];
    detail::unpack_levels(b.qs, 0, q);
    const float d = b.d.to_float(), m = b.m.to_float();
    for (int e = 0; e < 32; ++e) y[e] = static_cast<float>(q[e]) * d + m;
}

inline void dequantize_block(const block_q5_0& b, float* y) noexcept {
    int q[32];
    detail::unpack_levels(b.qs, detail::load_qh(b.qh), q);
    const float d = b.d.to_float();
    for (int e = 0; e < 32; ++e) y[e] = static_cast<float>(q[e] - 16) * d;
}

inline void dequantize_block(const block_q5_1& b, float* y) noexcept {
    int q[32];
    detail::unpack_levels(b.qs, detail::load_qh(b.qh), q);
    const float d = b.d.to_float(), m = b.m.to_float();
    for (int e = 0; e < 32; ++e) y[e] = static_cast<float>(q[e]) * d + m;
}

inline void dequantize_block(const block_iq4_nl& b, float* y) noexcept {
    int q[32];
    detail::unpack_levels(b.qs, 0, q);
    const float d = b.d.to_float();
    for (int e = 0; e < 32; ++e) y[e] = static_cast<float>(iq4_nl_values[q[e]]) * d;
}

}  // namespace nexttok

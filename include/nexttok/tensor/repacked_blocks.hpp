// q8_0 and q4_0 rows repacked one lane per block, the layout the int8 kernels read fastest
// (kernels/quant_act.hpp): a model repacks its q8_0 and q4_0 matrices when it is built
// (model/model.hpp), in the same number of bytes. A repacked row of nb blocks is a sequence of
// groups of 16 blocks, the last of m = nb - 16 floor((nb - 1) / 16) blocks (16 when nb is a
// multiple of 16), the groups' bytes in the row's order; a group of m blocks holds
//   q8_0 (34 m bytes): d[m] (packed halves, block l's scale at bytes 2 l, 2 l + 1), then 8 chunks
//        of 4 m bytes: chunk j (j < 8), bytes 4 l .. 4 l + 3 = block l's qs[4 j .. 4 j + 3] + 128
//        (as unsigned bytes);
//   q4_0 (18 m bytes): d[m], then 4 chunks of 4 m bytes: chunk j (j < 4), bytes 4 l .. 4 l + 3 =
//        block l's qs[4 j .. 4 j + 3] (two nibbles each: low = element 4 j + k, high = 16 + 4 j + k).
// So a 64-byte chunk of a whole group is one instruction's worth of 4-byte lanes, lane l block l,
// and a block's dot product sums in one int32 lane. The block structs below only give the row its
// byte size and a type to dispatch on: block b of a row starts no group unless b % 16 == 0.
#pragma once

#include <nexttok/tensor/quant_blocks.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace nexttok {

struct block_q8_0_r16 {
    static constexpr int block_size = 32;
    static constexpr tensor_type type = tensor_type::q8_0_r16;
    std::uint8_t bytes[34];
};

struct block_q4_0_r16 {
    static constexpr int block_size = 32;
    static constexpr tensor_type type = tensor_type::q4_0_r16;
    std::uint8_t bytes[18];
};

static_assert(sizeof(block_q8_0_r16) == 34 && alignof(block_q8_0_r16) == 1);
static_assert(sizeof(block_q4_0_r16) == 18 && alignof(block_q4_0_r16) == 1);

template <class W>
inline constexpr bool repacked_block = std::is_same_v<W, block_q8_0_r16> || std::is_same_v<W, block_q4_0_r16>;

// The repacked type of q8_0 and q4_0 (others: the type itself).
inline constexpr tensor_type repacked_type(tensor_type t) noexcept {
    return t == tensor_type::q8_0 ? tensor_type::q8_0_r16 : t == tensor_type::q4_0 ? tensor_type::q4_0_r16 : t;
}

namespace detail {

// Chunks of a group of q8_0 (Chunks = 8, quant bytes + 128) or q4_0 (Chunks = 4) blocks.
template <class Block>
inline constexpr int r16_chunks = std::is_same_v<Block, block_q8_0> ? 8 : 4;

// out := the row of nb blocks `in`, repacked (sizeof(Block) * nb bytes; in and out must not overlap).
template <class Block>
inline void repack_row_r16(const Block* in, std::uint8_t* out, std::int64_t nb) noexcept {
    constexpr int chunks = r16_chunks<Block>;
    const std::uint8_t flip = std::is_same_v<Block, block_q8_0> ? 0x80 : 0x00;
    for (std::int64_t g = 0; g < nb; g += 16) {
        const int m = static_cast<int>(std::min<std::int64_t>(16, nb - g));
        std::uint8_t* group = out + static_cast<std::int64_t>(sizeof(Block)) * g;
        for (int l = 0; l < m; ++l) {
            const Block& b = in[g + l];
            std::memcpy(group + 2 * l, b.d.bytes, 2);
            for (int j = 0; j < chunks; ++j)
                for (int k = 0; k < 4; ++k)
                    group[2 * m + 4 * m * j + 4 * l + k] = static_cast<std::uint8_t>(b.qs[4 * j + k]) ^ flip;
        }
    }
}

// The group of m < 16 blocks at `group` in the layout of a whole group (`whole`: 16 blocks' bytes),
// its lanes m..15 zero: weights and scales.
template <class Repacked>
inline void widen_group_r16(const std::uint8_t* group, int m, std::uint8_t* whole) noexcept {
    constexpr int chunks = (static_cast<int>(sizeof(Repacked)) - 2) / 4;
    std::memset(whole, 0, 16 * sizeof(Repacked));
    std::memcpy(whole, group, 2 * static_cast<std::size_t>(m));
    for (int j = 0; j < chunks; ++j) std::memcpy(whole + 32 + 64 * j, group + 2 * m + 4 * m * j, 4 * std::size_t(m));
}

// The integer level of element e (< 32) of block l of a group of m blocks at `group`: q8_0's q,
// q4_0's nibble - 8.
template <class Repacked>
inline int repacked_level(const std::uint8_t* group, int m, int l, int e) noexcept {
    constexpr bool q8 = std::is_same_v<Repacked, block_q8_0_r16>;
    const std::uint8_t byte = group[2 * m + 4 * m * (q8 ? e / 4 : e % 16 / 4) + 4 * l + e % 4];
    return q8 ? byte - 128 : (e < 16 ? byte & 0x0f : byte >> 4) - 8;
}

}  // namespace detail

// y[0, n) = the weights of a repacked row of n / 32 blocks (exact, as dequantize_row of the row
// before repacking).
template <class Repacked>
requires repacked_block<Repacked>
inline void dequantize_repacked_row(const Repacked* x, float* y, std::int64_t n) noexcept {
    const auto* row = reinterpret_cast<const std::uint8_t*>(x);
    const std::int64_t nb = n / 32;
    for (std::int64_t g = 0; g < nb; g += 16) {
        const int m = static_cast<int>(std::min<std::int64_t>(16, nb - g));
        const std::uint8_t* group = row + static_cast<std::int64_t>(sizeof(Repacked)) * g;
        for (int l = 0; l < m; ++l) {
            packed_half h;
            std::memcpy(h.bytes, group + 2 * l, 2);
            const float d = h.to_float();
            float* out = y + 32 * (g + l);
            for (int e = 0; e < 32; ++e)
                out[e] = d * static_cast<float>(detail::repacked_level<Repacked>(group, m, l, e));
        }
    }
}

}  // namespace nexttok

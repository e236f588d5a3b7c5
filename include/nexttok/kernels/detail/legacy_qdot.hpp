// Integer kernels for q4_1, q5_0, q5_1 and iq4_nl weights (legacy_quant_blocks.hpp), and q4_0's
// portable one, against the activations' per-32 quantization (q8_act_row: ggml pairs q4_1 and q5_1
// with q8_1, d and d * sum per block, q4_0, q5_0 and iq4_nl with q8_0). Internal: quant_act.hpp
// includes this file, and matmul reaches it through qdot_block_range.
//
// One float order on every instruction set, so that the AVX-512, AVX2 and portable builds give
// bitwise the same outputs. The accumulators of output (r, t) are the 16 floats of its slot,
// acc[0, 16), starting at +0. Lane l belongs to half h = l % 2 of every block b with
// b % 8 == l / 2: the half's elements are those of quant bytes 4h .. 4h + 3 and 8 + 4h .. 8 + 4h + 3
// (low nibbles: elements e with e % 16 / 4 in {h, h + 2}; high nibbles: the same plus 16), its
// integer sum s = sum_e v_e xq_e exact in int32, v_e the element's integer level (q4_1, q5_1: q,
// 0..15 or 0..31; q4_0: q - 8; q5_0: q - 16; iq4_nl: the table value) and xq_e its 8-bit activation. Blocks go
// in ascending order; block b does, for its two halves,
//   acc[l] = fma(float(s), d * dx, acc[l])           d: the weight block's scale, dx: the
//                                                    activation block's (d * dx rounded once)
// and for q4_1 and q5_1 then, in lane 2 (b % 8) only,
//   acc[l] = fma(m, dsum, acc[l])                    m: the block's minimum, dsum = dx * sum xq
// The output is the 16 lanes reduced by the fixed tree lane j + lane j + 8, then + 4, + 2, + 1
// (qdot_result in q8_k_act.hpp; _mm512_reduce_add_ps and simd::reduce16 add in this order). A block that a
// kernel reads past the row's end (a partial group) has zero weights, scales and activations:
// fma(0, 0, acc) == acc, as acc is never -0 (it starts at +0, and a rounded sum is -0 only when
// both terms are). So a range may end anywhere and starts at a multiple of 8 blocks.
//
// AVX-512 takes an octet of 8 blocks per step, which fills the 16 lanes: the lanes of q4_0's
// kernel and of the activations' octet grouping (q8_act_row::octet_qs). AVX2 takes 4 blocks, lanes 0-7
// or 8-15, and the portable code one block at a time.
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#include <nexttok/tensor/legacy_quant_blocks.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

// The 32-element block types whose integer kernels are in legacy_qdot_*.hpp.
template <class Block>
concept legacy_int8_block = std::is_same_v<Block, block_q4_1> || std::is_same_v<Block, block_q5_0> ||
    std::is_same_v<Block, block_q5_1> || std::is_same_v<Block, block_iq4_nl>;

// And q4_0, whose AVX-512 and AVX2 kernels (quant_act_avx512.hpp, quant_act_avx2.hpp) have this
// order too: the portable kernels of these types.
template <class Block>
concept legacy_order_block = legacy_int8_block<Block> || std::is_same_v<Block, block_q4_0>;

template <class Block>
inline constexpr bool legacy_has_min = std::is_same_v<Block, block_q4_1> || std::is_same_v<Block, block_q5_1>;

// The 32 integer levels v_e of a block (element order).
template <class Block>
inline void legacy_levels(const Block& w, int (&v)[32]) noexcept {
    std::uint32_t qh = 0;
    if constexpr (std::is_same_v<Block, block_q5_0> || std::is_same_v<Block, block_q5_1>) qh = load_qh(w.qh);
    unpack_levels(w.qs, qh, v);
    for (int e = 0; e < 32; ++e) {
        if constexpr (std::is_same_v<Block, block_q4_0>)
            v[e] -= 8;
        else if constexpr (std::is_same_v<Block, block_q5_0>)
            v[e] -= 16;
        else if constexpr (std::is_same_v<Block, block_iq4_nl>)
            v[e] = iq4_nl_values[v[e]];
    }
}

// Block b's step of the order above on the 16 lanes `lanes`, from its halves' integer sums.
// (Explicit fused multiply-adds: left to the compiler, contraction would depend on the flags.)
template <class Block>
inline void legacy_step(const Block& w, std::int64_t b, const std::int32_t (&s)[2], float dx, float dsum,
                        float* lanes) noexcept {
    float* l = lanes + 2 * (b % 8);
    const float scale = kernel_detail::simd::half_to_float(w.d) * dx;
    for (int h = 0; h < 2; ++h) l[h] = std::fma(static_cast<float>(s[h]), scale, l[h]);
    if constexpr (legacy_has_min<Block>) l[0] = std::fma(kernel_detail::simd::half_to_float(w.m), dsum, l[0]);
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

// After the helpers above: quant_act.hpp includes this file in its middle, and these files need
// q8_act_row from it.

#include <nexttok/kernels/detail/legacy_qdot_avx2.hpp>
#include <nexttok/kernels/detail/legacy_qdot_avx512.hpp>
#include <nexttok/kernels/detail/legacy_qdot_portable.hpp>

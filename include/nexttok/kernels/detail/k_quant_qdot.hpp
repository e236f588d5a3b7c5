// Integer kernels for q2_k, q3_k and iq4_xs weights (k_quant_blocks.hpp), against the activations'
// per-256 quantization (q8_act_row::q8k_qs, q8k_scales, q8k_sums16: llama.cpp's q8_K, the vec_dot_type ggml
// gives these three types). Internal: quant_act.hpp includes this file, and matmul reaches it
// through qdot_block_range.
//
// One float order on every instruction set, so that the AVX-512, AVX2 and portable builds give
// bitwise the same outputs. The accumulators of output (r, t) are the 16 floats of its slot,
// acc[0, 16), starting at +0. Lane k (0..15) belongs to bytes 4k .. 4k + 3 of each 64-byte step
// p < 4 of a block's activations in q8k_qs (q8_k_order: step p holds element blocks 2p, 2p + 1 of
// that order); for weight block b its integer sum L_k, exact in int32, is
//   q2_k:   sum over those 16 bytes of sc(e) q_e xq_e                 (q 0..3, sc 0..15)
//   q3_k:   sum of (s(e) - 32) (q_e + 4) xq_e, and for k < 8 minus 4 ((s_2k - 32) bsum16_2k +
//           (s_2k+1 - 32) bsum16_2k+1): in all, sum_e (s(e) - 32) q_e xq_e, q in -4..3
//   iq4_xs: sum of (ls(e) - 32) value_e xq_e
// (e: the element whose activation sits at that byte; sc, s, ls the scale of its sub-block), and
// for q2_k also, for k < 8, M_k = m_2k bsum16_2k + m_2k+1 bsum16_2k+1. Blocks go in ascending
// order; block b does, with dx = q8k_scales[b] and the block's half-precision d (and dmin),
//   acc[k] = fma(float(L_k), d * dx, acc[k])             for k < 16  (d * dx rounded once)
//   acc[k] = fma(float(M_k), -(dmin * dx), acc[k])       for k < 8   (q2_k only)
// Every L_k and M_k is below 2^24 in magnitude, so float() is exact. The output is the 16 lanes
// reduced by the fixed tree lane j + lane j + 8, then + 4, + 2, + 1 (qdot_result in
// q8_k_act.hpp; _mm512_reduce_add_ps and simd::reduce16 add in this order, as legacy_qdot.hpp notes). A range
// may start and end at any block.
//
// AVX-512 takes a step per instruction (the 16 lanes); AVX2 an element block of 32 at a time,
// whose 8 int32 lanes are lanes 0-7 (steps' first halves, positions 0, 2, 4, 6 of q8k_qs) or 8-15;
// the portable code the lanes one by one.
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#include <nexttok/tensor/k_quant_blocks.hpp>

#include <cmath>
#include <cstdint>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

// The element whose activation sits at byte `pos` of a block's q8k_qs.
inline int q8_k_element(int pos) noexcept { return 32 * q8_k_order[pos / 32] + pos % 32; }

// Blocks [b0, b1) of NR rows x NT tokens in the order above. K (one per instruction set) holds a
// slot's 16 lanes in K::lanes (load, store), turns a weight block into registers once
// (K::prepare) and adds its step with one token's activations (K::step); the prepared weights
// serve the NT tokens of the tile.
template <class K, int NR, int NT, class Block>
inline void k_quant_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                          float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    typename K::lanes a[NR][NT];
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) a[r][t] = K::load(acc + r * ld + t * simd::acc_slot);
    for (std::int64_t b = b0; b < b1; ++b) {
        pf.advance(NR * sizeof(Block));
        NEXTTOK_UNROLL
        for (int r = 0; r < NR; ++r) {
            const Block& wb = w[r][b];
            if constexpr (NT == 1) prefetch_near<near_steps * sizeof(Block), sizeof(Block)>(&wb);
            const auto& prepared = K::prepare(wb);
            NEXTTOK_UNROLL
            for (int t = 0; t < NT; ++t) K::step(a[r][t], prepared, wb, *x[t], b);
        }
    }
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) K::store(a[r][t], acc + r * ld + t * simd::acc_slot);
}

// The portable kernels: the lanes one by one, from the definitions above.
struct k_quant_portable {
    struct lanes {
        float v[16];
    };
    static lanes load(const float* slot) noexcept {
        lanes l;
        for (int k = 0; k < 16; ++k) l.v[k] = slot[k];
        return l;
    }
    static void store(const lanes& l, float* slot) noexcept {
        for (int k = 0; k < 16; ++k) slot[k] = l.v[k];
    }

    // A block's integer weight (q2_k: 0..3, q3_k: q + 4, 0..7, iq4_xs: the level) and sub-block
    // scale of each element (q2_k: 0..15, others -32..31), and q2_k's minimums.
    struct levels {
        int q[256];
        int scale[256];
        int min[16];
    };
    static levels prepare(const block_q2_k& w) noexcept {
        levels r;
        for (int e = 0; e < 256; ++e) {
            const int h = e / 128, j = e % 128 / 32, l = e % 32;
            r.q[e] = (w.qs[32 * h + l] >> (2 * j)) & 3;
            r.scale[e] = w.scales[e / 16] & 0x0f;
        }
        for (int i = 0; i < 16; ++i) r.min[i] = w.scales[i] >> 4;
        return r;
    }
    static levels prepare(const block_q3_k& w) noexcept {
        levels r;
        int sc[16];
        unpack_q3_k_scales(w.scales, sc);
        for (int e = 0; e < 256; ++e) {
            const int h = e / 128, j = e % 128 / 32, l = e % 32;
            r.q[e] = ((w.qs[32 * h + l] >> (2 * j)) & 3) + 4 * ((w.hmask[l] >> (4 * h + j)) & 1);
            r.scale[e] = sc[e / 16];
        }
        for (int i = 0; i < 16; ++i) r.min[i] = sc[i];  // for the "- 4" terms
        return r;
    }
    static levels prepare(const block_iq4_xs& w) noexcept {
        levels r;
        int sc[8];
        unpack_iq4_xs_scales(w, sc);
        for (int e = 0; e < 256; ++e) {
            const std::uint8_t byte = w.qs[16 * (e / 32) + e % 16];
            r.q[e] = iq4_nl_values[e % 32 < 16 ? (byte & 0x0f) : (byte >> 4)];
            r.scale[e] = sc[e / 32];
        }
        return r;
    }

    // L_k (and M_k) as defined above.
    template <class Block>
    static void step(lanes& a, const levels& p, const Block& w, const q8_act_row& x, std::int64_t b) noexcept {
        const std::int8_t* xq = x.q8k_qs + 256 * b;
        const float dx = x.q8k_scales[b];
        const float scale = kernel_detail::simd::half_to_float(w.d) * dx;
        for (int k = 0; k < 16; ++k) {
            std::int32_t sum = 0;
            for (int s = 0; s < 4; ++s)
                for (int c = 0; c < 4; ++c) {
                    const int pos = 64 * s + 4 * k + c, e = q8_k_element(pos);
                    sum += p.scale[e] * p.q[e] * xq[pos];
                }
            if constexpr (std::is_same_v<Block, block_q3_k>)
                if (k < 8)
                    sum -= 4 * (p.min[2 * k] * x.q8k_sums16[16 * b + 2 * k] +
                                p.min[2 * k + 1] * x.q8k_sums16[16 * b + 2 * k + 1]);
            a.v[k] = std::fma(static_cast<float>(sum), scale, a.v[k]);
        }
        if constexpr (std::is_same_v<Block, block_q2_k>) {
            const std::int16_t* bsum16 = x.q8k_sums16 + 16 * b;
            const float min_scale = -(kernel_detail::simd::half_to_float(w.dmin) * dx);
            for (int k = 0; k < 8; ++k) {
                const std::int32_t m = p.min[2 * k] * bsum16[2 * k] + p.min[2 * k + 1] * bsum16[2 * k + 1];
                a.v[k] = std::fma(static_cast<float>(m), min_scale, a.v[k]);
            }
        }
    }
};

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

// The kernels of this build's instruction set (each file defines kernel_detail::qdot_range for the three
// block types over its own K); the portable ones here.
#if defined(NEXTTOK_KERNELS_INT8_AVX512)
#include <nexttok/kernels/detail/k_quant_qdot_zmm.hpp>
#elif defined(NEXTTOK_KERNELS_INT8_AVX2)
#include <nexttok/kernels/detail/k_quant_qdot_avx2.hpp>
#else
namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

template <int NR, int NT, class Block>
requires is_k_quant_int8_block<Block>
inline void qdot_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1, float* acc,
                       std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    k_quant_range<k_quant_portable, NR, NT>(w, x, b0, b1, acc, ld, pf);
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail
#endif

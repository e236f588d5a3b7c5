// The AVX2 steps of q2_k, q3_k and iq4_xs blocks against the per-256 activations, in the lanes
// and float order of k_quant_qdot.hpp. One element block of 32 at a time (its activations at
// position q8_k_order[j] of q8k_qs: lanes 0-7 for an even position, 8-15 for an odd one):
//   q2_k, q3_k: unsigned quants (0..3, or q + 4 in 0..7 for q3_k) times signed activations summed
//     in pairs (vpmaddubsw), times the two sub-blocks' scales as words (vpmaddwd); lanes 0-7 then
//     take q3_k's "- 4" terms, q2_k's minimums go in by their own multiply-add.
//   iq4_xs: |level| times the activations with the level's sign (vpsignb, vpmaddubsw: at most
//     2 x 127 x 127), times the sub-block's scale (vpmaddwd).
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#if defined(NEXTTOK_KERNELS_INT8_AVX2)

#include <cstdint>
#include <cstring>

NEXTTOK_INTRINSICS_BEGIN

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

// The 16 signed scales s_i - 32 of a q3_k block as bytes (see k_quant_blocks.hpp). The 16-byte
// load ends at the last scale byte, inside the block.
inline __m128i q3_k_scales_i8(const block_q3_k& w) noexcept {
    const __m128i v = _mm_srli_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q3_k_scales_minus_4(w))), 4);
    const __m128i m4 = _mm_set1_epi8(0x0f);
    const __m128i low = _mm_unpacklo_epi64(_mm_and_si128(v, m4), _mm_and_si128(_mm_srli_epi16(v, 4), m4));
    const __m128i top = _mm_shuffle_epi8(v, _mm_set_epi8(11, 10, 9, 8, 11, 10, 9, 8, 11, 10, 9, 8, 11, 10, 9, 8));
    const __m128i high = _mm_and_si128(_mm_srlv_epi32(top, _mm_set_epi32(6, 4, 2, 0)), _mm_set1_epi8(3));
    return _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32));
}

struct k_quant_avx2 {
    struct lanes {
        __m256 lo, hi;  // lanes 0-7, 8-15
    };
    static lanes load(const float* slot) noexcept { return {_mm256_load_ps(slot), _mm256_load_ps(slot + 8)}; }
    static void store(const lanes& a, float* slot) noexcept {
        _mm256_store_ps(slot, a.lo);
        _mm256_store_ps(slot + 8, a.hi);
    }

    struct q2_weights {
        __m256i q[8];   // element block j's quants (0..3, or q + 4 for q3_k)
        __m256i sc[8];  // its two sub-blocks' scales: words 0-7 and 8-15
        __m256i m16;    // q2_k: the 16 minimums; q3_k: the 16 scales, as words
    };
    struct q3_weights : q2_weights {};
    struct iq4_weights {
        __m256i level[8];  // element block j's levels
        __m256i abs[8];    // and their magnitudes
        __m256i sc[8];     // its scale in every word
    };

    // Words 0-7 of sc[j]: word 2j of s16; words 8-15: word 2j + 1.
    static void pick_words(__m256i s16, __m256i (&sc)[8]) noexcept {
        const __m256i pick = _mm256_set_epi8(3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                                             0, 1, 0, 1, 0, 1, 0);
        NEXTTOK_UNROLL
        for (int j = 0; j < 8; ++j)
            sc[j] = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(s16, _mm256_set1_epi32(j)), pick);
    }

    // Element block j = 4h + k: bits 2k, 2k + 1 of qs[32h, 32h + 32).
    static void two_bit_fields(const std::uint8_t* qs, __m256i (&q)[8]) noexcept {
        const __m256i three = _mm256_set1_epi8(3);
        const __m256i a[2] = {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32))};
        NEXTTOK_UNROLL
        for (int j = 0; j < 8; ++j) q[j] = _mm256_and_si256(_mm256_srli_epi16(a[j / 4], 2 * (j % 4)), three);
    }

    static q2_weights prepare(const block_q2_k& w) noexcept {
        q2_weights r;
        two_bit_fields(w.qs, r.q);
        const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales));
        const __m128i m4 = _mm_set1_epi8(0x0f);
        pick_words(_mm256_cvtepu8_epi16(_mm_and_si128(raw, m4)), r.sc);
        r.m16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(raw, 4), m4));
        return r;
    }

    static q3_weights prepare(const block_q3_k& w) noexcept {
        q3_weights r;
        two_bit_fields(w.qs, r.q);
        const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.hmask));
        const __m256i one = _mm256_set1_epi8(1);
        NEXTTOK_UNROLL
        for (int j = 0; j < 8; ++j) {  // bit j of hmask[l]: the high bit of element block j
            const __m256i bit = _mm256_and_si256(_mm256_srli_epi16(h, j), one);
            r.q[j] = _mm256_or_si256(r.q[j], _mm256_slli_epi16(bit, 2));
        }
        r.m16 = _mm256_cvtepi8_epi16(q3_k_scales_i8(w));
        pick_words(r.m16, r.sc);
        return r;
    }

    static iq4_weights prepare(const block_iq4_xs& w) noexcept {
        iq4_weights r;
        const __m256i table =
            _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(iq4_nl_values)));
        const __m256i m4 = _mm256_set1_epi8(0x0f);
        int sc[8];
        unpack_iq4_xs_scales(w, sc);
        NEXTTOK_UNROLL
        for (int j = 0; j < 8; ++j) {  // low nibbles: elements 0-15, high: 16-31
            const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.qs + 16 * j));
            const __m256i nibbles = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), m4);
            r.level[j] = _mm256_shuffle_epi8(table, nibbles);
            r.abs[j] = _mm256_abs_epi8(r.level[j]);
            r.sc[j] = _mm256_set1_epi16(static_cast<short>(sc[j]));
        }
        return r;
    }

    // The int32 lanes 0-7 and 8-15 of sum_j (quants x activations summed in pairs) x scales.
    static void scaled_pairs(const q2_weights& p, const std::int8_t* xq, __m256i (&sum)[2]) noexcept {
        sum[0] = sum[1] = _mm256_setzero_si256();
        NEXTTOK_UNROLL
        for (int j = 0; j < 8; ++j) {
            const int pos = q8_k_order[j];
            const __m256i x = _mm256_load_si256(reinterpret_cast<const __m256i*>(xq + 32 * pos));
            sum[pos % 2] = _mm256_add_epi32(sum[pos % 2], _mm256_madd_epi16(_mm256_maddubs_epi16(p.q[j], x), p.sc[j]));
        }
    }

    static __m256i load_bsum16(const q8_act_row& x, std::int64_t b) noexcept {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q8k_sums16 + 16 * b));
    }

    static void add_block(lanes& a, const __m256i (&sum)[2], float scale) noexcept {
        const __m256 s = _mm256_set1_ps(scale);
        a.lo = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[0]), s, a.lo);
        a.hi = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[1]), s, a.hi);
    }

    static void step(lanes& a, const q2_weights& p, const block_q2_k& w, const q8_act_row& x, std::int64_t b) noexcept {
        const float dx = x.q8k_scales[b];
        __m256i sum[2];
        scaled_pairs(p, x.q8k_qs + 256 * b, sum);
        add_block(a, sum, kernel_detail::simd::half_to_float(w.d) * dx);
        const __m256i mins = _mm256_madd_epi16(p.m16, load_bsum16(x, b));
        a.lo = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mins),
                               _mm256_set1_ps(-(kernel_detail::simd::half_to_float(w.dmin) * dx)), a.lo);
    }

    static void step(lanes& a, const q3_weights& p, const block_q3_k& w, const q8_act_row& x, std::int64_t b) noexcept {
        __m256i sum[2];
        scaled_pairs(p, x.q8k_qs + 256 * b, sum);
        sum[0] = _mm256_sub_epi32(sum[0], _mm256_slli_epi32(_mm256_madd_epi16(p.m16, load_bsum16(x, b)), 2));
        add_block(a, sum, kernel_detail::simd::half_to_float(w.d) * x.q8k_scales[b]);
    }

    static void step(lanes& a, const iq4_weights& p, const block_iq4_xs& w, const q8_act_row& x,
                     std::int64_t b) noexcept {
        const std::int8_t* xq = x.q8k_qs + 256 * b;
        __m256i sum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
        NEXTTOK_UNROLL
        for (int j = 0; j < 8; ++j) {
            const int pos = q8_k_order[j];
            const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(xq + 32 * pos));
            const __m256i pairs = _mm256_maddubs_epi16(p.abs[j], _mm256_sign_epi8(v, p.level[j]));
            sum[pos % 2] = _mm256_add_epi32(sum[pos % 2], _mm256_madd_epi16(pairs, p.sc[j]));
        }
        add_block(a, sum, kernel_detail::simd::half_to_float(w.d) * x.q8k_scales[b]);
    }
};

template <int NR, int NT, class Block>
requires is_k_quant_int8_block<Block>
inline void qdot_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1, float* acc,
                       std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    k_quant_range<k_quant_avx2, NR, NT>(w, x, b0, b1, acc, ld, pf);
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

NEXTTOK_INTRINSICS_END

#endif

// The AVX-512 (BW, DQ, VL, VBMI, VNNI) steps of q2_k, q3_k and iq4_xs blocks against the per-256
// activations, in the lanes and float order of k_quant_qdot.hpp. A block is four steps of 64
// activation bytes: step p holds element blocks (of 32) q8_k_order[2p], q8_k_order[2p + 1] = (0, 2),
// (1, 3), (4, 6), (5, 7), so step p's weights are quarter pair (p % 2, p % 2 + 2) of half p / 2,
// which is how q2_k and q3_k store their 2-bit fields (one 32-byte stretch per half, shifted by 2
// per quarter). Per step, unsigned weights times signed activations summed in pairs (vpmaddubsw:
// at most 2 x 127 x 127), times the sub-blocks' scales as words and summed in pairs into int32
// lane k (vpdpwssd: bytes 4k .. 4k + 3):
//   q2_k: the quants 0..3; its minimums' terms M_k by vpmaddwd of the minimums and bsum16.
//   q3_k: q + 4 (0..7); lanes 0-7 then less 4 (s_2k bsum16_2k + s_2k+1 bsum16_2k+1).
//   iq4_xs: |level| (vpshufb), the activations negated where the level is negative.
// Then per block one conversion and one multiply-add into the 16 float lanes (q2_k: two).
// Rows go in pairs whose blocks' scales are unpacked together, and the 2-bit fields come out of one
// affine transform each where GFNI is there. (In-cache 1.1B-shaped decode tiles, 1 thread, ns per
// block and row, q2_k / q3_k / iq4_xs, q4_k 4.0 beside them: 5.23 / 7.02 / 7.05 one row at a time
// with shifts and masks -> 5.19 / 6.27 / 6.70.)
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#if defined(NEXTTOK_KERNELS_INT8_AVX512)

#include <algorithm>
#include <cstdint>
#include <cstring>

NEXTTOK_INTRINSICS_BEGIN

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

struct k_quant_index {
    alignas(64) std::uint16_t w[32];
};
struct k_quant_indexes4 {
    k_quant_index ix[4];
};

// Step p: word k (bytes 2k, 2k + 1 of the step) lies in sub-block (of 16) 2 q8_k_order[2p + k / 16]
// + k % 16 / 8 (vpermw index over the 16 scales as words, which start at word `first`).
inline constexpr k_quant_indexes4 sub16_pick(int first) {
    k_quant_indexes4 p{};
    for (int s = 0; s < 4; ++s)
        for (int k = 0; k < 32; ++k)
            p.ix[s].w[k] = static_cast<std::uint16_t>(first + 2 * q8_k_order[2 * s + k / 16] + k % 16 / 8);
    return p;
}
// Step p: word k lies in sub-block (of 32) q8_k_order[2p + k / 16] (vpermw index over the 8 scales,
// from word `first`).
inline constexpr k_quant_indexes4 sub32_pick(int first) {
    k_quant_indexes4 p{};
    for (int s = 0; s < 4; ++s)
        for (int k = 0; k < 32; ++k) p.ix[s].w[k] = static_cast<std::uint16_t>(first + q8_k_order[2 * s + k / 16]);
    return p;
}
// A row pair's scales as words: the first row's from word 0, the second's after them.
inline constexpr k_quant_indexes4 k_quant_sub16_pick[2] = {sub16_pick(0), sub16_pick(16)};
inline constexpr k_quant_indexes4 k_quant_sub32_pick[2] = {sub32_pick(0), sub32_pick(8)};

// |iq4_nl_values|, as unsigned bytes for vpshufb.
struct k_quant_table {
    alignas(16) std::uint8_t b[16];
};
inline constexpr k_quant_table iq4_magnitudes = [] {
    k_quant_table t{};
    for (int i = 0; i < 16; ++i)
        t.b[i] = static_cast<std::uint8_t>(iq4_nl_values[i] < 0 ? -iq4_nl_values[i] : iq4_nl_values[i]);
    return t;
}();

inline __m512i k_quant_load(const k_quant_index& ix) noexcept { return _mm512_load_si512(ix.w); }

// 32 bytes from p in both 256-bit halves.
inline __m512i broadcast_32_bytes(const std::uint8_t* p) noexcept {
    return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// The 16 signed scales s_i - 32 of q3_k blocks a and b as words, a's in the low 256 bits (i < 8:
// low nibbles of bytes 0-7, i >= 8: their high nibbles; top 2 bits: bits 2 (i / 4), + 1 of byte
// 8 + i % 4). The 16-byte loads end at the last scale byte, inside the blocks. (Two rows at once:
// the unpacking is shared.)
inline __m512i q3_k_scales_i16(const block_q3_k& a, const block_q3_k& b) noexcept {
    const __m256i u = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q3_k_scales_minus_4(a)))),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(q3_k_scales_minus_4(b))), 1);
    const __m256i v = _mm256_srli_si256(u, 4);
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i low = _mm256_unpacklo_epi64(_mm256_and_si256(v, m4), _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
    const __m256i top = _mm256_shuffle_epi8(v, _mm256_set_epi8(11, 10, 9, 8, 11, 10, 9, 8, 11, 10, 9, 8, 11, 10, 9, 8,
                                                               11, 10, 9, 8, 11, 10, 9, 8, 11, 10, 9, 8, 11, 10, 9, 8));
    const __m256i high =
        _mm256_and_si256(_mm256_srlv_epi32(top, _mm256_set_epi32(6, 4, 2, 0, 6, 4, 2, 0)), _mm256_set1_epi8(3));
    return _mm512_cvtepi8_epi16(
        _mm256_sub_epi8(_mm256_or_si256(low, _mm256_slli_epi16(high, 4)), _mm256_set1_epi8(32)));
}

// The 8 signed scales ls_ib - 32 of iq4_xs blocks a and b as words, a's in words 0-7.
inline __m256i iq4_xs_scales_i16(const block_iq4_xs& a, const block_iq4_xs& b) noexcept {
    std::uint32_t la, lb;
    std::uint16_t ha, hb;
    std::memcpy(&la, a.scales_l, 4);
    std::memcpy(&ha, a.scales_h, 2);
    std::memcpy(&lb, b.scales_l, 4);
    std::memcpy(&hb, b.scales_h, 2);
    const __m512i l =
        _mm512_inserti64x4(_mm512_set1_epi32(static_cast<int>(la)), _mm256_set1_epi32(static_cast<int>(lb)), 1);
    const __m512i h = _mm512_inserti64x4(_mm512_set1_epi32(ha), _mm256_set1_epi32(hb), 1);
    const __m512i low = _mm512_and_si512(
        _mm512_srlv_epi32(l, _mm512_set_epi32(28, 24, 20, 16, 12, 8, 4, 0, 28, 24, 20, 16, 12, 8, 4, 0)),
        _mm512_set1_epi32(15));
    const __m512i high =
        _mm512_and_si512(_mm512_srlv_epi32(h, _mm512_set_epi32(14, 12, 10, 8, 6, 4, 2, 0, 14, 12, 10, 8, 6, 4, 2, 0)),
                         _mm512_set1_epi32(3));
    return _mm512_cvtepi32_epi16(
        _mm512_sub_epi32(_mm512_or_si512(low, _mm512_slli_epi32(high, 4)), _mm512_set1_epi32(32)));
}

struct k_quant_zmm {
    using lanes = __m512;
    static lanes load(const float* slot) noexcept { return _mm512_load_ps(slot); }
    static void store(lanes a, float* slot) noexcept { _mm512_store_ps(slot, a); }

    struct q2_weights {
        __m512i q[4];   // step p's quants, as bytes
        __m512i sc[4];  // step p's scales, as words
        __m256i m16;    // the 16 minimums, as words
    };
    struct q3_weights {
        __m512i q[4];   // q + 4 (0..7)
        __m512i sc[4];  // s_i - 32, as words
        __m256i s16;    // the 16 scales, as words
    };
    struct iq4_weights {
        __m512i q[4];      // |level|
        __m512i sc[4];     // s_ib - 32, as words
        __mmask64 neg[4];  // the bytes whose level is negative
    };

    // Step p's 2-bit fields: half p / 2, shifted by 2 (p % 2) in the low 256 bits, + 4 in the high.
    static void two_bit_fields(const std::uint8_t* qs, __m512i (&q)[4]) noexcept {
        const __m512i a0 = broadcast_32_bytes(qs), a1 = broadcast_32_bytes(qs + 32);
#if defined(NEXTTOK_KERNELS_GFNI)
        // (x >> s) & 3 of each byte in one affine transform (vgf2p8affineqb: bit i of the result is
        // the parity of x and byte 7 - i of the qword's matrix), s by qword.
        constexpr auto field = [](int s) {
            return static_cast<long long>((std::uint64_t{1} << s << 56) | (std::uint64_t{2} << s << 48));
        };
        const __m512i even =
            _mm512_set_epi64(field(4), field(4), field(4), field(4), field(0), field(0), field(0), field(0));
        const __m512i odd =
            _mm512_set_epi64(field(6), field(6), field(6), field(6), field(2), field(2), field(2), field(2));
        q[0] = _mm512_gf2p8affine_epi64_epi8(a0, even, 0);
        q[1] = _mm512_gf2p8affine_epi64_epi8(a0, odd, 0);
        q[2] = _mm512_gf2p8affine_epi64_epi8(a1, even, 0);
        q[3] = _mm512_gf2p8affine_epi64_epi8(a1, odd, 0);
#else
        const __m512i shift_even = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
        const __m512i shift_odd = _mm512_inserti64x4(_mm512_set1_epi16(2), _mm256_set1_epi16(6), 1);
        const __m512i three = _mm512_set1_epi8(3);
        q[0] = _mm512_and_si512(_mm512_srlv_epi16(a0, shift_even), three);
        q[1] = _mm512_and_si512(_mm512_srlv_epi16(a0, shift_odd), three);
        q[2] = _mm512_and_si512(_mm512_srlv_epi16(a1, shift_even), three);
        q[3] = _mm512_and_si512(_mm512_srlv_epi16(a1, shift_odd), three);
#endif
    }

    // sc[p] = the words of s that `pick` names for step p.
    static void pick_words(__m512i s, const k_quant_indexes4& pick, __m512i (&sc)[4]) noexcept {
        for (int p = 0; p < 4; ++p) sc[p] = _mm512_permutexvar_epi16(k_quant_load(pick.ix[p]), s);
    }

    // The scales of a row pair's blocks, unpacked together (`shared`); prepare takes row h's.
    struct q2_shared {
        __m512i sc;    // the 16 scales of each row as words
        __m512i mins;  // the 16 minimums of each row as words
    };
    static q2_shared shared(const block_q2_k& a, const block_q2_k& b) noexcept {
        const __m256i u =
            _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a.scales))),
                                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)), 1);
        const __m256i m4 = _mm256_set1_epi8(0x0f);
        return {_mm512_cvtepu8_epi16(_mm256_and_si256(u, m4)),
                _mm512_cvtepu8_epi16(_mm256_and_si256(_mm256_srli_epi16(u, 4), m4))};
    }
    static __m512i shared(const block_q3_k& a, const block_q3_k& b) noexcept { return q3_k_scales_i16(a, b); }
    static __m256i shared(const block_iq4_xs& a, const block_iq4_xs& b) noexcept { return iq4_xs_scales_i16(a, b); }

    static q2_weights prepare(const block_q2_k& w, const q2_shared& s, int h) noexcept {
        q2_weights r;
        two_bit_fields(w.qs, r.q);
        pick_words(s.sc, k_quant_sub16_pick[h], r.sc);
        r.m16 = h == 0 ? _mm512_castsi512_si256(s.mins) : _mm512_extracti64x4_epi64(s.mins, 1);
        return r;
    }

    static q3_weights prepare(const block_q3_k& w, __m512i s, int h) noexcept {
        q3_weights r;
        two_bit_fields(w.qs, r.q);
        // The high bit of step p: bit 4 (p / 2) + p % 2 of hmask[l] in the low 256 bits, + 2 in the high.
        const __m512i hm = broadcast_32_bytes(w.hmask);
        const __m512i four = _mm512_set1_epi8(4);
        for (int p = 0; p < 4; ++p) {
            const int bit = 4 * (p / 2) + p % 2;
            const __m512i sel = _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << bit)),
                                                   _mm256_set1_epi8(static_cast<char>(1 << (bit + 2))), 1);
            r.q[p] = _mm512_mask_add_epi8(r.q[p], _mm512_test_epi8_mask(hm, sel), r.q[p], four);
        }
        r.s16 = h == 0 ? _mm512_castsi512_si256(s) : _mm512_extracti64x4_epi64(s, 1);
        pick_words(s, k_quant_sub16_pick[h], r.sc);
        return r;
    }

    static iq4_weights prepare(const block_iq4_xs& w, __m256i s, int h) noexcept {
        iq4_weights r;
        const __m512i table =
            _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(iq4_magnitudes.b)));
        const __m512i m4 = _mm512_set1_epi8(0x0f);
        const __m512i a = _mm512_loadu_si512(w.qs), b = _mm512_loadu_si512(w.qs + 64);
        // 128-bit lane k of la / ha: the low / high nibbles of sub-block k (lb, hb: 4 + k).
        const __m512i la = _mm512_and_si512(a, m4), ha = _mm512_and_si512(_mm512_srli_epi16(a, 4), m4);
        const __m512i lb = _mm512_and_si512(b, m4), hb = _mm512_and_si512(_mm512_srli_epi16(b, 4), m4);
        // Step p: sub-blocks (0, 2), (1, 3) of a, then of b, each as its low then high nibbles.
        const __m512i even = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0),
                      odd = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
        const __m512i nibbles[4] = {_mm512_permutex2var_epi64(la, even, ha), _mm512_permutex2var_epi64(la, odd, ha),
                                    _mm512_permutex2var_epi64(lb, even, hb), _mm512_permutex2var_epi64(lb, odd, hb)};
        const __m512i eight = _mm512_set1_epi8(8);
        for (int p = 0; p < 4; ++p) {
            r.q[p] = _mm512_shuffle_epi8(table, nibbles[p]);
            r.neg[p] = _mm512_testn_epi8_mask(nibbles[p], eight);  // levels 0-7 are the negative ones
        }
        pick_words(_mm512_castsi256_si512(s), k_quant_sub32_pick[h], r.sc);
        return r;
    }

    // sum_p (weights x activations summed in pairs) x scales, summed in pairs: lane k.
    template <class Weights>
    static __m512i scaled_pairs(const Weights& p, const std::int8_t* xq) noexcept {
        __m512i sum = _mm512_setzero_si512();
        for (int s = 0; s < 4; ++s)
            sum = _mm512_dpwssd_epi32(sum, _mm512_maddubs_epi16(p.q[s], _mm512_load_si512(xq + 64 * s)), p.sc[s]);
        return sum;
    }

    static __m256i load_bsum16(const q8_act_row& x, std::int64_t b) noexcept {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q8k_sums16 + 16 * b));
    }

    static void step(lanes& a, const q2_weights& p, const block_q2_k& w, const q8_act_row& x, std::int64_t b) noexcept {
        const float dx = x.q8k_scales[b];
        const __m512i sum = scaled_pairs(p, x.q8k_qs + 256 * b);
        a = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_set1_ps(kernel_detail::simd::half_to_float(w.d) * dx), a);
        // Lanes 8-15 meet 0 x -(dmin dx) = -0: unchanged, as the portable code leaves them.
        const __m256i mins = _mm256_madd_epi16(p.m16, load_bsum16(x, b));
        a = _mm512_fmadd_ps(_mm512_zextps256_ps512(_mm256_cvtepi32_ps(mins)),
                            _mm512_set1_ps(-(kernel_detail::simd::half_to_float(w.dmin) * dx)), a);
    }

    static void step(lanes& a, const q3_weights& p, const block_q3_k& w, const q8_act_row& x, std::int64_t b) noexcept {
        const __m256i corr = _mm256_slli_epi32(_mm256_madd_epi16(p.s16, load_bsum16(x, b)), 2);
        const __m512i sum = _mm512_sub_epi32(scaled_pairs(p, x.q8k_qs + 256 * b), _mm512_zextsi256_si512(corr));
        a = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum),
                            _mm512_set1_ps(kernel_detail::simd::half_to_float(w.d) * x.q8k_scales[b]), a);
    }

    static void step(lanes& a, const iq4_weights& p, const block_iq4_xs& w, const q8_act_row& x,
                     std::int64_t b) noexcept {
        const std::int8_t* xq = x.q8k_qs + 256 * b;
        __m512i sum = _mm512_setzero_si512();
        for (int s = 0; s < 4; ++s) {
            const __m512i v = _mm512_load_si512(xq + 64 * s);
            const __m512i signed_x = _mm512_mask_sub_epi8(v, p.neg[s], _mm512_setzero_si512(), v);
            sum = _mm512_dpwssd_epi32(sum, _mm512_maddubs_epi16(p.q[s], signed_x), p.sc[s]);
        }
        a = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum),
                            _mm512_set1_ps(kernel_detail::simd::half_to_float(w.d) * x.q8k_scales[b]), a);
    }
};

template <int NR, int NT, class Block>
requires is_k_quant_int8_block<Block>
inline void qdot_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1, float* acc,
                       std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    // k_quant_range's loop, by row pairs (the last may hold one row twice) whose scales are
    // unpacked together.
    using K = k_quant_zmm;
    constexpr int NP = (NR + 1) / 2;
    __m512 a[NR][NT];
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) a[r][t] = K::load(acc + r * ld + t * simd::acc_slot);
    for (std::int64_t b = b0; b < b1; ++b) {
        pf.advance(NR * sizeof(Block));
        NEXTTOK_UNROLL
        for (int p = 0; p < NP; ++p) {
            const int r = 2 * p, r1 = std::min(r + 1, NR - 1);
            const auto s = K::shared(w[r][b], w[r1][b]);
            NEXTTOK_UNROLL
            for (int h = 0; h < 2; ++h) {
                if (r + h >= NR) break;
                const Block& wb = w[r + h][b];
                if constexpr (NT == 1) prefetch_near<near_steps * sizeof(Block), sizeof(Block)>(&wb);
                const auto prepared = K::prepare(wb, s, h);
                NEXTTOK_UNROLL
                for (int t = 0; t < NT; ++t) K::step(a[r + h][t], prepared, wb, *x[t], b);
            }
        }
    }
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) K::store(a[r][t], acc + r * ld + t * simd::acc_slot);
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

NEXTTOK_INTRINSICS_END

#endif

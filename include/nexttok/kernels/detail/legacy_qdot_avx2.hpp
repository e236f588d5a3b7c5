// The AVX2 kernels of q4_1, q5_0, q5_1 and iq4_nl (AVX2 + FMA without the AVX-512 integer set):
// the order of legacy_qdot.hpp four blocks at a time, one half of the 16 lanes (blocks b .. b + 3
// with b % 8 == 0 or 4 fill lanes 0-7 or 8-15). Internal (legacy_qdot.hpp).
//
// A pair of blocks' weights as bytes: lo = [block b's levels of elements 0-15 | block b + 1's],
// hi = the same for elements 16-31, against activations arranged to match (two lane permutations
// of the blocks' 32 bytes), so that int32 lane 4k + i of the dot is quarter i of block b + k
// (quant bytes 4i .. 4i + 3); a block's half h is its quarters h and h + 2, summed in int32.
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#if defined(NEXTTOK_KERNELS_INT8_AVX2)

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

NEXTTOK_INTRINSICS_BEGIN

// 32 bits as 32 bytes: byte i is 0x10 where bit i is set (the fifth bit of a 5-bit level).
inline __m256i legacy_fifth_bits(std::uint32_t bits) noexcept {
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(static_cast<int>(bits)),
        _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0x0000000000000000));
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

#if defined(NEXTTOK_KERNELS_VNNI256)
inline constexpr bool legacy_vnni = true;
#else
inline constexpr bool legacy_vnni = false;
#endif

// A pair of weight blocks unpacked: levels (unsigned, or iq4_nl's signed values without VNNI, or
// those plus 128 with it).
struct legacy_pair {
    __m256i lo, hi;
};

template <class Block>
inline legacy_pair legacy_unpack_pair(const Block* w, bool second) noexcept {
    legacy_pair p;
    const __m128i qa = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[0].qs));
    const __m128i qb = second ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[1].qs)) : _mm_setzero_si128();
    const __m256i q = _mm256_set_m128i(qb, qa);
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    p.lo = _mm256_and_si256(q, low4);
    p.hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
    if constexpr (std::is_same_v<Block, block_q5_0> || std::is_same_v<Block, block_q5_1>) {
        const std::uint32_t ha = load_qh(w[0].qh), hb = second ? load_qh(w[1].qh) : 0;
        p.lo = _mm256_or_si256(p.lo, legacy_fifth_bits((ha & 0xffffu) | (hb << 16)));
        p.hi = _mm256_or_si256(p.hi, legacy_fifth_bits((ha >> 16) | (hb & 0xffff0000u)));
    }
    if constexpr (std::is_same_v<Block, block_iq4_nl>) {
        alignas(16) std::int8_t table[16];
        for (int i = 0; i < 16; ++i) table[i] = static_cast<std::int8_t>(iq4_nl_values[i] + (legacy_vnni ? 128 : 0));
        const __m256i t = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(table)));
        p.lo = _mm256_shuffle_epi8(t, p.lo);
        p.hi = _mm256_shuffle_epi8(t, p.hi);
    }
    return p;
}

// Blocks a, a + 1 of one activation row, arranged as the pair's weights, and the correction of
// the levels' offset per quarter (q5_0: -16 sum xq; iq4_nl with VNNI: -128 sum xq).
template <class Block>
struct legacy_pair_act {
    __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256(), corr = _mm256_setzero_si256();
    legacy_pair_act() = default;  // a pair past the row: zeros
    legacy_pair_act(const q8_act_row& xr, std::int64_t a) noexcept {
        const __m256i xa = load32(xr.qs + 32 * a), xb = load32(xr.qs + 32 * a + 32);  // zero padded past the row
        lo = _mm256_permute2x128_si256(xa, xb, 0x20);
        hi = _mm256_permute2x128_si256(xa, xb, 0x31);
        constexpr int shift = std::is_same_v<Block, block_q5_0>                    ? 1
                              : std::is_same_v<Block, block_iq4_nl> && legacy_vnni ? 4
                                                                                   : 0;
        if constexpr (shift > 0) {  // minus8_sums: -8 sum of 4 values; a quarter is two of them
            const __m256i na = load32(xr.minus8_sums + 8 * a), nb = load32(xr.minus8_sums + 8 * a + 8);
            corr = _mm256_slli_epi32(
                _mm256_add_epi32(_mm256_permute2x128_si256(na, nb, 0x20), _mm256_permute2x128_si256(na, nb, 0x31)),
                shift);
        }
    }
};

// The pair's 8 quarter sums, exact in int32.
template <class Block>
inline __m256i legacy_pair_sums(const legacy_pair& w, const legacy_pair_act<Block>& x) noexcept {
    if constexpr (std::is_same_v<Block, block_iq4_nl> && !legacy_vnni) {
        // Signed levels: |v| times x with v's sign (|v| <= 127, so the 16-bit pair sums cannot saturate).
        const __m256i ones = _mm256_set1_epi16(1);
        const __m256i plo = _mm256_maddubs_epi16(_mm256_abs_epi8(w.lo), _mm256_sign_epi8(x.lo, w.lo));
        const __m256i phi = _mm256_maddubs_epi16(_mm256_abs_epi8(w.hi), _mm256_sign_epi8(x.hi, w.hi));
        return _mm256_add_epi32(_mm256_madd_epi16(plo, ones), _mm256_madd_epi16(phi, ones));
    } else {
        return dpbusd(dpbusd(x.corr, w.lo, x.lo), w.hi, x.hi);
    }
}

// The 8 half sums of blocks b .. b + 3 (lane 2k + h: half h of block b + k) from the quarter sums
// of pairs (b, b + 1) and (b + 2, b + 3).
inline __m256i legacy_half_sums(__m256i p01, __m256i p23) noexcept {
    const __m256i h01 =
        _mm256_add_epi32(p01, _mm256_shuffle_epi32(p01, _MM_SHUFFLE(1, 0, 3, 2)));  // lanes 0, 1 of each 128
    const __m256i h23 = _mm256_add_epi32(p23, _mm256_shuffle_epi32(p23, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(h01, h23), _MM_SHUFFLE(3, 1, 2, 0));
}

// Per float lane 2k + h of blocks b .. b + 3: f(block b + k), from four values.
inline __m256 legacy_lane_pairs(float v0, float v1, float v2, float v3) noexcept {
    return _mm256_set_ps(v3, v3, v2, v2, v1, v1, v0, v0);
}

template <int NR, int NT, class Block>
inline void legacy_avx2_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                              float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc8x2<NR, NT> a(acc, ld);
    auto quad = [&]<int H>(std::int64_t b) NEXTTOK_ALWAYS_INLINE {
        pf.advance(NR * 4 * sizeof(Block));
        prefetch_rows_near<NR, NT, near_blocks * sizeof(Block), 0>(w, b);
        const int n = static_cast<int>(std::min<std::int64_t>(4, b1 - b));  // blocks of the step in the row
        legacy_pair p[NR][2];
        __m256 wd[NR], wm[NR];
        for (int r = 0; r < NR; ++r) {
            const Block* wb = w[r] + b;
            p[r][0] = legacy_unpack_pair(wb, n > 1);
            if (n > 2)
                p[r][1] = legacy_unpack_pair(wb + 2, n > 3);
            else
                p[r][1] = legacy_pair{_mm256_setzero_si256(), _mm256_setzero_si256()};
            float d[4] = {}, m[4] = {};
            for (int k = 0; k < n; ++k) {
                d[k] = kernel_detail::simd::half_to_float(wb[k].d);
                if constexpr (legacy_has_min<Block>) m[k] = kernel_detail::simd::half_to_float(wb[k].m);
            }
            wd[r] = legacy_lane_pairs(d[0], d[1], d[2], d[3]);
            wm[r] = _mm256_set_ps(0, m[3], 0, m[2], 0, m[1], 0, m[0]);
        }
        for (int t = 0; t < NT; ++t) {
            const q8_act_row& xr = *x[t];
            // A pair's second block past the row meets the activations' zero padding (which covers
            // whole pairs); a pair wholly past it is not read.
            const legacy_pair_act<Block> x01(xr, b);
            const legacy_pair_act<Block> x23 = n > 2 ? legacy_pair_act<Block>(xr, b + 2) : legacy_pair_act<Block>();
            float dxk[4] = {}, dsk[4] = {};
            for (int k = 0; k < n; ++k) {
                dxk[k] = xr.lane_scales[8 * (b + k)];
                if constexpr (legacy_has_min<Block>) dsk[k] = xr.dsum[b + k];
            }
            const __m256 dx = legacy_lane_pairs(dxk[0], dxk[1], dxk[2], dxk[3]);
            const __m256 dsum = legacy_lane_pairs(dsk[0], dsk[1], dsk[2], dsk[3]);
            for (int r = 0; r < NR; ++r) {
                const __m256i s = legacy_half_sums(legacy_pair_sums(p[r][0], x01), legacy_pair_sums(p[r][1], x23));
                __m256& v = a.v[r][t][H];
                v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(wd[r], dx), v);
                if constexpr (legacy_has_min<Block>) v = _mm256_blend_ps(v, _mm256_fmadd_ps(wm[r], dsum, v), 0x55);
            }
        }
    };
    for_each_half_group<4>(b0, b1, quad);
    a.store(acc, ld);
}

template <int NR, int NT, legacy_int8_block Block>
inline void qdot_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1, float* acc,
                       std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    legacy_avx2_range<NR, NT>(w, x, b0, b1, acc, ld, pf);
}

NEXTTOK_INTRINSICS_END

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

#endif

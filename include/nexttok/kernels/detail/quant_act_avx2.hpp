// The int8 kernels of q8_0, q4_0 and q4_k with AVX2 (+ FMA, F16C: NEXTTOK_KERNELS_INT8_AVX2 in
// isa.hpp): one block per 256-bit step, vpdpbusd where the CPU has it (NEXTTOK_KERNELS_VNNI256),
// else maddubs and madd. Activation rows are quantized block by block (quant_act.hpp).
// Internal: quant_act.hpp includes this file in its middle.
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#if defined(NEXTTOK_KERNELS_INT8_AVX2)

#include <cmath>
#include <cstdint>
#include <cstring>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

NEXTTOK_INTRINSICS_BEGIN

template <class X>
inline void quantize_act_row(const q8_act_row& row, const X* x, std::int64_t n) noexcept {
    quantize_act_row_by_blocks(row, x, n);
}

// c + sum over each group of 4 bytes of u (unsigned) * v (signed), in 8 int32 lanes.
inline __m256i dpbusd(__m256i c, __m256i u, __m256i v) noexcept {
#if defined(NEXTTOK_KERNELS_VNNI256_EVEX)
    return _mm256_dpbusd_epi32(c, u, v);
#elif defined(NEXTTOK_KERNELS_VNNI256)
    return _mm256_dpbusd_avx_epi32(c, u, v);
#else
    // u <= 128 here (|q8_0| or a nibble), so the 16-bit pair sums cannot saturate.
    return _mm256_add_epi32(c, _mm256_madd_epi16(_mm256_maddubs_epi16(u, v), _mm256_set1_epi16(1)));
#endif
}

inline float reduce8(__m256 v) noexcept {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline __m256i load32(const void* p) noexcept { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// The 32 nibbles of 16 bytes as bytes: low nibbles first (elements 0..15), then high (16..31).
inline __m256i unpack_nibbles(const std::uint8_t* p) noexcept {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(q, 4), q);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0f));
}

// A half-precision scale in all 8 float lanes.
inline __m256 broadcast_half(const packed_half& h) noexcept {
    std::int16_t bits;
    std::memcpy(&bits, h.bytes, 2);
    return _mm256_cvtph_ps(_mm_set1_epi16(bits));
}

// The accumulators of output (r, t) live in acc[r * ld + t * acc_slot, + 9): 8 float lanes and,
// for q4_k, the scalar sum of the minimum terms at [8]. Each *_range kernel adds weight blocks
// [b0, b1) of NR rows x NT tokens: it loads the accumulators, runs the blocks in ascending order
// and stores them back (exactly), so splitting the blocks into ranges never changes a result.
inline constexpr int min_lane = 8;

template <int NR, int NT>
struct acc8 {
    __m256 v[NR][NT];
    acc8(const float* acc, std::int64_t ld) noexcept {
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) v[r][t] = _mm256_load_ps(acc + r * ld + t * simd::acc_slot);
    }
    void store(float* acc, std::int64_t ld) const noexcept {
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) _mm256_store_ps(acc + r * ld + t * simd::acc_slot, v[r][t]);
    }
};

template <int NR, int NT>
inline void qdot_range(const block_q8_0* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc8<NR, NT> a(acc, ld);
    for (std::int64_t b = b0; b < b1; ++b) {
        pf.advance(NR * sizeof(block_q8_0));
        prefetch_rows_near<NR, NT, near_blocks * sizeof(block_q8_0), 0>(w, b);
        __m256i wq[NR], wc[NR];
        __m256 wd[NR];
        for (int r = 0; r < NR; ++r) {
            wq[r] = load32(w[r][b].qs);
#if defined(NEXTTOK_KERNELS_VNNI256)
            // x + 128 is unsigned: sum (x + 128) w - 128 sum w, the correction computed once per row.
            wc[r] =
                _mm256_sub_epi32(_mm256_setzero_si256(), dpbusd(_mm256_setzero_si256(), _mm256_set1_epi8(-128), wq[r]));
#else
            wc[r] = _mm256_abs_epi8(wq[r]);  // |w| as unsigned, the sign moves to x (maddubs would saturate x + 128)
#endif
            wd[r] = broadcast_half(w[r][b].d);
        }
        for (int t = 0; t < NT; ++t) {
            const __m256i xq = load32(x[t]->qs + 32 * b);
            const __m256 xd = _mm256_set1_ps(x[t]->lane_scales[8 * b]);
#if defined(NEXTTOK_KERNELS_VNNI256)
            const __m256i xu = _mm256_xor_si256(xq, _mm256_set1_epi8(-128));
#endif
            for (int r = 0; r < NR; ++r) {
#if defined(NEXTTOK_KERNELS_VNNI256)
                const __m256i p = dpbusd(wc[r], xu, wq[r]);
#else
                const __m256i p = dpbusd(_mm256_setzero_si256(), wc[r], _mm256_sign_epi8(xq, wq[r]));
#endif
                a.v[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(wd[r], xd), a.v[r][t]);
            }
        }
    }
    a.store(acc, ld);
}

template <int NR, int NT>
inline void qdot_range(const block_q4_0* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc8<NR, NT> a(acc, ld);
    for (std::int64_t b = b0; b < b1; ++b) {
        pf.advance(NR * sizeof(block_q4_0));
        prefetch_rows_near<NR, NT, near_blocks * sizeof(block_q4_0), 0>(w, b);
        __m256i wq[NR];
        __m256 wd[NR];
        for (int r = 0; r < NR; ++r) {
            wq[r] = unpack_nibbles(w[r][b].qs);
            wd[r] = broadcast_half(w[r][b].d);
        }
        for (int t = 0; t < NT; ++t) {
            const __m256i xq = load32(x[t]->qs + 32 * b);
            const __m256i c = load32(x[t]->minus8_sums + 8 * b);  // sum (nibble - 8) x = sum nibble x - 8 sum x
            const __m256 xd = _mm256_set1_ps(x[t]->lane_scales[8 * b]);
            for (int r = 0; r < NR; ++r) {
                const __m256i p = dpbusd(c, wq[r], xq);
                a.v[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(wd[r], xd), a.v[r][t]);
            }
        }
    }
    a.store(acc, ld);
}

// A q4_k block spans 8 activation blocks: sub-block j is d sc_j q - dmin m_j, so its dot is
// d sc_j xd_j sum(q xq) - dmin m_j xd_j sum(xq); the second terms are summed in a scalar.
template <int NR, int NT>
inline void qdot_range(const block_q4_k* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc8<NR, NT> a(acc, ld);
    float mins[NR][NT];
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) mins[r][t] = acc[r * ld + t * simd::acc_slot + min_lane];
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (std::int64_t b = b0; b < b1; ++b) {
        pf.advance(NR * sizeof(block_q4_k));
        prefetch_rows_near<NR, NT, near_steps * sizeof(block_q4_k), sizeof(block_q4_k)>(w, b);
        k_sub_scales k[NR];
        for (int r = 0; r < NR; ++r)
            k[r] = unpack_k_sub_scales(w[r][b].scales, kernel_detail::simd::half_to_float(w[r][b].d),
                                       kernel_detail::simd::half_to_float(w[r][b].dmin));
        for (int i = 0; i < 4; ++i) {
            __m256i lo[NR], hi[NR];
            for (int r = 0; r < NR; ++r) {
                const __m256i q = load32(w[r][b].qs + 32 * i);
                lo[r] = _mm256_and_si256(q, low4);
                hi[r] = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
            }
            for (int t = 0; t < NT; ++t) {
                const std::int64_t j0 = 8 * b + 2 * i;  // activation blocks j0, j0 + 1
                const __m256i xq0 = load32(x[t]->qs + 32 * j0), xq1 = load32(x[t]->qs + 32 * (j0 + 1));
                const float xd0 = x[t]->lane_scales[8 * j0], xd1 = x[t]->lane_scales[8 * (j0 + 1)];
                for (int r = 0; r < NR; ++r) {
                    const __m256i p0 = dpbusd(_mm256_setzero_si256(), lo[r], xq0);
                    const __m256i p1 = dpbusd(_mm256_setzero_si256(), hi[r], xq1);
                    a.v[r][t] =
                        _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(k[r].scale[2 * i] * xd0), a.v[r][t]);
                    a.v[r][t] =
                        _mm256_fmadd_ps(_mm256_cvtepi32_ps(p1), _mm256_set1_ps(k[r].scale[2 * i + 1] * xd1), a.v[r][t]);
                    // Explicit fused multiply-adds: left to the compiler, contraction could differ between tiles.
                    mins[r][t] = std::fma(k[r].min[2 * i], x[t]->dsum[j0], mins[r][t]);
                    mins[r][t] = std::fma(k[r].min[2 * i + 1], x[t]->dsum[j0 + 1], mins[r][t]);
                }
            }
        }
    }
    a.store(acc, ld);
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) acc[r * ld + t * simd::acc_slot + min_lane] = mins[r][t];
}

inline float qdot_result(const float* slot) noexcept { return reduce8(_mm256_load_ps(slot)) - slot[min_lane]; }

NEXTTOK_INTRINSICS_END

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

#endif

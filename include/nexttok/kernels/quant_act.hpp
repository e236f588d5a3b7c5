// Integer dot products for quantized weights, as llama.cpp computes them: the activation row is
// quantized once per matmul to 8 bits per block of 32 (block_q8_act), and each weight block is
// multiplied with it in int32 (AVX-512 VNNI / AVX-VNNI vpdpbusd, AVX2 maddubs, or scalar), then
// scaled in float. A q4_0 block is half the bytes of its float dequantization work, which is what
// lets decode run at the memory-bandwidth limit.
//
// Accuracy: activations are rounded to 8 bits per 32 (relative error about 1/254 of the block's
// largest value), which is llama.cpp's own error; the reference-logit tolerance for quantized files
// (data/README.md, 3e-2) holds with it.
//
// Determinism: an output's value depends only on its weight row, its activation row and n. Integer
// sums are exact; the float accumulation goes block by block in ascending order into one 8-lane
// accumulator (plus, for q4_k, one scalar for the minimums), reduced in a fixed tree. So any
// tile shape (NR rows x NT tokens), thread count or batch gives bitwise the same outputs, and
// quantize_activations is a pure function of one row: prefill and decode agree bitwise.
#pragma once

#include <nexttok/kernels/detail/simd.hpp>
#include <nexttok/kernels/quant_blocks.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace nexttok {

// 32 activations x ~= d * qs[i]. 96 bytes, 32-aligned so that qs loads are aligned.
struct alignas(32) block_q8_act {
    static constexpr int block_size = 32;
    std::int8_t qs[32];
    std::int32_t neg8_lane_sum[8];  // -8 * (qs[4l] + ... + qs[4l + 3]): q4_0's "- 8", folded into the int dot
    float d;
    std::int32_t sum;  // qs[0] + ... + qs[31]: q4_k's minimum term
};

// Weight block types that have an integer kernel here; others (q5_k, q6_k) use quant_dot.hpp.
template <class W>
inline constexpr bool has_int8_kernel =
    std::is_same_v<W, block_q8_0> || std::is_same_v<W, block_q4_0> || std::is_same_v<W, block_q4_k>;

#if defined(__GNUC__) && !defined(__clang__)  // GCC bug 105593, as in simd.hpp
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// out[0, n / 32) = x[0, n) quantized: d = amax / 127, q = round-to-nearest-even(x / d). n % 32 == 0.
template <class X>
inline void quantize_activations(const X* x, std::int64_t n, block_q8_act* out) noexcept {
    namespace s = detail::simd;
    for (std::int64_t b = 0; b < n / 32; ++b) {
        const X* xb = x + b * 32;
        block_q8_act& o = out[b];
#if defined(__AVX512F__)
        const __m512 v0 = s::load(xb), v1 = s::load(xb + 16);
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        const float d = amax / 127.0f;
        const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o.qs), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v0, id))));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o.qs + 16), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v1, id))));
#else
        float amax = 0.0f;
        for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(s::to_float(xb[i])));
        const float d = amax / 127.0f;
        const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (int i = 0; i < 32; ++i) o.qs[i] = static_cast<std::int8_t>(std::nearbyint(s::to_float(xb[i]) * id));
#endif
        o.d = d;
        int sum = 0;
        for (int l = 0; l < 8; ++l) {
            const int ls = o.qs[4 * l] + o.qs[4 * l + 1] + o.qs[4 * l + 2] + o.qs[4 * l + 3];
            o.neg8_lane_sum[l] = -8 * ls;
            sum += ls;
        }
        o.sum = sum;
    }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace detail {

#if defined(__AVX2__) && defined(__FMA__)

// c + sum over each group of 4 bytes of u (unsigned) * v (signed), in 8 int32 lanes.
inline __m256i dpbusd(__m256i c, __m256i u, __m256i v) noexcept {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpbusd_epi32(c, u, v);
#elif defined(__AVXVNNI__)
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
inline void qdot_range(const block_q8_0* const* w, const block_q8_act* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc8<NR, NT> a(acc, ld);
    for (std::int64_t b = b0; b < b1; ++b) {
        pf.advance(NR * sizeof(block_q8_0));
        __m256i wq[NR], wc[NR];
        __m256 wd[NR];
        for (int r = 0; r < NR; ++r) {
            wq[r] = load32(w[r][b].qs);
#if defined(__AVX512VNNI__) || defined(__AVXVNNI__)
            // x + 128 is unsigned: sum (x + 128) w - 128 sum w, the correction computed once per row.
            wc[r] = _mm256_sub_epi32(_mm256_setzero_si256(), dpbusd(_mm256_setzero_si256(), _mm256_set1_epi8(-128), wq[r]));
#else
            wc[r] = _mm256_abs_epi8(wq[r]);  // |w| as unsigned, the sign moves to x (maddubs would saturate x + 128)
#endif
            wd[r] = broadcast_half(w[r][b].d);
        }
        for (int t = 0; t < NT; ++t) {
            const __m256i xq = load32(x[t][b].qs);
            const __m256 xd = _mm256_set1_ps(x[t][b].d);
#if defined(__AVX512VNNI__) || defined(__AVXVNNI__)
            const __m256i xu = _mm256_xor_si256(xq, _mm256_set1_epi8(-128));
#endif
            for (int r = 0; r < NR; ++r) {
#if defined(__AVX512VNNI__) || defined(__AVXVNNI__)
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
inline void qdot_range(const block_q4_0* const* w, const block_q8_act* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc8<NR, NT> a(acc, ld);
    for (std::int64_t b = b0; b < b1; ++b) {
        pf.advance(NR * sizeof(block_q4_0));
        __m256i wq[NR];
        __m256 wd[NR];
        for (int r = 0; r < NR; ++r) {
            wq[r] = unpack_nibbles(w[r][b].qs);
            wd[r] = broadcast_half(w[r][b].d);
        }
        for (int t = 0; t < NT; ++t) {
            const __m256i xq = load32(x[t][b].qs);
            const __m256i c = load32(x[t][b].neg8_lane_sum);  // sum (nibble - 8) x = sum nibble x - 8 sum x
            const __m256 xd = _mm256_set1_ps(x[t][b].d);
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
inline void qdot_range(const block_q4_k* const* w, const block_q8_act* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc8<NR, NT> a(acc, ld);
    float mins[NR][NT];
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) mins[r][t] = acc[r * ld + t * simd::acc_slot + min_lane];
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (std::int64_t b = b0; b < b1; ++b) {
        pf.advance(NR * sizeof(block_q4_k));
        k_sub_scales k[NR];
        for (int r = 0; r < NR; ++r) k[r] = unpack_k_sub_scales(w[r][b].scales, w[r][b].d.to_float(), w[r][b].dmin.to_float());
        for (int i = 0; i < 4; ++i) {
            __m256i lo[NR], hi[NR];
            for (int r = 0; r < NR; ++r) {
                const __m256i q = load32(w[r][b].qs + 32 * i);
                lo[r] = _mm256_and_si256(q, low4);
                hi[r] = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
            }
            for (int t = 0; t < NT; ++t) {
                const block_q8_act& x0 = x[t][8 * b + 2 * i];
                const block_q8_act& x1 = x[t][8 * b + 2 * i + 1];
                const __m256i xq0 = load32(x0.qs), xq1 = load32(x1.qs);
                for (int r = 0; r < NR; ++r) {
                    const __m256i p0 = dpbusd(_mm256_setzero_si256(), lo[r], xq0);
                    const __m256i p1 = dpbusd(_mm256_setzero_si256(), hi[r], xq1);
                    a.v[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(k[r].scale[2 * i] * x0.d), a.v[r][t]);
                    a.v[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p1), _mm256_set1_ps(k[r].scale[2 * i + 1] * x1.d), a.v[r][t]);
                    mins[r][t] += k[r].min[2 * i] * (x0.d * static_cast<float>(x0.sum));
                    mins[r][t] += k[r].min[2 * i + 1] * (x1.d * static_cast<float>(x1.sum));
                }
            }
        }
    }
    a.store(acc, ld);
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) acc[r * ld + t * simd::acc_slot + min_lane] = mins[r][t];
}

inline float qdot_result(const float* slot) noexcept { return reduce8(_mm256_load_ps(slot)) - slot[min_lane]; }

#else  // portable: the same sums in scalar code (a different, equally fixed, float order)

inline constexpr int min_lane = 8;

inline int block_int_dot(const block_q8_0& w, const block_q8_act& x) noexcept {
    int s = 0;
    for (int i = 0; i < 32; ++i) s += w.qs[i] * x.qs[i];
    return s;
}

inline int block_int_dot(const block_q4_0& w, const block_q8_act& x) noexcept {
    int s = 0;
    for (int i = 0; i < 16; ++i) s += ((w.qs[i] & 0x0f) - 8) * x.qs[i] + ((w.qs[i] >> 4) - 8) * x.qs[i + 16];
    return s;
}

// Accumulators of (r, t): the sum at slot[0], the q4_k minimum terms at slot[min_lane].
template <int NR, int NT, class Block>
inline void qdot_range(const Block* const* w, const block_q8_act* const* x, std::int64_t b0, std::int64_t b1, float* acc,
                       std::int64_t ld, simd::prefetch_cursor) noexcept {
    for (int r = 0; r < NR; ++r) {
        for (int t = 0; t < NT; ++t) {
            float* slot = acc + r * ld + t * simd::acc_slot;
            float sum = slot[0], mins = slot[min_lane];
            for (std::int64_t b = b0; b < b1; ++b) {
                const Block& wb = w[r][b];
                if constexpr (std::is_same_v<Block, block_q4_k>) {
                    const k_sub_scales k = unpack_k_sub_scales(wb.scales, wb.d.to_float(), wb.dmin.to_float());
                    for (int j = 0; j < 8; ++j) {
                        const block_q8_act& xb = x[t][8 * b + j];
                        const std::uint8_t* q = wb.qs + 32 * (j / 2);
                        int s = 0;
                        for (int l = 0; l < 32; ++l) s += ((j % 2 == 0) ? (q[l] & 0x0f) : (q[l] >> 4)) * xb.qs[l];
                        sum += static_cast<float>(s) * (k.scale[j] * xb.d);
                        mins += k.min[j] * (xb.d * static_cast<float>(xb.sum));
                    }
                } else {
                    sum += static_cast<float>(block_int_dot(wb, x[t][b])) * (wb.d.to_float() * x[t][b].d);
                }
            }
            slot[0] = sum;
            slot[min_lane] = mins;
        }
    }
}

inline float qdot_result(const float* slot) noexcept { return slot[0] - slot[min_lane]; }

#endif

}  // namespace detail

// Adds weight blocks [b0, b1) of NR rows (each row's blocks at w[r]) times NT quantized
// activation rows into the accumulators acc (output (r, t) at acc[r * ld + t * acc_slot], 64-byte
// aligned, zero before the first range). `pf` as in dot_block_range.
template <int NR, int NT, class Block>
    requires has_int8_kernel<Block>
inline void qdot_block_range(const Block* const* w, const block_q8_act* const* x, std::int64_t b0, std::int64_t b1,
                             float* acc, std::int64_t ld, detail::simd::prefetch_cursor pf = {}) noexcept {
    detail::qdot_range<NR, NT>(w, x, b0, b1, acc, ld, pf);
}

// out[r * NT + t] = the dot product those accumulators hold.
template <int NR, int NT>
inline void qdot_block_finish(const float* acc, std::int64_t ld, float* out) noexcept {
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) out[r * NT + t] = detail::qdot_result(acc + r * ld + t * detail::simd::acc_slot);
}

// out[r * NT + t] = sum_i w[r][i] * xq[t][i]: NR weight rows of n / Block::block_size blocks
// times NT quantized activation rows of n / 32 blocks, over all blocks at once.
template <int NR, int NT, class Block>
    requires has_int8_kernel<Block>
inline void qdot_block(const Block* const* w, const block_q8_act* const* x, std::int64_t n, float* out,
                       detail::simd::prefetch_cursor pf = {}) noexcept {
    alignas(64) float acc[NR * NT * detail::simd::acc_slot] = {};
    qdot_block_range<NR, NT>(w, x, 0, n / Block::block_size, acc, NT * detail::simd::acc_slot, pf);
    qdot_block_finish<NR, NT>(acc, NT * detail::simd::acc_slot, out);
}

}  // namespace nexttok

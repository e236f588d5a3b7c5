// The int8 kernels of q8_0, q4_0 and q4_k with AVX2 (+ FMA, F16C: NEXTTOK_KERNELS_INT8_AVX2 in
// isa.hpp), in the float order of quant_act.hpp (the AVX-512 kernels'), so that both give bitwise
// the same outputs. vpdpbusd where the CPU has it (NEXTTOK_KERNELS_VNNI256), else maddubs and madd.
// Activation rows are quantized block by block (quant_act.hpp), with the per-256 quantization q4_k
// reads and the AVX-512 groupings that the q8_0 and q4_0 kernels read.
// Internal: quant_act.hpp includes this file in its middle.
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#if defined(NEXTTOK_KERNELS_INT8_AVX2)

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

NEXTTOK_INTRINSICS_BEGIN

// The row block by block, then the groupings of the q8_0 and q4_0 kernels (q8_act_row's quad and
// octet arrays, the AVX-512 layouts) from the plain arrays, zero past the row's blocks to a whole
// quad or octet. A plain lane l sums elements 4l .. 4l + 3 (minus8_sums: -8 times that sum); a
// quad lane covers plain lanes q and q + 4 of its block, an octet lane h, h + 2, h + 4 and h + 6.
template <class X>
inline void quantize_act_row(const q8_act_row& row, const X* x, std::int64_t n) noexcept {
    quantize_act_row_by_blocks(row, x, n);
    const std::int64_t nb = n / 32, n4 = (nb + 3) / 4 * 4, n8 = (nb + 7) / 8 * 8;
    for (std::int64_t b = 0; b < n8; ++b) {
        const bool in = b < nb;
        const std::int32_t* m8 = row.minus8_sums + 8 * b;
        const float d = in ? row.lane_scales[8 * b] : 0.0f;
        if (b < n4) {
            std::int8_t* q4 = row.quad_qs + 128 * (b / 4) + 16 * (b % 4);
            for (int half = 0; half < 2; ++half) {
                if (in)
                    std::memcpy(q4 + 64 * half, row.qs + 32 * b + 16 * half, 16);
                else
                    std::memset(q4 + 64 * half, 0, 16);
            }
            for (int q = 0; q < 4; ++q) {
                row.quad_minus128_sums[4 * b + q] = in ? 16 * (m8[q] + m8[q + 4]) : 0;
                row.quad_lane_scales[4 * b + q] = d;
            }
        }
        std::int8_t* q8 = row.octet_qs + 256 * (b / 8) + 8 * (b % 8);
        constexpr int part_offset[4] = {0, 16, 8, 24};
        for (int m = 0; m < 4; ++m) {
            if (in)
                std::memcpy(q8 + 64 * m, row.qs + 32 * b + part_offset[m], 8);
            else
                std::memset(q8 + 64 * m, 0, 8);
        }
        for (int h = 0; h < 2; ++h) {
            row.octet_minus8_sums[2 * b + h] = in ? m8[h] + m8[h + 2] + m8[h + 4] + m8[h + 6] : 0;
            row.octet_lane_scales[2 * b + h] = d;
        }
    }
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

inline __m256i load32(const void* p) noexcept { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// The 32 nibbles of 16 bytes as bytes: low nibbles first (elements 0..15), then high (16..31).
inline __m256i unpack_nibbles(const std::uint8_t* p) noexcept {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(q, 4), q);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0f));
}

// The 16 lanes of output (r, t) (acc[r * ld + t * acc_slot, + 16)) as two halves, lanes 0-7
// and 8-15. Each *_range kernel loads them, adds weight blocks [b0, b1) of NR rows x NT tokens in
// ascending order and stores them back (exactly), so splitting the blocks into ranges (at
// multiples of 8 blocks) never changes a result.
template <int NR, int NT>
struct acc8x2 {
    __m256 v[NR][NT][2];
    acc8x2(const float* acc, std::int64_t ld) noexcept {
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t)
                for (int h = 0; h < 2; ++h) v[r][t][h] = _mm256_load_ps(acc + r * ld + t * simd::acc_slot + 8 * h);
    }
    void store(float* acc, std::int64_t ld) const noexcept {
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t)
                for (int h = 0; h < 2; ++h) _mm256_store_ps(acc + r * ld + t * simd::acc_slot + 8 * h, v[r][t][h]);
    }
};

// Calls step.template operator()<H>(b) for the groups of K blocks from b0 to b1, H the half of the
// 16 lanes the group fills: 0 and 1 in turn, since ranges start at multiples of 8 blocks and 2K
// blocks fill the 16 lanes. The half is a constant, so that the accumulators stay in registers (a
// half chosen at run time kept them in memory: 1.7x slower).
template <int K, class Step>
NEXTTOK_ALWAYS_INLINE inline void for_each_half_group(std::int64_t b0, std::int64_t b1, Step&& step) noexcept {
    for (std::int64_t b = b0; b < b1; b += 2 * K) {
        step.template operator()<0>(b);
        if (b + K < b1) step.template operator()<1>(b + K);
    }
}

// The K blocks of a group from p, of which n >= 1 lie in the row: p itself when all K do, else a
// copy in `tail` with zero blocks past the row, so that no load reads past it.
template <int K, class Block>
inline const Block* whole_group(const Block* p, std::int64_t n, Block (&tail)[K]) noexcept {
    if (n >= K) return p;
    for (int k = 0; k < K; ++k) tail[k] = k < n ? p[k] : Block{};
    return tail;
}

// q8_0 in the lanes of quant_act.hpp's order two blocks at a time: blocks b, b + 1 (b even) fill
// half b / 2 % 2, block b + k lanes 4k .. 4k + 3, against the quad grouping written by
// quantize_act_row. The pair's first 16 quant bytes (block b's, then b + 1's) and its last 16 meet
// the grouping's two halves, so that int32 lane 4k + q is quarter q of block b + k. With VNNI,
// w + 128 is unsigned and sum (w + 128) x - 128 sum x takes its correction from
// quad_minus128_sums; without, |w| meets x with w's sign (maddubs: at most 2 x 128 x 127). A last
// pair of one block is read through a zeroed copy, never past the row.
template <int NR, int NT>
inline void qdot_range(const block_q8_0* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc8x2<NR, NT> a(acc, ld);
    const __m256i pairs = _mm256_set_epi32(1, 1, 1, 1, 0, 0, 0, 0);
    auto pair = [&]<int H>(std::int64_t b) NEXTTOK_ALWAYS_INLINE {
        pf.advance(NR * 2 * sizeof(block_q8_0));
        prefetch_rows_near<NR, NT, near_blocks * sizeof(block_q8_0), 2 * sizeof(block_q8_0)>(w, b);
        NEXTTOK_UNROLL
        for (int r = 0; r < NR; ++r) {
            block_q8_0 tail[2];
            const block_q8_0* wb = whole_group(w[r] + b, b1 - b, tail);
            const auto half16 = [&](int k, int j) {
                return _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb[k].qs + 16 * j));
            };
            __m256i lo = _mm256_set_m128i(half16(1, 0), half16(0, 0)),
                    hi = _mm256_set_m128i(half16(1, 1), half16(0, 1));
#if defined(NEXTTOK_KERNELS_VNNI256)
            lo = _mm256_xor_si256(lo, _mm256_set1_epi8(-128));
            hi = _mm256_xor_si256(hi, _mm256_set1_epi8(-128));
#endif
            std::int16_t d0, d1;
            std::memcpy(&d0, wb[0].d.bytes, 2);
            std::memcpy(&d1, wb[1].d.bytes, 2);
            const __m256 wd = _mm256_permutevar8x32_ps(
                _mm256_castps128_ps256(_mm_cvtph_ps(_mm_setr_epi16(d0, d1, 0, 0, 0, 0, 0, 0))), pairs);
            NEXTTOK_UNROLL
            for (int t = 0; t < NT; ++t) {
                const q8_act_row& xr = *x[t];
                const std::int8_t* xq = xr.quad_qs + 128 * (b / 4) + 32 * H;
#if defined(NEXTTOK_KERNELS_VNNI256)
                const __m256i s =
                    dpbusd(dpbusd(load32(xr.quad_minus128_sums + 4 * b), lo, load32(xq)), hi, load32(xq + 64));
#else
                const __m256i s =
                    dpbusd(dpbusd(_mm256_setzero_si256(), _mm256_abs_epi8(lo), _mm256_sign_epi8(load32(xq), lo)),
                           _mm256_abs_epi8(hi), _mm256_sign_epi8(load32(xq + 64), hi));
#endif
                a.v[r][t][H] =
                    _mm256_fmadd_ps(_mm256_cvtepi32_ps(s),
                                    _mm256_mul_ps(wd, _mm256_load_ps(xr.quad_lane_scales + 4 * b)), a.v[r][t][H]);
            }
        }
    };
    for_each_half_group<2>(b0, b1, pair);
    a.store(acc, ld);
}

// q4_0 in the order of legacy_qdot.hpp (lane 2 (b % 8) + h: the block's half h, quant bytes
// 4h .. 4h + 3 and 8 + 4h .. 8 + 4h + 3), four blocks per step into half b / 4 % 2, against the
// octet grouping written by quantize_act_row: the first and the last 8 quant bytes of the 4 blocks
// gathered into 32 bytes each (block k at bytes 8k), whose low and high nibbles meet the four parts
// of the activations, so that int32 lane 2k + h is half h of block k; the "- 8" comes in from
// octet_minus8_sums. A last group of 1-3 blocks is read through a zeroed copy, never past the row.
template <int NR, int NT>
inline void qdot_range(const block_q4_0* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc8x2<NR, NT> a(acc, ld);
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m256i lane_pairs = _mm256_set_epi32(3, 3, 2, 2, 1, 1, 0, 0);
    auto quad = [&]<int H>(std::int64_t b) NEXTTOK_ALWAYS_INLINE {
        pf.advance(NR * 4 * sizeof(block_q4_0));
        prefetch_rows_near<NR, NT, near_blocks * sizeof(block_q4_0), 4 * sizeof(block_q4_0)>(w, b);
        NEXTTOK_UNROLL
        for (int r = 0; r < NR; ++r) {  // one row's weights at a time: 5 registers
            block_q4_0 tail[4];
            const block_q4_0* wb = whole_group(w[r] + b, b1 - b, tail);
            const auto qs = [&](int k) {
                return _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb[k].qs));
            };
            const __m256i a01 = _mm256_set_m128i(qs(1), qs(0)), a23 = _mm256_set_m128i(qs(3), qs(2));
            const __m256i first = _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(a01, a23), _MM_SHUFFLE(3, 1, 2, 0));
            const __m256i last = _mm256_permute4x64_epi64(_mm256_unpackhi_epi64(a01, a23), _MM_SHUFFLE(3, 1, 2, 0));
            const __m256i q[4] = {_mm256_and_si256(first, low4), _mm256_and_si256(_mm256_srli_epi16(first, 4), low4),
                                  _mm256_and_si256(last, low4), _mm256_and_si256(_mm256_srli_epi16(last, 4), low4)};
            std::int16_t d[4];
            for (int k = 0; k < 4; ++k) std::memcpy(&d[k], wb[k].d.bytes, 2);
            const __m128 d4 = _mm_cvtph_ps(_mm_setr_epi16(d[0], d[1], d[2], d[3], 0, 0, 0, 0));
            const __m256 wd = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(d4), lane_pairs);
            NEXTTOK_UNROLL
            for (int t = 0; t < NT; ++t) {
                const q8_act_row& xr = *x[t];
                const std::int8_t* xq = xr.octet_qs + 256 * (b / 8) + 32 * H;
                __m256i sum = load32(xr.octet_minus8_sums + 2 * b);
                NEXTTOK_UNROLL
                for (int m = 0; m < 4; ++m) sum = dpbusd(sum, q[m], load32(xq + 64 * m));
                a.v[r][t][H] =
                    _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum),
                                    _mm256_mul_ps(wd, _mm256_load_ps(xr.octet_lane_scales + 2 * b)), a.v[r][t][H]);
            }
        }
    };
    for_each_half_group<4>(b0, b1, quad);
    a.store(acc, ld);
}

// A q4_k block's 6-bit scales (bytes 0-7) and minimums (bytes 8-15), as ggml's get_scale_min_k4:
// with the scale bytes as words u0, u1, u2, scales 0-3 are u0 & 0x3f.., minimums 0-3 u1 & 0x3f..,
// scales 4-7 (u2 & 0x0f..) | ((u0 >> 2) & 0x30..), minimums 4-7 ((u2 >> 4) & 0x0f..) | ((u1 >> 2)
// & 0x30..). The 16-byte load ends in the block's first quant bytes.
inline __m128i q4_k_scale_min_bytes(const block_q4_k& w) noexcept {
    const __m128i u = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales));
    const __m128i lo = _mm_and_si128(u, _mm_set1_epi32(0x3f3f3f3f));
    const __m128i u2 = _mm_srlv_epi32(_mm_shuffle_epi32(u, _MM_SHUFFLE(2, 2, 2, 2)), _mm_set_epi32(0, 0, 4, 0));
    const __m128i hi = _mm_or_si128(_mm_and_si128(u2, _mm_set1_epi32(0x0f0f0f0f)),
                                    _mm_and_si128(_mm_srli_epi32(u, 2), _mm_set1_epi32(0x30303030)));
    return _mm_unpacklo_epi32(lo, hi);
}

// q4_k in quant_act.hpp's order (the AVX-512 kernel's), against the per-256 activations: step i
// of the block (q8k_qs bytes [64 i, 64 i + 64)) meets, in lanes 0-7, the low (i even) or high (i
// odd) nibbles of qs [64 (i / 2), + 32) at sub-block {0, 1, 4, 5}[i]'s scale, and in lanes 8-15
// those of qs [64 (i / 2) + 32, + 32) at sub-block {2, 3, 6, 7}[i]'s: nibbles times activations
// summed in pairs (vpmaddubsw, at most 2 x 15 x 127), times the scale as words (vpmaddwd), all
// four steps in int32. The minimums' pair sums (vpmaddwd of the minimums and q8k_block_sums) go
// into 4 lanes of their own, subtracted from lanes 0-3 at the end of every 8 blocks.
template <int NR, int NT>
inline void qdot_range(const block_q4_k* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc8x2<NR, NT> a(acc, ld);
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (std::int64_t c0 = b0, c1; c0 < b1; c0 = c1) {  // chunks ending at multiples of 8 blocks
        c1 = std::min(b1, (c0 / 8 + 1) * 8);
        __m128 macc[NR][NT];
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) macc[r][t] = _mm_setzero_ps();
        for (std::int64_t b = c0; b < c1; ++b) {
            pf.advance(NR * sizeof(block_q4_k));
            prefetch_rows_near<NR, NT, near_steps * sizeof(block_q4_k), sizeof(block_q4_k)>(w, b);
            __m256i q[NR][2][4];  // [half][step]
            __m256i sc[NR][2][4];
            __m128i m16[NR];
            __m128 dm[NR];  // d, dmin
            NEXTTOK_UNROLL
            for (int r = 0; r < NR; ++r) {
                const block_q4_k& wb = w[r][b];
                NEXTTOK_UNROLL
                for (int k = 0; k < 2; ++k)
                    for (int h = 0; h < 2; ++h) {
                        const __m256i raw = load32(wb.qs + 64 * k + 32 * h);
                        q[r][h][2 * k] = _mm256_and_si256(raw, low4);
                        q[r][h][2 * k + 1] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
                    }
                const __m128i sm = q4_k_scale_min_bytes(wb);
                const __m256i s16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm));
                NEXTTOK_UNROLL
                for (int h = 0; h < 2; ++h) NEXTTOK_UNROLL
                for (int i = 0; i < 4; ++i)
                    sc[r][h][i] = _mm256_shuffle_epi8(
                        s16,
                        _mm256_set1_epi16(static_cast<std::int16_t>(0x0100 + 0x0202 * q4_k_step_sub_blocks[h][i])));
                m16[r] = _mm_cvtepu8_epi16(_mm_srli_si128(sm, 8));
                std::int32_t ddmin;
                std::memcpy(&ddmin, &wb.d, 4);
                dm[r] = _mm_cvtph_ps(_mm_cvtsi32_si128(ddmin));
            }
            NEXTTOK_UNROLL
            for (int t = 0; t < NT; ++t) {
                const q8_act_row& xr = *x[t];
                const std::int8_t* xq = xr.q8k_qs + 256 * b;
                const __m128i bs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(xr.q8k_block_sums + 8 * b));
                NEXTTOK_UNROLL
                for (int r = 0; r < NR; ++r) {
                    const __m128 dk = _mm_mul_ps(dm[r], _mm_set1_ps(xr.q8k_scales[b]));  // d xd, dmin xd
                    NEXTTOK_UNROLL
                    for (int h = 0; h < 2; ++h) {
                        __m256i sum = _mm256_setzero_si256();
                        NEXTTOK_UNROLL
                        for (int i = 0; i < 4; ++i)
                            sum = _mm256_add_epi32(
                                sum, _mm256_madd_epi16(_mm256_maddubs_epi16(q[r][h][i], load32(xq + 64 * i + 32 * h)),
                                                       sc[r][h][i]));
                        a.v[r][t][h] =
                            _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_broadcastss_ps(dk), a.v[r][t][h]);
                    }
                    macc[r][t] = _mm_fmadd_ps(_mm_cvtepi32_ps(_mm_madd_epi16(m16[r], bs)),
                                              _mm_shuffle_ps(dk, dk, _MM_SHUFFLE(1, 1, 1, 1)), macc[r][t]);
                }
            }
        }
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) {
                __m256& v = a.v[r][t][0];
                v = _mm256_blend_ps(v, _mm256_sub_ps(v, _mm256_castps128_ps256(macc[r][t])), 0x0f);
            }
    }
    a.store(acc, ld);
}

NEXTTOK_INTRINSICS_END

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

#endif

// The int8 kernels of repacked q8_0 and q4_0 rows (tensor/repacked_blocks.hpp), with AVX-512,
// AVX2 and portable code, in the float order of quant_act.hpp's header: lane b % 16 takes block b
// whole. With AVX-512 a step is a group of 16 blocks: 8 vpdpbusd (no permutation, the bytes come
// in the activations' r16 order) and one conversion, multiply and multiply-add per row and token,
// where the file's layout needs 8 vpdpbusd and 12 float instructions (q8_0) or 6 (q4_0) and byte
// permutations. A last group of fewer than 16 blocks (only at a row's end) is widened into a
// whole group with zero lanes first. Internal: quant_act.hpp includes this file in its middle.
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#include <nexttok/tensor/repacked_blocks.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

NEXTTOK_INTRINSICS_BEGIN

// Rows of a register tile of NT tokens of repacked Block rows: with AVX-512 the tile's NR x NT
// accumulators and a row's 8 weight chunks fit in the 32 registers (in the wide order below, NR
// rows' chunks and the NR x NT integer sums).
#if defined(NEXTTOK_KERNELS_INT8_AVX512)
// Tiles of at least this many tokens (the wide tiles of batches of 7-8 and 16 sequences) take
// repacked_range_wide below, and so do tiles of 2 rows x 2-4 tokens of q4_0 rows. At 2-4 tokens
// q4_0's step is bound by its arithmetic (the nibbles unpacked, then 8 vpdpbusd per row and
// token), and the wide order advances the 2 x NT sums together and loads each activation chunk
// once for both rows, where tiles of 4 rows ran each row and token's 8 vpdpbusd as one chain and
// loaded the chunk again for each row. Not q8_0: at 2-4 tokens its step is bound by its reads, and
// there the wide kernel (its far prefetch a whole group at once) was slower (benchmarks/README.md,
// "Batched decode").
inline constexpr int repacked_wide_tokens = 7;
template <class Block, int NT>
inline constexpr bool repacked_wide_small = NT >= 2 && NT <= 4 && std::is_same_v<Block, block_q4_0_r16>;
template <class Block, int NT>
inline constexpr int repacked_tile_rows = repacked_wide_small<Block, NT> ? 2
                                          : NT <= 4                      ? 4
                                          : NT <= 6                      ? 3
                                                                         : 2;
#else
template <class Block, int NT>
inline constexpr int repacked_tile_rows = 2;
#endif

// The bytes of the group of 16 blocks at block b of row p, whose row ends at block b1: p + b
// itself, or its last group widened into `whole` (zero lanes past the row).
template <class Block>
inline const std::uint8_t* repacked_group(const Block* p, std::int64_t b, std::int64_t b1,
                                          std::uint8_t* whole) noexcept {
    const auto* g = reinterpret_cast<const std::uint8_t*>(p + b);
    if (b1 - b >= 16) return g;
    detail::widen_group_r16<Block>(g, static_cast<int>(b1 - b), whole);
    return whole;
}

// The far prefetch (simd::prefetch_cursor) of a group: its NR rows' bytes requested in N even
// parts, one before each row's token (or half and token), rather than all of them before the
// group. Requested at once, a group of q8_0 rows was 17 lines (2 rows), and the core waited for
// the L2's queue of misses there. Intel Xeon (family 6 model 207), nexttok_decode_bench on the
// 1.1B shape, fraction of the pass, both builds in turn, four runs: q8_0 0.90-0.91 -> 0.94-0.95
// with 1 thread, 0.88-0.90 -> 0.93-0.95 with 2; q4_0 0.85-0.88 -> 0.91-0.92 and 0.85-0.86 ->
// 0.88-0.89; the AVX2 set (a -march=haswell build), three runs: q8_0 0.85 -> 0.90-0.91 and
// 0.83-0.86 -> 0.88-0.90, q4_0 0.76 -> 0.78 and 0.73-0.74 -> 0.74-0.77. Parts of a line or less
// (one per vpdpbusd) were slower (q4_0, 2 threads, 0.70-0.83).
// Part k of N of `bytes`, in whole bytes: the parts add up to `bytes`.
template <std::size_t Bytes, int N>
inline constexpr std::size_t prefetch_part(int k) noexcept {
    return (static_cast<std::size_t>(k) + 1) * Bytes / N - static_cast<std::size_t>(k) * Bytes / N;
}
// loop.template operator()<true>() where the cursor has lines to request, else <false>(): a loop
// without the calls. Prefill's tiles have none to request (matmul.hpp, row_block_prefill), and
// with a call per row and token in their loop the 1.1B prefill ran at 160-167 tokens/s against
// 197-208 (q8_0), 122-167 against 190-203 (q4_0).
template <class Loop>
NEXTTOK_ALWAYS_INLINE inline void with_far_prefetch(const simd::prefetch_cursor& pf, Loop&& loop) {
    if (pf.pending())
        loop.template operator()<true>();
    else
        loop.template operator()<false>();
}

#if defined(NEXTTOK_KERNELS_INT8_AVX512)

// Whether the NT activation rows x keep their per-block arrays at the same distances from r16_qs
// (rows of one q8_activations do), so that a kernel can reach them from one address per token.
inline std::uintptr_t as_address(const void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }
template <int NT>
inline bool r16_uniform(const q8_act_row* const* x) noexcept {
    const auto from_qs = [](const q8_act_row& r, const void* p) {
        return as_address(p) - as_address(r.r16_qs);
    };
    for (int t = 1; t < NT; ++t)
        if (from_qs(*x[t], x[t]->r16_minus128_sums) != from_qs(*x[0], x[0]->r16_minus128_sums) ||
            from_qs(*x[t], x[t]->r16_minus8_sums) != from_qs(*x[0], x[0]->r16_minus8_sums) ||
            from_qs(*x[t], x[t]->r16_scales) != from_qs(*x[0], x[0]->r16_scales))
            return false;
    return true;
}

// repacked_range for tiles of repacked_wide_tokens tokens or more, and for repacked_wide_small's
// tiles of 2 rows (not prefill's last tokens in tiles of 3 rows, whose chunks would not stay in
// registers): per group, the NR rows' chunks first, then the chunks in turn, each token's
// activation chunk loaded once for all NR rows, so that the NR x NT integer sums advance
// together; the accumulators stay in memory (a load, a multiply-add and a store per group), and
// the group's far prefetch is a fixed run of lines where the NR rows' group is whole lines. The
// same sums in the same order as repacked_range. Rows of x with r16_uniform only. (q8_0, 480 rows
// of 2048 columns in L2, 8 tokens, 1 thread: 252-271 -> 279-287 GOP/s; benchmarks/README.md,
// "Batched decode".)
template <int NR, int NT, class Block, class Unpack>
inline void repacked_range_wide(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                                float* acc, std::int64_t ld, simd::prefetch_cursor& pf, Unpack&& unpack) noexcept {
    constexpr bool q8 = std::is_same_v<Block, block_q8_0_r16>;
    constexpr std::size_t group_bytes = 16 * sizeof(Block);
    constexpr bool whole_lines = NR * group_bytes % 64 == 0;
    std::uintptr_t q[NT];  // token t's r16_qs, and its sums and scales at these distances
    for (int t = 0; t < NT; ++t) q[t] = as_address(x[t]->r16_qs);
    const std::uintptr_t to_sums = as_address(q8 ? x[0]->r16_minus128_sums : x[0]->r16_minus8_sums) - q[0];
    const std::uintptr_t to_scales = as_address(x[0]->r16_scales) - q[0];
    alignas(64) std::uint8_t whole[NR][group_bytes];
    with_far_prefetch(pf, [&]<bool Far>() NEXTTOK_ALWAYS_INLINE {
        for (std::int64_t b = b0; b < b1; b += 16) {
            __m512i c[NR][8];
            __m512 d[NR];
            NEXTTOK_UNROLL
            for (int r = 0; r < NR; ++r) {
                const std::uint8_t* g = repacked_group(w[r], b, b1, whole[r]);
                unpack(g + 32, c[r]);
                d[r] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g)));
            }
            if constexpr (Far && whole_lines)
                pf.advance_lines<NR * group_bytes / 64>();
            else if constexpr (Far)
                pf.advance(NR * group_bytes);
            __m512i s[NR][NT];
            NEXTTOK_UNROLL
            for (int t = 0; t < NT; ++t) {
                const __m512i correction = _mm512_load_si512(reinterpret_cast<const std::int32_t*>(q[t] + to_sums) + b);
                NEXTTOK_UNROLL
                for (int r = 0; r < NR; ++r) s[r][t] = correction;
            }
            NEXTTOK_UNROLL
            for (int j = 0; j < 8; ++j) {
                NEXTTOK_UNROLL
                for (int t = 0; t < NT; ++t) {
                    const __m512i xq = _mm512_load_si512(reinterpret_cast<const std::int8_t*>(q[t]) + 32 * b + 64 * j);
                    NEXTTOK_UNROLL
                    for (int r = 0; r < NR; ++r) s[r][t] = _mm512_dpbusd_epi32(s[r][t], c[r][j], xq);
                }
            }
            NEXTTOK_UNROLL
            for (int t = 0; t < NT; ++t) {
                const __m512 xs = _mm512_load_ps(reinterpret_cast<const float*>(q[t] + to_scales) + b);
                NEXTTOK_UNROLL
                for (int r = 0; r < NR; ++r) {
                    float* a = acc + r * ld + t * simd::acc_slot;
                    _mm512_store_ps(
                        a, _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[r][t]), _mm512_mul_ps(d[r], xs), _mm512_load_ps(a)));
                }
            }
        }
    });
}

// Adds groups [b0, b1) (b0 % 16 == 0) of NR rows x NT tokens: per row, the group's 8 chunks
// (`unpack`: q8_0's bytes, q4_0's low and high nibbles) and 16 scales, then per token 8 vpdpbusd
// from the activations' correction (q8_0: -128 sum x, its weights + 128; q4_0: -8 sum x).
template <int NR, int NT, class Block, class Unpack>
inline void repacked_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                           float* acc, std::int64_t ld, simd::prefetch_cursor& pf, Unpack&& unpack) noexcept {
    if constexpr (NT >= repacked_wide_tokens || (repacked_wide_small<Block, NT> && NR == 2))
        if (r16_uniform<NT>(x)) return repacked_range_wide<NR, NT>(w, x, b0, b1, acc, ld, pf, unpack);
    constexpr bool q8 = std::is_same_v<Block, block_q8_0_r16>;
    constexpr std::size_t group_bytes = 16 * sizeof(Block);
    acc16<NR, NT> a(acc, ld);
    alignas(64) std::uint8_t whole[group_bytes];
    with_far_prefetch(pf, [&]<bool Far>() NEXTTOK_ALWAYS_INLINE {
        for (std::int64_t b = b0; b < b1; b += 16) {
            NEXTTOK_UNROLL
            for (int r = 0; r < NR; ++r) {
                const std::uint8_t* g = repacked_group(w[r], b, b1, whole);
                if constexpr (NT <= 4) prefetch_near<near_steps * group_bytes, group_bytes>(w[r] + b);
                __m512i c[8];
                unpack(g + 32, c);
                const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g)));
                NEXTTOK_UNROLL
                for (int t = 0; t < NT; ++t) {
                    if constexpr (Far) pf.advance(prefetch_part<NR * group_bytes, NR * NT>(r * NT + t));
                    const q8_act_row& xr = *x[t];
                    __m512i s = _mm512_load_si512(q8 ? xr.r16_minus128_sums + b : xr.r16_minus8_sums + b);
                    for (int j = 0; j < 8; ++j)
                        s = _mm512_dpbusd_epi32(s, c[j], _mm512_load_si512(xr.r16_qs + 32 * b + 64 * j));
                    const __m512 scale = _mm512_mul_ps(d, _mm512_load_ps(xr.r16_scales + b));
                    a.v[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), scale, a.v[r][t]);
                }
            }
        }
    });
    a.store(acc, ld);
}

template <int NR, int NT>
inline void qdot_range(const block_q8_0_r16* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    repacked_range<NR, NT>(w, x, b0, b1, acc, ld, pf, [](const std::uint8_t* q, __m512i(&c)[8]) {
        for (int j = 0; j < 8; ++j) c[j] = _mm512_loadu_si512(q + 64 * j);
    });
}

template <int NR, int NT>
inline void qdot_range(const block_q4_0_r16* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    repacked_range<NR, NT>(w, x, b0, b1, acc, ld, pf, [](const std::uint8_t* q, __m512i(&c)[8]) {
        for (int j = 0; j < 4; ++j) {
            const __m512i raw = _mm512_loadu_si512(q + 64 * j);
            c[j] = _mm512_and_si512(raw, _mm512_set1_epi8(0x0f));
            c[j + 4] = high_nibbles(raw);
        }
    });
}

#elif defined(NEXTTOK_KERNELS_INT8_AVX2)

// As the AVX-512 kernel, by halves of 8 lanes; without VNNI the q8_0 weights meet the activations
// as |w| and x with w's sign (at most 2 x 128 x 127 per 16-bit pair).
template <int NR, int NT, class Block>
inline void repacked_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                           float* acc, std::int64_t ld, simd::prefetch_cursor& pf) noexcept {
    constexpr bool q8 = std::is_same_v<Block, block_q8_0_r16>;
    constexpr std::size_t group_bytes = 16 * sizeof(Block);
    acc8x2<NR, NT> a(acc, ld);
    alignas(32) std::uint8_t whole[group_bytes];
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    with_far_prefetch(pf, [&]<bool Far>() NEXTTOK_ALWAYS_INLINE {
        for (std::int64_t b = b0; b < b1; b += 16) {
            NEXTTOK_UNROLL
            for (int r = 0; r < NR; ++r) {
                const std::uint8_t* g = repacked_group(w[r], b, b1, whole);
                if constexpr (NT == 1) prefetch_near<near_blocks * sizeof(Block), group_bytes>(w[r] + b);
                NEXTTOK_UNROLL
                for (int h = 0; h < 2; ++h) {
                    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 16 * h)));
                    const std::uint8_t* q = g + 32 + 32 * h;
                    NEXTTOK_UNROLL
                    for (int t = 0; t < NT; ++t) {
                        if constexpr (Far)
                            pf.advance(prefetch_part<NR * group_bytes, 2 * NR * NT>((2 * r + h) * NT + t));
                        const q8_act_row& xr = *x[t];
                        const std::int8_t* xq = xr.r16_qs + 32 * b + 32 * h;
                        __m256i s;
                        if constexpr (q8) {
#if defined(NEXTTOK_KERNELS_VNNI256)
                            s = load32(xr.r16_minus128_sums + b + 8 * h);
                            for (int j = 0; j < 8; ++j) s = dpbusd(s, load32(q + 64 * j), load32(xq + 64 * j));
#else
                            s = _mm256_setzero_si256();
                            for (int j = 0; j < 8; ++j) {
                                const __m256i wq = _mm256_xor_si256(load32(q + 64 * j), _mm256_set1_epi8(-128));
                                s = dpbusd(s, _mm256_abs_epi8(wq), _mm256_sign_epi8(load32(xq + 64 * j), wq));
                            }
#endif
                        } else {
                            s = load32(xr.r16_minus8_sums + b + 8 * h);
                            for (int j = 0; j < 4; ++j) {
                                const __m256i raw = load32(q + 64 * j);
                                s = dpbusd(s, _mm256_and_si256(raw, low4), load32(xq + 64 * j));
                                s = dpbusd(s, _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4),
                                           load32(xq + 64 * j + 256));
                            }
                        }
                        const __m256 scale = _mm256_mul_ps(d, _mm256_load_ps(xr.r16_scales + b + 8 * h));
                        a.v[r][t][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), scale, a.v[r][t][h]);
                    }
                }
            }
        }
    });
    a.store(acc, ld);
}

template <int NR, int NT>
inline void qdot_range(const block_q8_0_r16* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    repacked_range<NR, NT>(w, x, b0, b1, acc, ld, pf);
}

template <int NR, int NT>
inline void qdot_range(const block_q4_0_r16* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    repacked_range<NR, NT>(w, x, b0, b1, acc, ld, pf);
}

#else

// Portable: block by block, lane b % 16, the block's dot product in int against the plain row.
template <int NR, int NT, class Block>
inline void repacked_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                           float* acc, std::int64_t ld) noexcept {
    for (int r = 0; r < NR; ++r)
        for (std::int64_t b = b0; b < b1; ++b) {
            const std::int64_t first = b - b % 16;
            const auto l = static_cast<int>(b % 16);
            const auto m = static_cast<int>(std::min<std::int64_t>(16, b1 - first));
            const auto* g = reinterpret_cast<const std::uint8_t*>(w[r] + first);
            const float d = simd::half_to_float(packed_half{{g[2 * l], g[2 * l + 1]}});
            for (int t = 0; t < NT; ++t) {
                const std::int8_t* xq = x[t]->qs + 32 * b;
                std::int32_t s = 0;
                for (int e = 0; e < 32; ++e) s += detail::repacked_level<Block>(g, m, l, e) * xq[e];
                float* lane = acc + r * ld + t * simd::acc_slot + l;
                *lane = std::fma(static_cast<float>(s), d * x[t]->r16_scales[b], *lane);
            }
        }
}

template <int NR, int NT>
inline void qdot_range(const block_q8_0_r16* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor) noexcept {
    repacked_range<NR, NT>(w, x, b0, b1, acc, ld);
}

template <int NR, int NT>
inline void qdot_range(const block_q4_0_r16* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor) noexcept {
    repacked_range<NR, NT>(w, x, b0, b1, acc, ld);
}

#endif

NEXTTOK_INTRINSICS_END

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

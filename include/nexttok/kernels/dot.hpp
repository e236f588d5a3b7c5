// Dot products of a row of weights (or cache) with activation vectors, accumulated in float.
// Rows of float, Eigen::half or Eigen::bfloat16 are here; rows of quantized blocks in
// quant_dot.hpp, under the same name and contract.
//
// Determinism: the order of every addition depends only on n and on the SIMD backend chosen at
// compile time, never on how many vectors are processed together (nt), on the thread, or on the
// batch. So a row multiplied by one token (decode) and by a tile of tokens (prefill) gives
// bitwise the same result, and so do 1 and N threads.
#if !defined(NEXTTOK_KERNEL_PASS)
#include <nexttok/kernels/detail/passes.hpp>
#else

#include <nexttok/kernels/buffers.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>

namespace nexttok::NEXTTOK_KERNEL_PASS {

using kernel_detail::simd::acc_slot;

// Floats of one step of dot_block_range: the columns that go once through every accumulator.
inline constexpr std::int64_t dot_step =
    static_cast<std::int64_t>(kernel_detail::simd::accumulators) * kernel_detail::simd::width;

// The accumulators of an NR x NT register tile (`accumulators` vectors per output) from and to
// acc: output (r, t) at acc[r * ld + t * acc_slot, + acc_slot). Always inlined, so that they stay
// in registers between the two.
template <int NR, int NT>
NEXTTOK_ALWAYS_INLINE inline void load_tile_accumulators(
    const float* acc, std::int64_t ld,
    kernel_detail::simd::vec (&v)[NR][NT][kernel_detail::simd::accumulators]) noexcept {
    namespace s = kernel_detail::simd;
    NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) {
        NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) {
            NEXTTOK_UNROLL for (int a = 0; a < s::accumulators; ++a) v[r][t][a] =
                s::load(acc + r * ld + t * acc_slot + a * s::width);
        }
    }
}
template <int NR, int NT>
NEXTTOK_ALWAYS_INLINE inline void store_tile_accumulators(
    float* acc, std::int64_t ld,
    const kernel_detail::simd::vec (&v)[NR][NT][kernel_detail::simd::accumulators]) noexcept {
    namespace s = kernel_detail::simd;
    NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) {
        NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) {
            NEXTTOK_UNROLL for (int a = 0; a < s::accumulators; ++a)
                s::store(acc + r * ld + t * acc_slot + a * s::width, v[r][t][a]);
        }
    }
}

// Tiles of up to 4 tokens (decode, and small batches with weights read in place) also fetch into
// L1 the line dense_near_bytes past each row's line, besides the cursor's prefetch of the next
// tiles into L2 (Intel) or L1: the loads then rarely wait on L2, as in the integer kernels
// (quant_act.hpp, near_steps). Intel Xeon (family 6 model 207), 1.1B-shaped f16 decode
// (nexttok_decode_bench): 0.893-0.897 -> 0.908-0.910 of the pass with 1 thread, 0.895-0.902 ->
// 0.901-0.914 with 2 (512 bytes to 2 KiB about the same, 4 KiB less); batches (nexttok_batch_bench,
// 2 threads) of 2: 26.2-26.3 -> 27.0-27.2 tokens/s, of 4: 45.2-45.4 -> 46.3-46.8.
// These tiles take two steps per iteration (a line of each f16 row), with one prefetch per line
// and one advance of the cursor: the loop's bookkeeping (the cursor's bounds, the index) had made
// about 40 instructions per step of two f16 rows, so that the out-of-order window reached less
// than 1 KiB ahead. Same machine, f16 rows of the 1.1B layers from memory in huge pages, 1 thread,
// fraction of the two-row pass in the same pages, medians of 8: 0.907-0.918 -> 0.944-0.968; 1.1B
// f16 decode 0.906-0.910 -> 0.932-0.933 (1 thread), 0.899-0.904 -> 0.934-0.951 (2); bf16 (1-row
// tiles, bound by the chain of FMAs) unchanged at 0.92, and slower with 2-row tiles (0.89). With
// this loop, tiles of 3-4 tokens take 4 rows rather than 2 (matmul.hpp): f16 batch 4 (2 threads)
// 45.7-46.5 -> 47.2 tokens/s.
inline constexpr std::uintptr_t dense_near_bytes = 1024;

// Accumulates columns [i0, i1) (multiples of accumulators * width) of NR rows x NT tokens into
// the accumulators kept in memory: output (r, t) in acc[r * ld + t * acc_slot, + acc_slot).
// Each weight chunk is loaded (and converted) once for the NT tokens, each activation chunk once
// for the NR rows; the NR * NT independent chains hide the FMA latency. Prefill splits the
// columns into ranges so that a tile's weights and activations stay in L1; since the
// accumulators are stored and reloaded exactly, the order per output is the same for any split
// and any tile: chunk k of `width` lanes goes to accumulator k % accumulators (a single 16-lane
// accumulator with AVX-512, two 8-lane ones emulating it with AVX2 and the portable code), in
// ascending k.
// `pf` is advanced by the bytes of weights each step reads (see prefetch_cursor). (Tiles of 7-8
// tokens in place take their activations packed: kernels/detail/packed_dense.hpp.)
template <int NR, int NT, dense_element W, class X>
inline void dot_block_range(const W* const* w, const X* const* x, std::int64_t i0, std::int64_t i1, float* acc,
                            std::int64_t ld, kernel_detail::simd::prefetch_cursor pf = {}) noexcept {
    namespace s = kernel_detail::simd;
    constexpr int A = s::accumulators;
    static_assert(dot_step <= acc_slot);
    constexpr std::int64_t step = dot_step;
    // At least one step, so that the accumulators go from memory to registers and back without a
    // second path (for zero steps) that would make the compiler keep a copy on the stack.
    if (i0 + step > i1) return;
    s::vec v[NR][NT][A];
    load_tile_accumulators<NR, NT>(acc, ld, v);
    auto fma_step = [&](std::int64_t i) NEXTTOK_ALWAYS_INLINE {
        NEXTTOK_UNROLL for (int a = 0; a < A; ++a) {
            s::vec wv[NR];
            NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) wv[r] = s::load(w[r] + i + a * s::width);
            NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) {
                const s::vec xv = s::in_register(s::load(x[t] + i + a * s::width));
                NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) v[r][t][a] = s::fmadd(wv[r], xv, v[r][t][a]);
            }
        }
    };
    std::int64_t i = i0;
    if constexpr (NT <= 4) {
        // Two steps per iteration (a line of each f16 row): the prefetches of both at once, and
        // half the loop's bookkeeping (dense_near_bytes).
        constexpr int near_lines = std::max<int>(1, 2 * step * sizeof(W) / 64);
        for (; i + 2 * step <= i1; i += 2 * step) {
            pf.advance(2 * NR * step * sizeof(W));
            NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) {
                NEXTTOK_UNROLL for (int l = 0; l < near_lines; ++l)
                    s::prefetch_l1(reinterpret_cast<std::uintptr_t>(w[r] + i) + dense_near_bytes + 64 * l);
            }
            fma_step(i);
            fma_step(i + step);
        }
        if (i + step <= i1) {
            pf.advance(NR * step * sizeof(W));
            fma_step(i);
        }
    } else {
        do {
            pf.advance(NR * step * sizeof(W));
            fma_step(i);
            i += step;
        } while (i + step <= i1);
    }
    store_tile_accumulators<NR, NT>(acc, ld, v);
}

// dot_block_range over `steps` steps of operands packed as float (matmul's prefill, pack_tiles):
// the chunk of accumulator a of step s of weight row r at wp + ((a * steps + s) * NR + r) * width,
// that of token t at xp + ((a * steps + s) * NT + t) * width.
// Chunk k of every output goes to the same accumulator as in dot_block_range, in the same order,
// so the results are bitwise those of dot_block_range. The accumulators of an output are
// independent, so they are taken one at a time over all the steps, each pass reading contiguous
// memory: a tile holds NR x NT registers instead of NR x NT x accumulators, and with AVX2's two
// a tile serves twice the tokens (matmul.hpp, packed_tile_tokens). With `from_zero`, the
// accumulators start at zero instead of being loaded from acc (the first range of columns: the
// same sums, without clearing acc first).
template <int NR, int NT>
inline void packed_block_range(const float* wp, const float* xp, std::int64_t steps, float* acc, std::int64_t ld,
                               bool from_zero = false) noexcept {
    namespace s = kernel_detail::simd;
    constexpr int A = s::accumulators;
    if (steps <= 0) return;
    NEXTTOK_UNROLL for (int a = 0; a < A; ++a) {
        s::vec v[NR][NT];
        NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) {
            NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) {
                v[r][t] = from_zero ? s::zero() : s::load(acc + r * ld + t * acc_slot + a * s::width);
            }
        }
        const float* wa = wp + a * steps * NR * s::width;
        const float* xa = xp + a * steps * NT * s::width;
        for (std::int64_t i = 0; i < steps; ++i, wa += NR * s::width, xa += NT * s::width) {
            s::vec wv[NR];
            NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) wv[r] = s::load(wa + r * s::width);
            NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) {
                const s::vec xv = s::in_register(s::load(xa + t * s::width));
                NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) v[r][t] = s::fmadd(wv[r], xv, v[r][t]);
            }
        }
        NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) {
            NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) s::store(acc + r * ld + t * acc_slot + a * s::width, v[r][t]);
        }
    }
}

// Columns in whole steps of dot_block_range; the rest is dot_block_finish's tail.
template <class W>
inline constexpr std::int64_t dot_block_columns(std::int64_t n) noexcept {
    return n / dot_step * dot_step;
}

// The sum of one output's accumulators (acc_slot floats at a0): the accumulators added, then
// their lanes reduced by the fixed tree.
inline float reduce_slot(const float* a0) noexcept {
    namespace s = kernel_detail::simd;
    s::vec sum = s::load(a0);
    for (int a = 1; a < s::accumulators; ++a) sum = s::add(sum, s::load(a0 + a * s::width));
    return s::reduce(sum);
}

// out[r * NT + t] = the accumulators of (r, t) summed, reduced, plus the tail (columns from
// dot_block_columns(n) to n) in ascending order, one std::fma per column (explicit, so that no
// caller's inlining changes the rounding).
template <int NR, int NT, dense_element W, class X>
inline void dot_block_finish(const W* const* w, const X* const* x, std::int64_t n, const float* acc, std::int64_t ld,
                             float* out) noexcept {
    namespace s = kernel_detail::simd;
#if defined(NEXTTOK_KERNELS_AVX512)
    static_assert(s::accumulators == 1);
    s::reduce_slots<NR * NT>([&](int k) { return acc + k / NT * ld + k % NT * acc_slot; }, out);
#else
    for (int k = 0; k < NR * NT; ++k) out[k] = reduce_slot(acc + k / NT * ld + k % NT * acc_slot);
#endif
    for (int r = 0; r < NR; ++r) {
        for (int t = 0; t < NT; ++t) {
            for (std::int64_t j = dot_block_columns<W>(n); j < n; ++j)
                out[r * NT + t] = std::fma(s::to_float(w[r][j]), s::to_float(x[t][j]), out[r * NT + t]);
        }
    }
}

// out[r * NT + t] = sum_i w[r][i] * x[t][i] for r < NR, t < NT: a register tile over all columns.
template <int NR, int NT, dense_element W, class X>
inline void dot_block(const W* const* w, const X* const* x, std::int64_t n, float* out,
                      kernel_detail::simd::prefetch_cursor pf = {}) noexcept {
    alignas(64) float acc[NR * NT * acc_slot] = {};
    dot_block_range<NR, NT>(w, x, 0, dot_block_columns<W>(n), acc, NT * acc_slot, pf);
    dot_block_finish<NR, NT>(w, x, n, acc, NT * acc_slot, out);
}

// Calls f.template operator()<NR, NT>(r, t) for the register tiles covering rows [r0, r1) and
// tokens [t0, t1): TR x TT, then narrower tiles for the remainders.
template <int TR, int TT, class F>
void for_each_tile(std::int64_t r0, std::int64_t r1, std::int64_t t0, std::int64_t t1, F&& f) {
    auto row_tiles = [&]<int NT>(std::int64_t t) {
        std::int64_t r = r0;
        for (; r + TR <= r1; r += TR) f.template operator()<TR, NT>(r, t);
        for (; r < r1; ++r) f.template operator()<1, NT>(r, t);
    };
    std::int64_t t = t0;
    for (; t + TT <= t1; t += TT) row_tiles.template operator()<TT>(t);
    [&]<int... K>(std::integer_sequence<int, K...>) {
        ((t1 - t == K + 1 ? row_tiles.template operator()<K + 1>(t) : void()), ...);
    }
    (std::make_integer_sequence<int, TT - 1>{});
}

// out[t] = sum_i w[i] * x[t][i] for t < NT: one row of dot_block, bitwise the same per output.
template <int NT, dense_element W, class X>
inline void dot_tile(const W* w, const X* const* x, std::int64_t n, float* out) noexcept {
    const W* ws[1] = {w};
    dot_block<1, NT>(ws, x, n, out);
}

// Products of bfloat16 weights (matmul of BF16 tensors) take their activations rounded to
// bfloat16 (bf16_act, round_to_bf16: what vcvtne2ps2bf16 gives) and add as vdpbf16ps adds: over
// steps of 32 columns, lane j of one 16-lane accumulator adds the product of columns 32 s + 2 j + 1,
// then that of 32 s + 2 j, each rounded once (the product of two bfloat16 is exact in float, so a
// fused multiply-add gives the instruction's sum); then the lanes are reduced as above and the
// columns past the last whole 32 added in ascending order. The AVX-512 set uses vdpbf16ps where the
// CPU has AVX512_BF16 (decided at run time, or by the flags without dispatch); every other path
// splits the words into odd and even float lanes and makes the two fused multiply-adds, so all
// paths give the same bits. Except where the instruction flushes subnormals to zero and a fused
// multiply-add does not: a product or a partial sum below 2^-126 in magnitude (a row whose running
// sum stays below about 2^-100 while such a product is added), which no model's weights and
// activations come near. (llama.cpp rounds the activations of BF16 weights to bfloat16 too.)
inline constexpr std::int64_t bf16_step = 32;

// Columns in whole steps of bf16_block_range; the rest is bf16_block_finish's tail.
inline constexpr std::int64_t bf16_block_columns(std::int64_t n) noexcept { return n / bf16_step * bf16_step; }

inline float to_float(bf16_act a) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(a.bits) << 16); }

#undef NEXTTOK_BF16_DOT_INSTRUCTION  // (this file is compiled once per kernel set)
#undef NEXTTOK_BF16_DOT_TARGET
#if defined(NEXTTOK_KERNELS_AVX512) && (defined(NEXTTOK_KERNELS_AVX512BF16) || defined(NEXTTOK_KERNELS_DISPATCH))
#define NEXTTOK_BF16_DOT_INSTRUCTION 1
#if defined(NEXTTOK_KERNELS_AVX512BF16)
#define NEXTTOK_BF16_DOT_TARGET
#else
#define NEXTTOK_BF16_DOT_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma,f16c")))
#endif
NEXTTOK_INTRINSICS_BEGIN
// bf16_block_range with vdpbf16ps: one instruction per row, token and step.
template <int NR, int NT>
NEXTTOK_BF16_DOT_TARGET void bf16_block_range_dp(const Eigen::bfloat16* const* w, const bf16_act* const* x,
                                                 std::int64_t i0, std::int64_t i1, float* acc, std::int64_t ld,
                                                 kernel_detail::simd::prefetch_cursor pf) noexcept {
    __m512 v[NR][NT];
    NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) {
        NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) v[r][t] = _mm512_loadu_ps(acc + r * ld + t * acc_slot);
    }
    std::int64_t i = i0;
    do {
        pf.advance(NR * bf16_step * sizeof(Eigen::bfloat16));
        __m512i wv[NR];
        NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) wv[r] = _mm512_loadu_si512(w[r] + i);
        NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) {
            __m512i xv = _mm512_loadu_si512(x[t] + i);
            asm("" : "+v"(xv));  // one load per token, not one per row (simd::in_register)
            NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) v[r][t] =
                _mm512_dpbf16_ps(v[r][t], reinterpret_cast<__m512bh>(wv[r]), reinterpret_cast<__m512bh>(xv));
        }
        i += bf16_step;
    } while (i + bf16_step <= i1);
    NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) {
        NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) _mm512_storeu_ps(acc + r * ld + t * acc_slot, v[r][t]);
    }
}
// packed_block_range with vdpbf16ps: operands packed as words (matmul.hpp, pack_tiles with
// Words), step s of weight row r the 32 words at wp + (s * NR + r) * 16 floats, of token t at
// xp + (s * NT + t) * 16; the same sums as bf16_block_range, bitwise.
template <int NR, int NT>
NEXTTOK_BF16_DOT_TARGET void packed_bf16_block_range_dp(const float* wp, const float* xp, std::int64_t steps,
                                                        float* acc, std::int64_t ld, bool from_zero) noexcept {
    if (steps <= 0) return;
    __m512 v[NR][NT];
    NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) {
        NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) v[r][t] =
            from_zero ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + r * ld + t * acc_slot);
    }
    for (std::int64_t i = 0; i < steps; ++i, wp += NR * 16, xp += NT * 16) {
        __m512i wv[NR];
        NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) wv[r] = _mm512_loadu_si512(wp + r * 16);
        NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) {
            __m512i xv = _mm512_loadu_si512(xp + t * 16);
            asm("" : "+v"(xv));
            NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) v[r][t] =
                _mm512_dpbf16_ps(v[r][t], reinterpret_cast<__m512bh>(wv[r]), reinterpret_cast<__m512bh>(xv));
        }
    }
    NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) {
        NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) _mm512_storeu_ps(acc + r * ld + t * acc_slot, v[r][t]);
    }
}
NEXTTOK_INTRINSICS_END
#endif

// Whether this set multiplies bfloat16 weights by vdpbf16ps (then matmul's prefill packs them as
// words, packed_bf16_block_range_dp; otherwise as float, packed_block_range).
inline bool bf16_dot_instruction() noexcept {
#if defined(NEXTTOK_KERNELS_AVX512BF16)
    return true;
#elif defined(NEXTTOK_BF16_DOT_INSTRUCTION)
    return ::nexttok::detail::isa::cpu_has_avx512bf16();
#else
    return false;
#endif
}

// Whether matmul's prefill (pack_tiles, packed_steps, row_block_prefill) multiplies bfloat16
// weights by vdpbf16ps: where this set does and the CPU runs it at full rate (detail/isa.hpp,
// cpu_bf16_dot_full_rate). Otherwise by two FMAs per pair, the same sums bitwise.
inline bool bf16_dot_in_prefill() noexcept {
    return bf16_dot_instruction() && ::nexttok::detail::isa::cpu_bf16_dot_full_rate();
}

// As dot_block_range for bfloat16 weights and rounded activations: columns [i0, i1) (multiples of
// bf16_step) of NR rows x NT tokens into the accumulators in acc (the same layout).
template <int NR, int NT>
inline void bf16_block_range(const Eigen::bfloat16* const* w, const bf16_act* const* x, std::int64_t i0,
                             std::int64_t i1, float* acc, std::int64_t ld,
                             kernel_detail::simd::prefetch_cursor pf = {}) noexcept {
    namespace s = kernel_detail::simd;
    constexpr int A = s::accumulators;
    if (i0 + bf16_step > i1) return;
#if defined(NEXTTOK_BF16_DOT_INSTRUCTION)
    if (bf16_dot_instruction()) return bf16_block_range_dp<NR, NT>(w, x, i0, i1, acc, ld, pf);
#endif
    s::vec v[NR][NT][A];
    load_tile_accumulators<NR, NT>(acc, ld, v);
    std::int64_t i = i0;
    do {
        pf.advance(NR * bf16_step * sizeof(Eigen::bfloat16));
        NEXTTOK_UNROLL for (int a = 0; a < A; ++a) {
            // Accumulator a's lanes take the 2 * width words from i + 2 * width * a: the odd words of
            // every row and token first, then the even ones (loaded again from L1: a tile's
            // accumulators and one half of its rows fit in the registers, both halves do not).
            const std::int64_t o = i + 2 * s::width * a;
            NEXTTOK_UNROLL for (int h = 0; h < 2; ++h) {
                s::vec wv[NR];
                NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) wv[r] =
                    h == 0 ? s::load_odd_words(w[r] + o) : s::load_even_words(w[r] + o);
                NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) {
                    const s::vec xv =
                        s::in_register(h == 0 ? s::load_odd_words(x[t] + o) : s::load_even_words(x[t] + o));
                    NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) v[r][t][a] = s::fmadd(wv[r], xv, v[r][t][a]);
                }
            }
        }
        i += bf16_step;
    } while (i + bf16_step <= i1);
    store_tile_accumulators<NR, NT>(acc, ld, v);
}

// As dot_block_finish, with the tail past bf16_block_columns(n).
template <int NR, int NT>
inline void bf16_block_finish(const Eigen::bfloat16* const* w, const bf16_act* const* x, std::int64_t n,
                              const float* acc, std::int64_t ld, float* out) noexcept {
    for (int r = 0; r < NR; ++r) {
        for (int t = 0; t < NT; ++t) {
            float total = reduce_slot(acc + r * ld + t * acc_slot);
            for (std::int64_t j = bf16_block_columns(n); j < n; ++j)
                total = std::fma(static_cast<float>(w[r][j]), to_float(x[t][j]), total);
            out[r * NT + t] = total;
        }
    }
}

// As dot_block: out[r * NT + t] = the product of bfloat16 row r with rounded activations x[t].
template <int NR, int NT>
inline void bf16_block(const Eigen::bfloat16* const* w, const bf16_act* const* x, std::int64_t n, float* out,
                       kernel_detail::simd::prefetch_cursor pf = {}) noexcept {
    alignas(64) float acc[NR * NT * acc_slot] = {};
    bf16_block_range<NR, NT>(w, x, 0, bf16_block_columns(n), acc, NT * acc_slot, pf);
    bf16_block_finish<NR, NT>(w, x, n, acc, NT * acc_slot, out);
}

// W may also be a quantized block (quant_dot.hpp).
template <class W, class X>
inline float dot(const W* w, const X* x, std::int64_t n) noexcept {
    float out;
    const X* xs[1] = {x};
    dot_tile<1>(w, xs, n, &out);
    return out;
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS

#endif  // NEXTTOK_KERNEL_PASS

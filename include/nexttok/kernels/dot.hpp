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

#include <Eigen/Core>

#include <cmath>
#include <concepts>
#include <cstdint>

namespace nexttok::NEXTTOK_KERNEL_PASS {

// A type of one element of a dense vector: weights, activations and cache entries.
template <class T>
concept dense_element = std::same_as<T, float> || std::same_as<T, Eigen::half> || std::same_as<T, Eigen::bfloat16>;

using kernel_detail::simd::acc_slot;

// Floats of one step of dot_block_range: the columns that go once through every accumulator.
inline constexpr std::int64_t dot_step =
    static_cast<std::int64_t>(kernel_detail::simd::accumulators) * kernel_detail::simd::width;

// Accumulates columns [i0, i1) (multiples of accumulators * width) of NR rows x NT tokens into
// the accumulators kept in memory: output (r, t) in acc[r * ld + t * acc_slot, + acc_slot).
// Each weight chunk is loaded (and converted) once for the NT tokens, each activation chunk once
// for the NR rows; the NR * NT independent chains hide the FMA latency. Prefill splits the
// columns into ranges so that a tile's weights and activations stay in L1; since the
// accumulators are stored and reloaded exactly, the order per output is the same for any split
// and any tile: chunk k of `width` lanes goes to accumulator k % accumulators (a single 16-lane
// accumulator with AVX-512, two 8-lane ones emulating it with AVX2 and the portable code), in
// ascending k.
// `pf` is advanced by the bytes of weights each step reads (see prefetch_cursor).
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
    NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) {
        NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) {
            NEXTTOK_UNROLL for (int a = 0; a < A; ++a) v[r][t][a] = s::load(acc + r * ld + t * acc_slot + a * s::width);
        }
    }
    std::int64_t i = i0;
    do {
        pf.advance(NR * step * sizeof(W));
        NEXTTOK_UNROLL for (int a = 0; a < A; ++a) {
            s::vec wv[NR];
            NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) wv[r] = s::load(w[r] + i + a * s::width);
            NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) {
                const s::vec xv = s::in_register(s::load(x[t] + i + a * s::width));
                NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) v[r][t][a] = s::fmadd(wv[r], xv, v[r][t][a]);
            }
        }
        i += step;
    } while (i + step <= i1);
    NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) {
        NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) {
            NEXTTOK_UNROLL for (int a = 0; a < A; ++a) s::store(acc + r * ld + t * acc_slot + a * s::width, v[r][t][a]);
        }
    }
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

// out[r * NT + t] = the accumulators of (r, t) summed, reduced, plus the tail (columns from
// dot_block_columns(n) to n) in ascending order, one std::fma per column (explicit, so that no
// caller's inlining changes the rounding).
template <int NR, int NT, dense_element W, class X>
inline void dot_block_finish(const W* const* w, const X* const* x, std::int64_t n, const float* acc, std::int64_t ld,
                             float* out) noexcept {
    namespace s = kernel_detail::simd;
    constexpr int A = s::accumulators;
    for (int r = 0; r < NR; ++r) {
        for (int t = 0; t < NT; ++t) {
            const float* a0 = acc + r * ld + t * acc_slot;
            s::vec sum = s::load(a0);
            for (int a = 1; a < A; ++a) sum = s::add(sum, s::load(a0 + a * s::width));
            float total = s::reduce(sum);
            for (std::int64_t j = dot_block_columns<W>(n); j < n; ++j)
                total = std::fma(s::to_float(w[r][j]), s::to_float(x[t][j]), total);
            out[r * NT + t] = total;
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

// out[t] = sum_i w[i] * x[t][i] for t < NT: one row of dot_block, bitwise the same per output.
template <int NT, dense_element W, class X>
inline void dot_tile(const W* w, const X* const* x, std::int64_t n, float* out) noexcept {
    const W* ws[1] = {w};
    dot_block<1, NT>(ws, x, n, out);
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

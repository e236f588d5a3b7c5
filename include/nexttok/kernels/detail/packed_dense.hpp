// Dense operands packed by register tiles (pack_tiles): the weight panels and activations of prefill
// (matmul.hpp, row_block_prefill), and the activations of the wide tiles that read dense weights in
// place for 7-16 tokens (dot_rows_by_chunks). Internal to matmul.hpp. Part of every kernel set
// (kernels/detail/pass_bodies.hpp includes it once per set, after dot.hpp): no include guard.

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

// Packed dense prefill takes the columns in ranges of this many (steps of dot_step columns).
inline constexpr std::int64_t packed_prefill_columns = 512;
static_assert(packed_prefill_columns % dot_step == 0);
inline constexpr std::int64_t packed_range_steps = packed_prefill_columns / dot_step;
// Where, in a packed panel of `total` rows (weight rows or tokens; pack_tiles' layout below), the
// tile that starts at row p begins its part of the range of steps [k0, k1).
inline constexpr std::int64_t packed_tile_offset(std::int64_t k0, std::int64_t k1, std::int64_t total,
                                                 std::int64_t p) noexcept {
    return (k0 * total + p * (k1 - k0)) * dot_step;
}

// Copies rows [0, count) of src (row stride ld), their first steps * dot_step elements as float,
// into `out` by column ranges of packed_prefill_columns and register tiles: in the range of steps
// [k0, k1), the tile of rows [p, p + m) starts at out + packed_tile_offset(k0, k1, total, first + p)
// and holds the chunk of accumulator a of step k of row i at + ((a * (k1 - k0) + k - k0)
// * m + i) * simd::width (packed_block_range's layout). The rows are rows [first, first + count) of
// a panel of `total` rows, so that a range's tiles follow one another and all that the tiles of
// one range read, accumulator by accumulator, is one contiguous stream. Tiles have `tile` rows;
// the rest are tiles of one row (ones), or one tile (as for_each_tile does for rows and tokens).
// Pairs (bfloat16 weights and their rounded activations, bf16_block_range's order): step 2 q of
// a row holds the odd words of its columns [32 q, 32 q + 32), step 2 q + 1 the even ones, so that
// packed_block_range adds them in that order; where prefill uses vdpbf16ps
// (packed_bf16_block_range_dp, one accumulator of 16 lanes), step q holds the 32 words as they
// are, in the 16 floats of a step (`words`). packed_steps gives `steps` for each case.
template <class T, bool Pairs = false>
void pack_tiles(const T* src, std::int64_t ld, std::int64_t count, std::int64_t steps, std::int64_t tile, bool ones,
                float* out, std::int64_t total, std::int64_t first,
                bool words = Pairs && bf16_dot_in_prefill()) noexcept {
    static_assert(!Pairs || (sizeof(T) == 2 && packed_range_steps % 2 == 0));
    for (std::int64_t k0 = 0; k0 < steps; k0 += packed_range_steps) {
        const std::int64_t len = std::min(packed_range_steps, steps - k0);
        for (std::int64_t p = 0; p < count;) {
            const std::int64_t m = count - p >= tile ? tile : ones ? 1 : count - p;
            float* o = out + packed_tile_offset(k0, k0 + len, total, first + p);
            for (std::int64_t a = 0; a < simd::accumulators; ++a)
                for (std::int64_t k = 0; k < len; k += Pairs && !words ? 2 : 1)
                    for (std::int64_t i = 0; i < m; ++i) {
                        const T* row = src + (p + i) * ld;
                        float* chunk = o + ((a * len + k) * m + i) * simd::width;
                        if constexpr (Pairs) {
                            if (words) {
                                std::memcpy(chunk, row + (k0 + k) * bf16_step, bf16_step * sizeof(T));
                            } else {
                                const T* pair = row + (k0 + k) / 2 * bf16_step + 2 * a * simd::width;
                                simd::store(chunk, simd::load_odd_words(pair));
                                simd::store(chunk + m * simd::width, simd::load_even_words(pair));
                            }
                        } else {
                            simd::store(chunk, simd::load(row + (k0 + k) * dot_step + a * simd::width));
                        }
                    }
            p += m;
        }
    }
}

#if defined(NEXTTOK_KERNELS_INT8_AVX512)
// y[t * ldy + r] = sum_i w[r][i] * x[t][i] for rows [r0, r1) of w (row stride `stride`) and t < NT
// (7-8 tokens in place: matmul.hpp, wide_tile_rows): dot_block's sums, bitwise, by NR-row tiles over
// column chunks of dot_chunk_columns, 8 tiles of rows at a time (their accumulators in memory between
// chunks). The tokens' 8 rows of 2048 floats (64 KiB) do not fit in L1, and a tile over all columns
// read them from L2 for every tile (Intel Xeon, family 6 model 207, 1.1B-shaped f16, 2 threads, batch
// 8: 68.9-69.0 -> 72-76 tokens/s; chunks of 256 or 384 columns the same, 1024 none).
// The tokens come packed (pack_tiles, by tiles of NT tokens over all `total` tokens, this tile's first
// at `first`; matmul_group packs them once per call): a chunk's activations are one contiguous stream
// of 16 KiB, where the token rows lie 8 KiB apart (on the same L1 sets as the f16 weight rows, 4 KiB
// apart), and a step's 8 loads take one base register instead of 8 row pointers (with the pointers the
// loop reloaded its weight rows' addresses from the stack). Same machine, 1 thread, 8 tokens of f16
// rows of 2048 columns: 240 rows in L2 0.60 -> 0.67-0.68 of peak; 16 matrices of 5632 rows from
// memory 0.44-0.52 -> 0.49-0.55. Every weight product of a 1.1B-shaped f16 step, 2 threads, both
// builds in turn, medians of ten: 100 -> 92 ms at 8 tokens, 178 -> 165 ms at 16 (benchmarks/README.md,
// "Batched decode").
// Each tile fetches into L1, a line per line of its own, the same columns of the tile wide_ahead_tiles
// after it in the order the tiles run (a chunk's tiles, then the next chunk's, after the last chunk
// the next block's first): the first chunk of every row comes from memory, and the hardware
// prefetchers did not have it in time (the tile after: batch 8 4.94-4.98 -> 5.70-5.79x batch 1, same
// machine). Two tiles ahead rather than one, on AMD Zen 5: every weight product of a 1.1B-shaped f16
// step, 8 tokens, both in turn in one process, medians of 40: 2 threads 58.1-59.1 -> 54.8-55.7 ms,
// 1 thread 106 -> 97 ms (three tiles ahead 55.2-56.0 and 101; one tile of 3 rows by 512 columns
// of 8 tokens is about 0.1 microsecond there, about a memory access). The tail past the last whole
// step comes from the rows `x`.
inline constexpr std::int64_t dot_chunk_columns = packed_prefill_columns;
inline constexpr std::int64_t wide_ahead_tiles = 2;

// dot_block_range's sums over columns [i0, i1) (whole steps) of rows w + r * stride, r < NR, and NT
// packed tokens (the chunk of step k, counted from i0, of token t at xp + (k * NT + t) * width), the accumulators in
// acc (output (r, t) at acc[r * ld + t * acc_slot]; with `from_zero`, the sums start from zero
// instead); before each line of its rows, the same stretch of the NP rows at near_rows into L1.
template <int NR, int NT, int NP, dense_element W>
inline void wide_block_range(const W* w, std::int64_t stride, const float* xp, std::int64_t i0, std::int64_t i1,
                             float* acc, std::int64_t ld, const std::uintptr_t* near_rows, bool from_zero) noexcept {
    namespace s = simd;
    static_assert(s::accumulators == 1 && dot_step == s::width);
    if (i0 + dot_step > i1) return;
    s::vec v[NR][NT][1];
    if (from_zero) {
        NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) v[r][t][0] = s::zero();
    } else {
        load_tile_accumulators<NR, NT>(acc, ld, v);
    }
    auto fma_step = [&](std::int64_t i, const float* xk) NEXTTOK_ALWAYS_INLINE {
        s::vec wv[NR];
        NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) wv[r] = s::load(w + r * stride + i);
        NEXTTOK_UNROLL for (int t = 0; t < NT; ++t) {
            const s::vec xv = s::in_register(s::load(xk + t * s::width));
            NEXTTOK_UNROLL for (int r = 0; r < NR; ++r) v[r][t][0] = s::fmadd(wv[r], xv, v[r][t][0]);
        }
    };
    constexpr int per_line = std::max<int>(1, 64 / (dot_step * sizeof(W)));
    std::int64_t i = i0;
    for (; i + per_line * dot_step <= i1; i += per_line * dot_step, xp += per_line * NT * s::width) {
        NEXTTOK_UNROLL for (int r = 0; r < NP; ++r) s::prefetch_l1(near_rows[r] + (i - i0) * sizeof(W));
        NEXTTOK_UNROLL for (int k = 0; k < per_line; ++k) fma_step(i + k * dot_step, xp + k * NT * s::width);
    }
    for (; i + dot_step <= i1; i += dot_step, xp += NT * s::width) fma_step(i, xp);
    store_tile_accumulators<NR, NT>(acc, ld, v);
}

template <int NR, int NT, dense_element W>
inline void dot_rows_by_chunks(const W* w, std::int64_t stride, std::int64_t r0, std::int64_t r1, std::int64_t n,
                               const float* const* x, const float* packed, std::int64_t total, std::int64_t first,
                               float* y, std::int64_t ldy) noexcept {
    constexpr std::int64_t block = 8 * NR, ld = NT * acc_slot;
    alignas(64) float acc[block * ld];
    const std::int64_t columns = dot_block_columns<W>(n);
    for (std::int64_t rb = r0; rb < r1; rb += block) {
        const std::int64_t re = std::min(r1, rb + block);
        // (The first chunk starts its sums from zero; rows shorter than one step have no chunk.)
        if (columns == 0) std::fill(acc, acc + (re - rb) * ld, 0.0f);
        // Tile (r, i0) fetches into L1 the NR rows wide_ahead_tiles tiles on: in the chunk, past its
        // last row the next chunk's first rows, past the last chunk's the next block's rows (which
        // follow) from column 0; rows past the task's end are its last row again.
        const auto range = [&]<int K>(std::int64_t r, std::int64_t i0, std::int64_t i1) {
            const bool last_chunk = i1 >= columns;
            std::int64_t rn = r + wide_ahead_tiles * NR, in = i0;
            if (rn >= re) {
                if (!last_chunk) rn = rb + (rn - re);
                in = last_chunk ? 0 : i1;
            }
            std::uintptr_t wn[NR];
            for (int k = 0; k < NR; ++k)
                wn[k] = reinterpret_cast<std::uintptr_t>(w + std::min(rn + k, r1 - 1) * stride + in);
            const float* xp = packed + packed_tile_offset(i0 / dot_step, i1 / dot_step, total, first);
            wide_block_range<K, NT, NR>(w + r * stride, stride, xp, i0, i1, acc + (r - rb) * ld, ld, wn, i0 == 0);
        };
        for (std::int64_t i0 = 0; i0 < columns; i0 += dot_chunk_columns) {
            const std::int64_t i1 = std::min(columns, i0 + dot_chunk_columns);
            std::int64_t r = rb;
            for (; r + NR <= re; r += NR) range.template operator()<NR>(r, i0, i1);
            for (; r < re; ++r) range.template operator()<1>(r, i0, i1);
        }
        for (std::int64_t r = rb; r < re; ++r) {
            const W* ws[1] = {w + r * stride};
            float out[NT];
            dot_block_finish<1, NT>(ws, x, n, acc + (r - rb) * ld, ld, out);
            for (int t = 0; t < NT; ++t) y[t * ldy + r] = out[t];
        }
    }
}

#endif  // NEXTTOK_KERNELS_INT8_AVX512

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

// Prefill of float, half and (by two FMAs per pair) bfloat16 weights with AVX-512 by outer
// products: the same sums, bitwise, as packed_block_range and its finish (kernels/dot.hpp), in
// another shape. Internal: matmul.hpp's row_block_prefill and matmul_group call it.
//
// The order of a dot product with AVX-512 is: lane l (of 16) sums w[16 s + l] x[16 s + l] over the
// steps s, from zero, one FMA per step; then the 16 lanes are added by a fixed tree (lane j + lane
// j + 8, then + 4, + 2, + 1: simd::reduce). packed_block_range holds one output per register and
// multiplies a weight vector by a token vector, 10 vector loads for 24 FMAs (4 rows x 6 tokens);
// on a core whose vector loads take part of the FMA issue it reaches 0.66-0.71 of peak with its
// panel in L2. Here a register holds lane l of 16 rows for one token: each step loads 3 vectors
// of packed weights (48 rows, lane l of step s) and broadcasts 8 token values (lane l of step s),
// for 24 FMAs. A pass over the steps gives lane l of every output of the 48 x 8 tile; the 16
// passes are taken in bit-reversed lane order (0, 8, 4, 12, ...) so that each pair the tree adds
// is ready as soon as both halves are, the partial sums waiting in one buffer per tree level.
// The weights are packed lane by lane (pack_outer_panel: 16 x 16 transposes); the activations once
// per call, by tiles of 8 tokens (pack_outer_tokens), zeros beyond the last token.
// Part of every kernel set (kernels/detail/pass_bodies.hpp includes it once per set, before
// matmul.hpp; the other sets get stubs that are never called, outer_prefill being false there):
// no include guard.

#if defined(NEXTTOK_KERNELS_AVX512)

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

NEXTTOK_INTRINSICS_BEGIN

inline constexpr int outer_tokens = 8, outer_row_vectors = 3;
inline constexpr std::int64_t outer_rows = 16 * outer_row_vectors;

// Floats from one lane's part of a packed panel or token tile to the next: `steps` of `width`
// floats and one line more, so that the 16 lanes that a pack writes together do not all map to
// one L1 set (parts of 2048 columns are a multiple of 4 KiB). Packing 48 rows of 2048 halves: 0.48
// -> 0.33 cycles per weight with the rows in L2, 0.57 -> 0.41 from memory.
inline constexpr std::int64_t outer_lane(std::int64_t steps, std::int64_t width) noexcept { return steps * width + 16; }
// Floats of a packed token tile, and of a panel of outer_rows (matmul's workspace holds these).
inline constexpr std::int64_t outer_tile_floats(std::int64_t steps) noexcept {
    return 16 * outer_lane(steps, outer_tokens);
}
inline constexpr std::int64_t outer_panel_floats(std::int64_t steps) noexcept {
    return 16 * outer_lane(steps, outer_rows);
}

// Whether prefill of dense weights against activations X (n > dense_in_place_tokens) takes this
// path: where the CPU runs it faster (detail/isa.hpp, cpu_outer_prefill), for rows of whole steps
// (no tail for the finish), float activations (float and half weights) or bfloat16 weights by two
// FMAs per pair (bf16_dot_in_prefill false: X = bf16_act).
template <class X>
inline bool outer_prefill(std::int64_t cols) noexcept {
    if (!::nexttok::detail::isa::cpu_outer_prefill() || cols <= 0) return false;
    if constexpr (std::is_same_v<X, bf16_act>)
        return !bf16_dot_in_prefill() && cols % bf16_step == 0;
    else
        return std::is_same_v<X, float> && cols % 16 == 0;
}

// Step s of a row as 16 floats, lane l being the column that lane l of an accumulator takes at
// step s: columns 16 s + l; for bfloat16 pairs (bf16_block_range's order, pack_tiles' Pairs) the
// odd words of the 32 columns from 16 s for even s, the even words of those from 16 (s - 1) for
// odd s.
template <class T>
NEXTTOK_ALWAYS_INLINE inline __m512 outer_step(const T* row, std::int64_t s) noexcept {
    if constexpr (sizeof(T) == 2 && !std::is_same_v<T, Eigen::half>)
        return s % 2 == 0 ? simd::load_odd_words(row + 16 * s) : simd::load_even_words(row + 16 * (s - 1));
    else
        return simd::load(row + 16 * s);
}

// r[i] (16 lanes each) becomes lane i of r[0..15]: r[l][i] = r_before[i][l].
NEXTTOK_ALWAYS_INLINE inline void transpose16(__m512 (&r)[16]) noexcept {
    __m512 t[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    const auto pd = [](__m512 v) {
        return _mm512_castps_pd(v);
    };
    for (int i = 0; i < 4; ++i) {
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t[4 * i]), pd(t[4 * i + 2])));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t[4 * i]), pd(t[4 * i + 2])));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t[4 * i + 1]), pd(t[4 * i + 3])));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t[4 * i + 1]), pd(t[4 * i + 3])));
    }
    for (int j = 0; j < 4; ++j) {
        t[j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
        t[4 + j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xdd);
        t[8 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
        t[12 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xdd);
    }
    for (int j = 0; j < 4; ++j) {
        r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
        r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
        r[4 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0x88);
        r[12 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0xdd);
    }
}

// Tokens [t0, t0 + outer_tokens) of x (row stride ldx, n rows; zeros past n) packed for the
// lane passes: lane l of step s of token t at out[l * outer_lane(steps, outer_tokens) + s *
// outer_tokens + t]. Two steps per transpose: rows 0-7 the tokens' step s, rows 8-15 their
// step s + 1.
template <class X>
inline void pack_outer_tokens(const X* x, std::int64_t ldx, std::int64_t n, std::int64_t t0, std::int64_t steps,
                              float* out) noexcept {
    static_assert(outer_tokens == 8);
    for (std::int64_t s = 0; s < steps; s += 2) {
        __m512 r[16];
        for (int t = 0; t < outer_tokens; ++t) {
            const bool in = t0 + t < n;
            r[t] = in ? outer_step(x + (t0 + t) * ldx, s) : _mm512_setzero_ps();
            r[8 + t] = in && s + 1 < steps ? outer_step(x + (t0 + t) * ldx, s + 1) : _mm512_setzero_ps();
        }
        transpose16(r);
        for (int l = 0; l < 16; ++l) {
            float* o = out + l * outer_lane(steps, outer_tokens) + s * outer_tokens;
            if (s + 1 < steps)
                _mm512_storeu_ps(o, r[l]);
            else
                _mm256_storeu_ps(o, _mm512_castps512_ps256(r[l]));
        }
    }
}

// Rows [0, m) of w (row stride `stride`, m <= 16 RV; zeros after m) packed for the lane passes:
// lane l of step s of row 16 v + i at panel[l * outer_lane(steps, 16 RV) + (s * RV + v) * 16 + i].
template <int RV, class W>
inline void pack_outer_panel(const W* w, std::int64_t stride, std::int64_t m, std::int64_t steps,
                             float* panel) noexcept {
    const std::int64_t lane = outer_lane(steps, 16 * RV);
    // The loop with its row count fixed at compile time, so that full blocks of 16 rows test
    // nothing per row (kept in a mask register, the 16 tests took a tenth of the pack's time).
    auto rows = [&]<bool Full>(int v, const W* w0) {
        const std::int64_t valid = std::min<std::int64_t>(16, m - 16 * v);
        for (std::int64_t s = 0; s < steps; ++s) {
            __m512 r[16];
            for (int i = 0; i < 16; ++i)
                r[i] = Full || i < valid ? outer_step(w0 + i * stride, s) : _mm512_setzero_ps();
            transpose16(r);
            for (int l = 0; l < 16; ++l) _mm512_storeu_ps(panel + l * lane + (s * RV + v) * 16, r[l]);
        }
    };
    for (int v = 0; v < RV; ++v) {
        if (16 * v + 16 <= m)
            rows.template operator()<true>(v, w + 16 * v * stride);
        else
            rows.template operator()<false>(v, w + 16 * v * stride);
    }
}

// One lane pass: c[v][t] = sum over the steps, from zero, of the packed weights' vector v times
// token t's value (wp, xp: the lane's part of the panel and of the token tile).
template <int RV>
NEXTTOK_ALWAYS_INLINE inline void outer_lane_pass(const float* wp, const float* xp, std::int64_t steps,
                                                  __m512 (&c)[RV][outer_tokens]) noexcept {
    for (int v = 0; v < RV; ++v)
        for (int t = 0; t < outer_tokens; ++t) c[v][t] = _mm512_setzero_ps();
    // Four steps per iteration: the loop's own counter and pointer updates otherwise take issue
    // slots from the FMAs (one lane pass of 128 or 352 steps with its operands in L2: 0.70-0.77 ->
    // 0.80-0.84 of peak; 1.1B-shaped f16 prefill, 1 thread, 74-79 -> 80-85 tokens/s).
    NEXTTOK_UNROLL_4 for (std::int64_t s = 0; s < steps; ++s, wp += RV * 16, xp += outer_tokens) {
        __m512 wv[RV];
        NEXTTOK_UNROLL for (int v = 0; v < RV; ++v) wv[v] = _mm512_loadu_ps(wp + v * 16);
        NEXTTOK_UNROLL for (int t = 0; t < outer_tokens; ++t) {
            const __m512 xv = _mm512_set1_ps(xp[t]);
            NEXTTOK_UNROLL for (int v = 0; v < RV; ++v) c[v][t] = _mm512_fmadd_ps(wv[v], xv, c[v][t]);
        }
    }
}

// y[t * ldy + r] for rows [0, m) of the panel (RV vectors of rows) and the n tokens packed by
// pack_outer_tokens in xp (tiles of outer_tokens, outer_tile_floats(steps) floats each).
template <int RV>
inline void outer_tiles(const float* panel, std::int64_t m, const float* xp, std::int64_t n, std::int64_t steps,
                        float* y, std::int64_t ldy) noexcept {
    const auto row_mask = [&](int v) {
        const std::int64_t k = std::clamp<std::int64_t>(m - 16 * v, 0, 16);
        return static_cast<__mmask16>((1u << k) - 1u);
    };
    for (std::int64_t t0 = 0; t0 < n; t0 += outer_tokens) {
        const float* xt = xp + t0 / outer_tokens * outer_tile_floats(steps);
        __m512 level[4][RV][outer_tokens];  // the tree's partial sums waiting for their pair
        for (int p = 0; p < 16; ++p) {
            const int l = ((p & 1) << 3) | ((p & 2) << 1) | ((p & 4) >> 1) | ((p & 8) >> 3);
            __m512 c[RV][outer_tokens];
            outer_lane_pass<RV>(panel + l * outer_lane(steps, 16 * RV), xt + l * outer_lane(steps, outer_tokens), steps,
                                c);
            int h = 0;
            for (int q = p; q & 1; q >>= 1, ++h)
                for (int v = 0; v < RV; ++v)
                    for (int t = 0; t < outer_tokens; ++t) c[v][t] = _mm512_add_ps(level[h][v][t], c[v][t]);
            if (h == 4) {  // all 16 lanes: the outputs
                for (int t = 0; t < outer_tokens && t0 + t < n; ++t)
                    for (int v = 0; v < RV; ++v)
                        _mm512_mask_storeu_ps(y + (t0 + t) * ldy + 16 * v, row_mask(v), c[v][t]);
            } else {
                for (int v = 0; v < RV; ++v)
                    for (int t = 0; t < outer_tokens; ++t) level[h][v][t] = c[v][t];
            }
        }
    }
}

// Rows [r0, r1) of w times the n tokens packed in xp, into y (row_block_prefill's contract),
// outer_rows at a time, the weights packed into `panel` (outer_panel_floats floats). Without the
// software prefetch of the next rows that packed_block_range spreads over its tiles: here it cost
// the down projection's 2048 x 5632 f16 product 5-12% (1.1B shape, 128 tokens, 1 and 2 threads),
// whose panel of 1 MiB it pushed out of L2, and gained nothing on rows of 2048.
template <class W>
inline void row_block_outer(const W* w, std::int64_t stride, std::int64_t r0, std::int64_t r1, std::int64_t cols,
                            const float* xp, std::int64_t n, float* y, std::int64_t ldy, float* panel) noexcept {
    const std::int64_t steps = cols / 16;
    for (std::int64_t r = r0; r < r1; r += outer_rows) {
        const std::int64_t m = std::min(outer_rows, r1 - r);
        auto run = [&]<int RV>() {
            pack_outer_panel<RV>(w + r * stride, stride, m, steps, panel);
            outer_tiles<RV>(panel, m, xp, n, steps, y + r, ldy);
        };
        if (m > 32)
            run.template operator()<3>();
        else if (m > 16)
            run.template operator()<2>();
        else
            run.template operator()<1>();
    }
}

// The n activation rows of x packed by pack_outer_tokens into the workspace, on the pool.
template <class X>
const float* pack_outer_activations(const X* x, std::int64_t ldx, std::int64_t n, std::int64_t cols, thread_pool& pool,
                                    matmul_workspace& ws) {
    if constexpr (std::is_same_v<X, float> || std::is_same_v<X, bf16_act>) {  // outer_prefill<X>
        const std::int64_t tiles = (n + outer_tokens - 1) / outer_tokens;
        // (packed_tokens gives whole rows of cols floats: tiles * outer_tile_floats of them at least.)
        float* out = ws.packed_tokens((tiles * outer_tile_floats(cols / 16) + cols - 1) / cols, cols);
        pool.parallel_for(tiles, [&](std::int64_t j, int) {
            pack_outer_tokens(x, ldx, n, j * outer_tokens, cols / 16, out + j * outer_tile_floats(cols / 16));
        });
        return out;
    }
    return nullptr;
}

NEXTTOK_INTRINSICS_END

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

#else  // the other sets: packed_block_range (matmul.hpp, row_block_prefill)

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {
template <class X>
inline bool outer_prefill(std::int64_t) noexcept {
    return false;
}
inline constexpr std::int64_t outer_panel_floats(std::int64_t) noexcept { return 0; }
template <class X>
const float* pack_outer_activations(const X*, std::int64_t, std::int64_t, std::int64_t, thread_pool&,
                                    matmul_workspace&) {
    return nullptr;
}
template <class W>
inline void row_block_outer(const W*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, const float*,
                            std::int64_t, float*, std::int64_t, float*) noexcept {}
}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

#endif  // NEXTTOK_KERNELS_AVX512

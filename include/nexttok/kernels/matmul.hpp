// y = x W^T for a weight matrix W (rows x cols) stored in its file format (f32, f16, bf16 and the
// quantized block types: see weight_types.hpp), and n activation vectors x (n x cols, float /
// half / bfloat16): y is n x rows, float. The weight format is a runtime property of the tensor,
// dispatched once per row block to a monomorphized kernel; quantized rows are read in place.
// For the types with an integer kernel (has_int8_kernel: all block types but q5_k and q6_k) the
// activation rows are first quantized to 8 bits (quant_act.hpp); for dense weights and several
// tokens, activations and weight rows are packed as float first.
//
// Work is split into blocks of `rows_per_task` rows (`packed_rows_per_task` when packed,
// `wide_rows_per_task` in wide dense tiles) whatever the thread count; several matrices that read
// the same x (q, k, v; gate, up) can share one parallel_for (matmul_group), which saves thread
// round trips in decode. Inside a block, register tiles of NR rows x NT tokens (dot_block,
// qdot_block, packed_block_range) let each weight chunk serve NT tokens and each activation chunk
// NR rows. Every output is computed in an order that does not depend on the tile, so results do not
// depend on the thread count or on n (see dot.hpp, quant_act.hpp).
#if !defined(NEXTTOK_KERNEL_PASS)
#include <nexttok/kernels/detail/passes.hpp>
#else

#include <nexttok/detail/aligned_buffer.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tensor/quant_blocks.hpp>
#include <nexttok/tensor/tensor_view.hpp>
#include <nexttok/tensor/weight_types.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nexttok::NEXTTOK_KERNEL_PASS {

namespace kernel_detail {

inline constexpr std::int64_t rows_per_task = 16;
inline constexpr int max_group = 4;  // matrices per matmul_group
// Decode (one token) reads each weight once from memory: tiles of decode_tile_rows<W> rows (dense
// weights with AVX-512: 2 rows up to 2 tokens, 4 rows for 3-6), prefetched (simd::prefetch_cursor) about
// prefetch_bytes ahead, and the integer kernels also fetch each row's lines a few steps ahead into
// L1 (quant_act.hpp, near_steps); why: benchmarks/README.md, "How the kernels' parameters were chosen".
template <class W>
inline constexpr int decode_tile_rows = std::is_same_v<W, Eigen::bfloat16> ? 1 : 2;
inline constexpr std::int64_t prefetch_bytes = 9 * 1024;
// How many rows of row_bytes bytes past a tile of NR rows the prefetch starts: prefetch_bytes
// rounded to whole rows, at least one tile (8 rows of every size before: 1.1B decode 3-6% slower
// for f16 and q8_0, whose rows are 2-11 KiB; benchmarks/README.md, as above).
inline constexpr std::int64_t prefetch_distance_rows(std::int64_t row_bytes, int nr) noexcept {
    return row_bytes <= 0 ? nr : std::max<std::int64_t>(nr, (prefetch_bytes + row_bytes / 2) / row_bytes);
}
#if defined(NEXTTOK_KERNELS_AVX512)
inline constexpr int tile_rows = 4, tile_tokens = 6;  // 24 of the 32 zmm registers accumulate
#else
inline constexpr int tile_rows = 2, tile_tokens = 3;
#endif
#if defined(NEXTTOK_KERNELS_INT8_AVX512)
// Integer kernels, 7-8 tokens in place: one tile of 3 rows (24 accumulators), not 6 tokens and a
// tile of 1-2 that unpacks the weights again for them (batch 8: q8_0 80 -> 99 tokens/s; benchmarks/README.md,
// "Batched decode"); float and half weights too, by column chunks over tokens packed once per call
// (detail/packed_dense.hpp, dot_rows_by_chunks). On AMD Zen 5 these kept 6 + 2 until the tokens were
// packed; then 1.1B-shaped f16, 2 threads, batch 8 went from 81-92 to 63-72 ms a step (four runs each).
inline constexpr int wide_tile_rows = 3, wide_tile_tokens = 8;
#endif
// Whether row_block takes dense weights W by wide tiles for n tokens of X (bfloat16 weights take
// rounded activations instead). Their tasks have 48 rows: whole tiles of 3 in dot_rows_by_chunks'
// blocks of 24, where tasks of 16 rows ended in a tile of one row (benchmarks/README.md, "Batched decode").
inline constexpr std::int64_t wide_rows_per_task = 48;
template <class W, class X>
inline bool wide_dense([[maybe_unused]] std::int64_t n) noexcept {
#if defined(NEXTTOK_KERNELS_INT8_AVX512)
    if constexpr (std::is_same_v<X, float> && !quant_block<W> && !std::is_same_v<W, Eigen::bfloat16>)
        return n > tile_tokens;
#endif
    return false;
}
// Register tiles of packed dense weights (prefill): packed_block_range holds one accumulator per
// output in registers at a time, so with AVX2 (two accumulators per output) a tile of 12
// registers serves 6 tokens instead of dot_block's 3, and each weight chunk read from L2 serves
// twice the tokens (2 x 6 rather than 3 x 4 or 4 x 3: benchmarks/README.md, "How the kernels' parameters were
// chosen").
#if defined(NEXTTOK_KERNELS_AVX2) && !defined(NEXTTOK_KERNELS_AVX512)
inline constexpr int packed_tile_rows = 2, packed_tile_tokens = 6;
#else
inline constexpr int packed_tile_rows = tile_rows, packed_tile_tokens = tile_tokens;
#endif

// Rows [r0, r1) of w (row stride `stride`) times NT activation rows xs (X: the element, or q8_act_row);
// wide dense tiles read the tokens packed instead (`packed`: pack_wide's, these NT from token `first`).
template <int NT, class W, class X>
void rows_times_tokens(const W* w, std::int64_t stride, std::int64_t r0, std::int64_t r1, std::int64_t cols,
                       const X* const* xs, float* y, std::int64_t ldy, [[maybe_unused]] const float* packed,
                       [[maybe_unused]] std::int64_t n, [[maybe_unused]] std::int64_t first) noexcept {
    auto tile = [&]<int NR>(std::int64_t r) {
        const W* ws[NR];
        for (int i = 0; i < NR; ++i) ws[i] = w + (r + i) * stride;
        float out[NR * NT];
        // The rows of the tiles that follow are next in memory (dense wide tiles, by chunks: none).
        const std::int64_t row_bytes = stride * static_cast<std::int64_t>(sizeof(W));
        const char* next = reinterpret_cast<const char*>(w + (r + prefetch_distance_rows(row_bytes, NR)) * stride);
        const simd::prefetch_cursor pf{next, next + NR * row_bytes};
        if constexpr (std::is_same_v<X, q8_act_row>)
            NEXTTOK_KERNEL_PASS::qdot_block<NR, NT>(ws, xs, cols, out, pf);
        else if constexpr (std::is_same_v<X, bf16_act>)
            bf16_block<NR, NT>(ws, xs, cols, out, pf);
        else if constexpr (quant_block<W>) {
            for (int i = 0; i < NR; ++i) dot_tile<NT>(ws[i], xs, cols, out + i * NT);
        } else
            dot_block<NR, NT>(ws, xs, cols, out, pf);
        for (int i = 0; i < NR; ++i)
            for (int t = 0; t < NT; ++t) y[t * ldy + r + i] = out[i * NT + t];
    };
#if defined(NEXTTOK_KERNELS_INT8_AVX512)
    if constexpr (NT > tile_tokens && std::is_same_v<X, float> && !quant_block<W>)  // wide, in place
        return dot_rows_by_chunks<wide_tile_rows, NT>(w, stride, r0, r1, cols, xs, packed, n, first, y, ldy);
    constexpr int wide = repacked_block<W> ? repacked_tile_rows<W, NT> : NT > tile_tokens ? wide_tile_rows : tile_rows;
    constexpr int NR = NT == 1 && !repacked_block<W> ? decode_tile_rows<W> : NT <= 2 && !quant_block<W> ? 2 : wide;
#else
    constexpr int NR = repacked_block<W> ? repacked_tile_rows<W, NT> : NT == 1 ? decode_tile_rows<W> : tile_rows;
#endif
    std::int64_t r = r0;
    for (; r + NR <= r1; r += NR) tile.template operator()<NR>(r);
    for (; r < r1; ++r) tile.template operator()<1>(r);
}

// Rows [r0, r1) of w times the n rows of x (row stride ldx), each tile over all columns (decode): tiles
// of tile_tokens tokens, then the rest as one (with AVX-512, wide tiles first: 8, and 7 as one; above).
template <class W, class X>
void row_block(const W* w, std::int64_t stride, std::int64_t r0, std::int64_t r1, std::int64_t cols, const X* x,
               std::int64_t ldx, std::int64_t n, float* y, std::int64_t ldy, const float* packed = nullptr) noexcept {
    auto tokens = [&]<int NT>(std::int64_t t) {
        const X* xs[NT];
        for (int k = 0; k < NT; ++k) xs[k] = x + (t + k) * ldx;
        rows_times_tokens<NT>(w, stride, r0, r1, cols, xs, y + t * ldy, ldy, packed, n, t);
    };
    std::int64_t t = 0;
#if defined(NEXTTOK_KERNELS_INT8_AVX512)
    static_assert(wide_tile_tokens == tile_tokens + 2);
    if constexpr (std::is_same_v<X, q8_act_row> || (std::is_same_v<X, float> && !quant_block<W>)) {
        const bool wide = std::is_same_v<X, q8_act_row> || wide_dense<W, X>(n);
        for (; wide && t + wide_tile_tokens <= n; t += wide_tile_tokens)
            tokens.template operator()<wide_tile_tokens>(t);
        if (wide && n - t == wide_tile_tokens - 1) return tokens.template operator()<wide_tile_tokens - 1>(t);
    }
#endif
    for (; t + tile_tokens <= n; t += tile_tokens) tokens.template operator()<tile_tokens>(t);
    [&]<int... K>(std::integer_sequence<int, K...>) {
        ((n - t == K + 1 ? tokens.template operator()<K + 1>(t) : void()), ...);
    }
    (std::make_integer_sequence<int, tile_tokens - 1>{});
}

// Integer kernels: 12 tokens and ranges of 2048 columns, so that a group's accumulators and
// quantized activations stay in L1 beside the weights (not so with 48 tokens and 512; benchmarks/README.md).
inline constexpr std::int64_t int8_prefill_tokens = 2 * tile_tokens;
inline constexpr std::int64_t int8_prefill_columns = 2048;
// Dense weights (float, half, bfloat16): a task's rows are converted once into a packed copy and
// the activations once per call (pack_tiles; with AVX-512 detail/outer_prefill_avx512.hpp), and
// tasks of 48 rows give each activation chunk more uses from L1 (benchmarks/README.md, as above).
inline constexpr std::int64_t packed_rows_per_task = 48;
// Up to this many tokens, dense weights are read in place by row_block (each weight line once per
// tile of tile_tokens tokens) instead of being converted into a packed panel first: a call of a few
// tokens (a batch of decode steps, a speculative verification) then costs about one decode step
// (benchmarks/README.md, as above). The outputs are the same, bitwise.
inline constexpr std::int64_t dense_in_place_tokens = 16;
// The same for weights with an int8 kernel: up to this many tokens, and with AVX-512 also two wide
// tiles (batch 16: q8_0 94-95 -> 106 tokens/s against the prefill kernels; benchmarks/README.md, as above),
// or for repacked weights any number where the CPU runs prefill faster so (detail/isa.hpp,
// cpu_int8_prefill_in_place).
inline constexpr std::int64_t int8_in_place_tokens = 8;
template <class W>
inline bool int8_in_place(std::int64_t n) noexcept {
#if defined(NEXTTOK_KERNELS_INT8_AVX512)
    return n <= int8_in_place_tokens || n == 2 * wide_tile_tokens ||
           (repacked_block<W> && ::nexttok::detail::isa::cpu_int8_prefill_in_place());
#else
    return n <= int8_in_place_tokens;
#endif
}
// The columns a dense product takes in whole steps (the rest is its finish's tail): 32-column
// steps for bfloat16 weights against rounded activations, dot_step columns otherwise.
template <class W, class X>
inline constexpr std::int64_t dense_columns(std::int64_t cols) noexcept {
    return std::is_same_v<X, bf16_act> ? bf16_block_columns(cols) : dot_block_columns<W>(cols);
}

// The steps of a packed panel of rows of `cols` against activations X (pack_tiles): of 16 floats,
// or of 32 words where prefill packs bfloat16 operands for vdpbf16ps (bf16_dot_in_prefill).
template <class X>
inline std::int64_t packed_steps(std::int64_t cols) noexcept {
    if constexpr (std::is_same_v<X, bf16_act>) {
        if (bf16_dot_in_prefill()) return bf16_block_columns(cols) / bf16_step;
    }
    return dense_columns<float, X>(cols) / dot_step;
}

// As row_block for several tokens (prefill), by groups of tokens whose accumulators live in `acc`
// while the columns are taken in ranges, so that a range's data stays in L1. W has an int8 kernel
// (X = q8_act_row, ldx = 1), or is dense: then `packed` holds the n activation rows packed by
// token tiles (pack_tiles) and `panel` receives rows [r0, r1) packed by row tiles. The same
// outputs, bitwise, as row_block (dot.hpp, quant_act.hpp).
template <class W, class X>
void row_block_prefill(const W* w, std::int64_t stride, std::int64_t r0, std::int64_t r1, std::int64_t cols, const X* x,
                       std::int64_t ldx, std::int64_t n, float* y, std::int64_t ldy, const float* packed = nullptr,
                       float* panel = nullptr, simd::prefetch_cursor next = {}) noexcept {
    constexpr bool int8 = std::is_same_v<X, q8_act_row>;
    if constexpr (!int8)  // (packed by matmul_group as outer_prefill says: detail/outer_prefill_avx512.hpp)
        if (outer_prefill<X>(cols)) return row_block_outer(w, stride, r0, r1, cols, packed, n, y, ldy, panel);
    constexpr bool pairs = std::is_same_v<X, bf16_act>;  // bfloat16 weights (bf16_block_range's order)
    constexpr std::int64_t group = int8 ? int8_prefill_tokens : packed_tile_tokens;
    constexpr int TT = int8 ? tile_tokens : packed_tile_tokens;
    constexpr int TR = !int8 ? packed_tile_rows : repacked_block<W> ? repacked_tile_rows<W, TT> : tile_rows;
    constexpr std::int64_t ld = group * simd::acc_slot;                         // acc row stride
    alignas(64) float acc[(int8 ? rows_per_task : packed_rows_per_task) * ld];  // (rows, group, acc_slot)
    std::int64_t k_end, k_step;  // in weight blocks, or steps of dot_step columns
    if constexpr (int8) {
        k_end = cols / W::block_size, k_step = int8_prefill_columns / W::block_size;
    } else {
        k_end = packed_steps<X>(cols), k_step = packed_range_steps;
        pack_tiles<W, pairs>(w + r0 * stride, stride, r1 - r0, k_end, TR, true, panel, r1 - r0, 0);
    }
    auto pointers = [&]<int NR, int NT>(std::int64_t r, std::int64_t t, const W*(&ws)[NR], const X*(&xs)[NT]) {
        for (int i = 0; i < NR; ++i) ws[i] = w + (r + i) * stride;
        for (int k = 0; k < NT; ++k) xs[k] = x + (t + k) * ldx;
    };
    // `next` (the weights of the block that follows, read from memory while this one computes)
    // is spread over the register tiles, a few lines each (at least one call: rows shorter than
    // one step have no register tile).
    const std::int64_t n_calls = std::max<std::int64_t>(
        1, (n + group - 1) / group * ((k_end + k_step - 1) / k_step) * ((r1 - r0 + TR - 1) / TR));
    const auto next_bytes = static_cast<std::size_t>(next.end > next.next ? next.end - next.next : 0);
    const std::size_t per_call = (next_bytes / static_cast<std::size_t>(n_calls) + 64) / 64 * 64;
    for (std::int64_t t0 = 0; t0 < n; t0 += group) {
        const std::int64_t t1 = std::min(n, t0 + group);
        // (The dense kernels start the first range from zero: a 1.1B-shaped f16 prefill spent 4% of
        // its time clearing acc.)
        if (int8 || k_end == 0) std::fill(acc, acc + (r1 - r0) * ld, 0.0f);
        for (std::int64_t k0 = 0; k0 < k_end; k0 += k_step) {
            const std::int64_t k1 = std::min(k_end, k0 + k_step);
            for_each_tile<TR, TT>(r0, r1, t0, t1, [&]<int NR, int NT>(std::int64_t r, std::int64_t t) {
                next.advance(per_call);
                float* a = acc + (r - r0) * ld + (t - t0) * simd::acc_slot;
                if constexpr (int8) {
                    const W* ws[NR];
                    const X* xs[NT];
                    pointers.template operator()<NR, NT>(r, t, ws, xs);
                    qdot_block_range<NR, NT>(ws, xs, k0, k1, a, ld);
                } else {
#if defined(NEXTTOK_BF16_DOT_INSTRUCTION)
                    if (pairs && bf16_dot_in_prefill()) {  // packed as words (pack_tiles)
                        packed_bf16_block_range_dp<NR, NT>(panel + packed_tile_offset(k0, k1, r1 - r0, r - r0),
                                                           packed + packed_tile_offset(k0, k1, n, t), k1 - k0, a, ld,
                                                           k0 == 0);
                        return;
                    }
#endif
                    packed_block_range<NR, NT>(panel + packed_tile_offset(k0, k1, r1 - r0, r - r0),
                                               packed + packed_tile_offset(k0, k1, n, t), k1 - k0, a, ld, k0 == 0);
                }
            });
        }
        // The group's outputs: sixteen rows of a token at once where the backend reduces sixteen
        // accumulators together (simd::reduce_slots: bitwise the sums of reducing them one by one)
        // and no column tail is left; the remaining rows tile by tile. (1.1B-shaped f16 prefill:
        // the reductions one by one took a tenth of the matmul time.)
        std::int64_t r_tiles = r0;
#if defined(NEXTTOK_KERNELS_AVX512)
        if (int8 || dense_columns<W, X>(cols) == cols) {
            for (; r_tiles + 16 <= r1; r_tiles += 16)
                for (std::int64_t t = t0; t < t1; ++t)
                    simd::reduce_slots<16>(
                        [&](int i) { return acc + (r_tiles - r0 + i) * ld + (t - t0) * simd::acc_slot; },
                        y + t * ldy + r_tiles);
        }
#endif
        for_each_tile<TR, TT>(r_tiles, r1, t0, t1, [&]<int NR, int NT>(std::int64_t r, std::int64_t t) {
            const W* ws[NR];
            const X* xs[NT];
            pointers.template operator()<NR, NT>(r, t, ws, xs);
            const float* a = acc + (r - r0) * ld + (t - t0) * simd::acc_slot;
            float out[NR * NT];
            if constexpr (int8)
                qdot_block_finish<NR, NT>(a, ld, out);
            else if constexpr (pairs)
                bf16_block_finish<NR, NT>(ws, xs, cols, a, ld, out);
            else
                dot_block_finish<NR, NT>(ws, xs, cols, a, ld, out);
            for (int i = 0; i < NR; ++i)
                for (int k = 0; k < NT; ++k) y[(t + k) * ldy + r + i] = out[i * NT + k];
        });
    }
}

template <class W>
inline constexpr bool uses_int8 = quant_block<W>&& has_int8_kernel<W>;

// The n activation rows x (row stride ldx) packed by token tiles (pack_tiles) into the workspace,
// their first steps * dot_step columns, on the pool.
template <class X>
const float* pack_activations(const X* x, std::int64_t ldx, std::int64_t n, std::int64_t cols, std::int64_t steps,
                              thread_pool& pool, matmul_workspace& ws) {
    float* out = ws.packed_tokens(n, cols);
    const std::int64_t tiles = (n + packed_tile_tokens - 1) / packed_tile_tokens;
    pool.parallel_for(tiles, [&](std::int64_t j, int) {
        const std::int64_t t = j * packed_tile_tokens;
        const std::int64_t m = std::min<std::int64_t>(packed_tile_tokens, n - t);
        pack_tiles<X, std::is_same_v<X, bf16_act>>(x + t * ldx, ldx, m, steps, packed_tile_tokens, false, out, n, t);
    });
    return out;
}

// The n activation rows x (row stride ldx) packed for the wide dense tiles (dot_rows_by_chunks: by
// tiles of wide_tile_tokens, the rest as one) into the workspace, their first steps * dot_step
// columns, on the calling thread (at most 16 rows: a few microseconds, less than a round trip of the
// pool).
template <class X>
const float* pack_wide([[maybe_unused]] const X* x, [[maybe_unused]] std::int64_t ldx, std::int64_t n,
                       std::int64_t cols, std::int64_t steps, matmul_workspace& ws) {
    float* out = ws.packed_tokens(n, cols);
#if defined(NEXTTOK_KERNELS_INT8_AVX512)
    pack_tiles<X>(x, ldx, n, steps, wide_tile_tokens, false, out, n, 0);
#endif
    return out;
}

// matmul_group (kernels/detail/passes.hpp) by this set's kernels: for each target, y[t * ldy + r]
// = dot(W row r, x[t * ldx ...]) for t < n, r < W.rows(), in one parallel_for. Every W has the same cols. Throws unsupported_error for a weight type without
// kernels (the loaders reject those up front), before any work starts.
template <class X>
void matmul_group(std::span<const matmul_target> targets, const X* x, std::int64_t ldx, std::int64_t n,
                  thread_pool& pool, matmul_workspace& ws) {
    if (targets.empty() || n <= 0) return;
    if (targets.size() > static_cast<std::size_t>(kernel_detail::max_group))
        throw invalid_argument_error("matmul_group: more than " + std::to_string(kernel_detail::max_group) +
                                     " matrices");
    const auto cols = static_cast<std::int64_t>(targets[0].w->cols());
    // bfloat16 weights take rounded activations (bf16_act), the others not: a mixed group runs as two.
    const auto is_bf16 = [](const matmul_target& t) {
        return t.w->type == tensor_type::bf16;
    };
    const auto n_bf16 = std::count_if(targets.begin(), targets.end(), is_bf16);
    if (n_bf16 > 0 && n_bf16 < static_cast<std::ptrdiff_t>(targets.size())) {
        matmul_target parts[kernel_detail::max_group];
        std::partition_copy(targets.begin(), targets.end(), parts, parts + n_bf16, is_bf16);
        kernel_detail::matmul_group(std::span<const matmul_target>(parts, static_cast<std::size_t>(n_bf16)), x, ldx, n,
                                    pool, ws);
        kernel_detail::matmul_group(
            std::span<const matmul_target>(parts + n_bf16, targets.size() - static_cast<std::size_t>(n_bf16)), x, ldx,
            n, pool, ws);
        return;
    }
    std::int64_t first_task[kernel_detail::max_group + 1] = {0}, task_rows[kernel_detail::max_group] = {0};
    bool quantize = false, pack = false, wide = false;
    for (std::size_t i = 0; i < targets.size(); ++i) {
        const tensor_view& w = *targets[i].w;
        if (static_cast<std::int64_t>(w.cols()) != cols)
            throw invalid_argument_error("matmul_group: tensor '" + w.name + "' has rows of " +
                                         std::to_string(w.cols()) + ", expected " + std::to_string(cols));
        visit_weight_type(w, "matmul", [&]<class W>(std::type_identity<W>) {
            quantize |= kernel_detail::uses_int8<W>;
            const bool packed = !quant_block<W> && n > kernel_detail::dense_in_place_tokens;
            pack |= packed;
            const bool wide_tiles = !packed && kernel_detail::wide_dense<W, X>(n);
            wide |= wide_tiles;
            task_rows[i] = packed       ? kernel_detail::packed_rows_per_task
                           : wide_tiles ? kernel_detail::wide_rows_per_task
                                        : kernel_detail::rows_per_task;
        });
        const auto rows = static_cast<std::int64_t>(w.rows());
        first_task[i + 1] = first_task[i] + (rows + task_rows[i] - 1) / task_rows[i];
    }
    const q8_act_row* xq = nullptr;
    if (quantize) {
        q8_activations& act = ws.activations(n, cols);
        if (n == 1)
            quantize_activations(act, 0, x);
        else
            pool.parallel_for(n, [&](std::int64_t t, int) { quantize_activations(act, t, x + t * ldx); });
        xq = act.rows();
    }
    // bfloat16 weights: the activations rounded once for all tasks (row t at xr + t * cols).
    const bf16_act* xr = nullptr;
    if (n_bf16 > 0) {
        bf16_act* out = ws.rounded_tokens(n, cols);
        const auto round_row = [&](std::int64_t t) {
            for (std::int64_t i = 0; i < cols; ++i)
                out[t * cols + i] = round_to_bf16(static_cast<float>(x[t * ldx + i]));
        };
        if (n == 1)
            round_row(0);
        else
            pool.parallel_for(n, [&](std::int64_t t, int) { round_row(t); });
        xr = out;
    }
    // Dense weights and several tokens: the activations packed once for all tasks, and a block of
    // packed weight rows per thread (allocated here, before the tasks, when it grows).
    const std::int64_t steps =
        n_bf16 > 0 ? kernel_detail::packed_steps<bf16_act>(cols) : kernel_detail::packed_steps<X>(cols);
    const std::int64_t panel_floats =
        std::max(kernel_detail::packed_rows_per_task * steps * dot_step, kernel_detail::outer_panel_floats(steps));
    const bool outer =
        n_bf16 > 0 ? kernel_detail::outer_prefill<bf16_act>(cols) : kernel_detail::outer_prefill<X>(cols);
    const auto pack_tokens = [&](const auto* a, std::int64_t lda) {  // (outer: detail/outer_prefill_avx512.hpp)
        return outer ? kernel_detail::pack_outer_activations(a, lda, n, cols, pool, ws)
                     : kernel_detail::pack_activations(a, lda, n, cols, steps, pool, ws);
    };
    // (pack and wide exclude each other: every dense weight of the group takes the same n.)
    const float* xp = wide         ? kernel_detail::pack_wide(x, ldx, n, cols, steps, ws)
                      : !pack      ? nullptr
                      : n_bf16 > 0 ? pack_tokens(xr, cols)
                                   : pack_tokens(x, ldx);
    if (pack)
        for (int t = 0; t < pool.size(); ++t) ws.packed_rows(t, pool.size(), panel_floats);
    const std::int64_t n_tasks = first_task[targets.size()];
    pool.parallel_for(n_tasks, [&](std::int64_t task, int thread) {
        std::size_t i = 0;
        while (task >= first_task[i + 1]) ++i;
        const matmul_target& tg = targets[i];
        const auto rows = static_cast<std::int64_t>(tg.w->rows());
        const std::int64_t r0 = (task - first_task[i]) * task_rows[i];
        const std::int64_t r1 = std::min(rows, r0 + task_rows[i]);
        visit_weight_type(*tg.w, "matmul", [&]<class W>(std::type_identity<W>) {
            const W* w = reinterpret_cast<const W*>(tg.w->data);
            const std::int64_t stride = row_stride<W>(cols);
            // Prefill prefetches the next block of rows of this matrix (the thread's next task, usually).
            const auto next_block = [&] {
                const auto* begin = reinterpret_cast<const char*>(w + r1 * stride);
                return kernel_detail::simd::prefetch_cursor{
                    begin, begin + (std::min(rows, 2 * r1 - r0) - r1) * stride * sizeof(W)};
            };
            if constexpr (kernel_detail::uses_int8<W>) {
                if (kernel_detail::int8_in_place<W>(n))
                    kernel_detail::row_block(w, stride, r0, r1, cols, xq, 1, n, tg.y, tg.ldy);
                else
                    kernel_detail::row_block_prefill(w, stride, r0, r1, cols, xq, 1, n, tg.y, tg.ldy, nullptr, nullptr,
                                                     next_block());
            } else if constexpr (quant_block<W>) {
                kernel_detail::row_block(w, stride, r0, r1, cols, x, ldx, n, tg.y, tg.ldy);
            } else if constexpr (std::is_same_v<W, Eigen::bfloat16>) {
                if (n <= kernel_detail::dense_in_place_tokens) {
                    kernel_detail::row_block(w, stride, r0, r1, cols, xr, cols, n, tg.y, tg.ldy);
                } else {
                    float* panel = ws.packed_rows(thread, pool.size(), panel_floats);
                    kernel_detail::row_block_prefill(w, stride, r0, r1, cols, xr, cols, n, tg.y, tg.ldy, xp, panel,
                                                     next_block());
                }
            } else if (n <= kernel_detail::dense_in_place_tokens) {
                kernel_detail::row_block(w, stride, r0, r1, cols, x, ldx, n, tg.y, tg.ldy, xp);
            } else {
                float* panel = ws.packed_rows(thread, pool.size(), panel_floats);
                kernel_detail::row_block_prefill(w, stride, r0, r1, cols, x, ldx, n, tg.y, tg.ldy, xp, panel,
                                                 next_block());
            }
        });
    });
}

}  // namespace kernel_detail

}  // namespace nexttok::NEXTTOK_KERNEL_PASS

#endif  // NEXTTOK_KERNEL_PASS

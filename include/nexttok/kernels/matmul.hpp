// y = x W^T for a weight matrix W (rows x cols) stored in its file format (f32, f16, bf16, q8_0,
// q4_0, q4_k, q5_k, q6_k: see weight_types.hpp), and n activation vectors x (n x cols, float /
// half / bfloat16): y is n x rows, float. The weight format is a runtime property of the tensor,
// dispatched once per call to a monomorphized kernel; quantized rows are read in place.
//
// Work is split into blocks of `rows_per_task` rows whatever the thread count; inside a block the
// tokens go in tiles of 4 so that each weight row, once in cache, serves 4 tokens. Every output is
// one dot_tile accumulation, so results do not depend on the thread count or on n (see dot.hpp).
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/tensor_view.hpp>
#include <nexttok/kernels/dot.hpp>
#include <nexttok/kernels/quant_blocks.hpp>
#include <nexttok/kernels/thread_pool.hpp>
#include <nexttok/kernels/weight_types.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace nexttok {

namespace detail {

inline constexpr std::int64_t rows_per_task = 16;
inline constexpr int token_tile = 4;

// w: rows of `stride` elements (or blocks) each, holding `cols` weights.
template <class W, class X>
void matmul_typed(const W* w, std::int64_t stride, std::int64_t rows, std::int64_t cols, const X* x, std::int64_t ldx,
                  std::int64_t n, float* y, std::int64_t ldy, thread_pool& pool) {
    const std::int64_t n_tasks = (rows + rows_per_task - 1) / rows_per_task;
    pool.parallel_for(n_tasks, [&](std::int64_t task, int) {
        const std::int64_t r0 = task * rows_per_task;
        const std::int64_t r1 = std::min(rows, r0 + rows_per_task);
        std::int64_t t = 0;
        for (; t + token_tile <= n; t += token_tile) {
            const X* xs[token_tile];
            for (int k = 0; k < token_tile; ++k) xs[k] = x + (t + k) * ldx;
            for (std::int64_t r = r0; r < r1; ++r) {
                float out[token_tile];
                dot_tile<token_tile>(w + r * stride, xs, cols, out);
                for (int k = 0; k < token_tile; ++k) y[(t + k) * ldy + r] = out[k];
            }
        }
        for (; t < n; ++t)
            for (std::int64_t r = r0; r < r1; ++r) y[t * ldy + r] = dot(w + r * stride, x + t * ldx, cols);
    });
}

}  // namespace detail

// y[t * ldy + r] = dot(W row r, x[t * ldx ...]) for t < n, r < W.rows(). Throws unsupported_error
// for a weight type without kernels (the loaders reject those up front).
template <class X>
void matmul(const tensor_view& w, const X* x, std::int64_t ldx, std::int64_t n, float* y, std::int64_t ldy,
            thread_pool& pool) {
    const auto rows = static_cast<std::int64_t>(w.rows());
    const auto cols = static_cast<std::int64_t>(w.cols());
    visit_weight_type(w, "matmul", [&]<class W>(std::type_identity<W>) {
        detail::matmul_typed(reinterpret_cast<const W*>(w.data), row_stride<W>(cols), rows, cols, x, ldx, n, y, ldy, pool);
    });
}

// Row r of a weight matrix (an embedding, say) converted to float: out[0, cols).
inline void read_row(const tensor_view& w, std::int64_t r, float* out) {
    const auto cols = static_cast<std::int64_t>(w.cols());
    visit_weight_type(w, "read_row", [&]<class W>(std::type_identity<W>) {
        const W* row = reinterpret_cast<const W*>(w.data) + r * row_stride<W>(cols);
        if constexpr (quant_block<W>) {
            dequantize_row(row, out, cols);
        } else {
            for (std::int64_t i = 0; i < cols; ++i) out[i] = detail::simd::to_float(row[i]);
        }
    });
}

}  // namespace nexttok

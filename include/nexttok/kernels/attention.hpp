// The two products of attention over one key/value head's cached rows, which `row(t)` gives
// (const pointer to float, Eigen::half or Eigen::bfloat16, or a q8_0_row: read in the cache's own
// type, never converted as a whole):
// - dot_rows: the scores of several queries, each bitwise dot(row(t), q, n) (dot.hpp), times a scale;
// - weighted_rows: the outputs of several query heads, sum over t of p(t) * row(t), reading each
//   value row once for all of them, its accumulators in registers over all t (weighted_rows_range:
//   over a range of t, adding to the sums of the ranges before it).
// Neither depends on how positions are split between calls or threads: decode and prefill, 1 and N
// threads give the same bits.
// - causal_attention: grouped-query attention of a batch of query rows over their sequences'
//   cached rows, split into tasks on the thread pool, built from the two above and softmax.
#if !defined(NEXTTOK_KERNEL_PASS)
#include <nexttok/kernels/detail/passes.hpp>
#else

#include <nexttok/tensor/quant_blocks.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace nexttok::NEXTTOK_KERNEL_PASS {

#if defined(NEXTTOK_KERNELS_AVX512)
namespace kernel_detail {

// dot_rows for the sixteen rows of one block (rows[reduce16_slot[i]] = row i), every query. One
// body, `chunk`, takes V vectors of columns, the query's in registers and each row's unrolled:
// rows of 64 and 128 values (the usual head sizes) are one chunk at offset 0, so each row pointer
// is read once per query and every load has a constant offset, where a loop over the columns kept
// the sixteen pointers in vector registers and moved four of them back per step (1.1B shape, 16
// sequences of 136 positions, keys and values in L2: the attention 5-6% faster). Other sizes go
// a vector at a time. Each accumulator adds its columns in ascending order either way.
template <class R, class X>
inline void dot_16_rows(const R (&rows)[16], const X* q, std::int64_t nq, std::int64_t ldq, std::int64_t n, float scale,
                        float* out, std::int64_t ldo) noexcept {
    namespace s = simd;
    // V vectors of columns known when compiled (0: n, a vector at a time).
    const auto queries = [&]<int V>() NEXTTOK_ALWAYS_INLINE {
        for (std::int64_t k = 0; k < nq; ++k) {
            const X* qk = q + k * ldq;
            s::vec acc[16];
            NEXTTOK_UNROLL for (int i = 0; i < 16; ++i) acc[i] = s::zero();
            const auto chunk = [&]<int C>(std::int64_t j) NEXTTOK_ALWAYS_INLINE {
                s::vec qv[C];
                NEXTTOK_UNROLL for (int c = 0; c < C; ++c) qv[c] = s::load(qk + j + c * s::width);
                NEXTTOK_UNROLL for (int i = 0; i < 16; ++i) {
                    NEXTTOK_UNROLL for (int c = 0; c < C; ++c) acc[i] =
                        s::fmadd(s::load(rows[i] + j + c * s::width), qv[c], acc[i]);
                }
            };
            if constexpr (V > 0)
                chunk.template operator()<V>(0);
            else
                for (std::int64_t j = 0; j < n; j += s::width) chunk.template operator()<1>(j);
            s::store(out + k * ldo, s::mul(s::reduce16(acc), s::set1(scale)));
        }
    };
    if (n == 8 * s::width) return queries.template operator()<8>();
    if (n == 4 * s::width) return queries.template operator()<4>();
    queries.template operator()<0>();
}

}  // namespace kernel_detail
#endif

// out[k * ldo + t] = dot(row(t), q + k * ldq, n) * scale for t < count and the nq queries k < nq.
// With AVX-512 and n a multiple of 16, sixteen rows at a time whose sums are reduced together
// (simd::reduce16) instead of one by one, for every query while those rows are in L1. Rows that
// are not plain arrays (q8_0_row) are first read into floats once for all the queries (the same
// values, so the same sums).
template <class Row, class X>
inline void dot_rows(Row&& row, std::int64_t count, const X* q, std::int64_t nq, std::int64_t ldq, std::int64_t n,
                     float scale, float* out, std::int64_t ldo) noexcept {
    std::int64_t t = 0;
#if defined(NEXTTOK_KERNELS_AVX512)
    namespace s = kernel_detail::simd;
    using R = decltype(row(t));
    constexpr std::int64_t max_converted = 256;  // values per row converted at once (16 KiB for 16 rows)
    if (n % s::width == 0 && (std::is_pointer_v<R> || n <= max_converted)) {
        for (; t + 16 <= count; t += 16) {
            R rows[16];
            for (int i = 0; i < 16; ++i) rows[s::reduce16_slot[i]] = row(t + i);
            if constexpr (std::is_pointer_v<R>) {
                kernel_detail::dot_16_rows(rows, q, nq, ldq, n, scale, out + t, ldo);
            } else {
                alignas(64) float values[16 * max_converted];
                const float* converted[16];
                for (int i = 0; i < 16; ++i) {
                    converted[i] = values + i * n;
                    for (std::int64_t j = 0; j < n; j += s::width) s::store(values + i * n + j, s::load(rows[i] + j));
                }
                kernel_detail::dot_16_rows(converted, q, nq, ldq, n, scale, out + t, ldo);
            }
        }
    }
#endif
    for (; t < count; ++t)
        for (std::int64_t k = 0; k < nq; ++k) out[k * ldo + t] = dot(row(t), q + k * ldq, n) * scale;
}

namespace kernel_detail {

// weighted_rows_range for NK heads and columns [j0, j0 + NV * width).
template <int NK, int NV, class Row>
inline void weighted_block(const float* p, std::int64_t ldp, Row& row, std::int64_t t0, std::int64_t t1,
                           std::int64_t j0, float* out, std::int64_t ldo) noexcept {
    namespace s = simd;
    s::vec acc[NK][NV];
    NEXTTOK_UNROLL for (int k = 0; k < NK; ++k) {
        NEXTTOK_UNROLL for (int c = 0; c < NV; ++c) acc[k][c] =
            t0 == 0 ? s::zero() : s::load(out + k * ldo + j0 + c * s::width);
    }
    for (std::int64_t t = t0; t < t1; ++t) {
        const auto v = row(t) + j0;
        s::vec vv[NV];
        NEXTTOK_UNROLL for (int c = 0; c < NV; ++c) vv[c] = s::load(v + c * s::width);
        NEXTTOK_UNROLL for (int k = 0; k < NK; ++k) {
            const s::vec pk = s::set1(p[k * ldp + t]);
            NEXTTOK_UNROLL for (int c = 0; c < NV; ++c) acc[k][c] = s::fmadd(pk, vv[c], acc[k][c]);
        }
    }
    NEXTTOK_UNROLL for (int k = 0; k < NK; ++k) {
        NEXTTOK_UNROLL for (int c = 0; c < NV; ++c) s::store(out + k * ldo + j0 + c * s::width, acc[k][c]);
    }
}

// Calls f.template operator()<K>() for K = k in [1, Max] (k within that range).
template <int Max, class F>
inline void with_count(std::int64_t k, F&& f) {
    [&]<int... K>(std::integer_sequence<int, K...>) { ((k == K + 1 ? f.template operator()<K + 1>() : void()), ...); }
    (std::make_integer_sequence<int, Max>{});
}

}  // namespace kernel_detail

// out[k * ldo + j] = sum over t < count, in ascending t, of p[k * ldp + t] * row(t)[j] (one
// simd::fmadd per term; the last n % width columns by std::fma, so that the result does not depend
// on how the compiler contracts or inlines the row accessor), for k < nk, j < n.
// Heads go by up to eight (AVX-512; four otherwise) and columns by up to two vectors, so that the
// accumulators stay in registers and each line of a value row is read once for eight heads.
// weighted_rows_range adds the terms of t in [t0, t1) only: from zero for t0 = 0, else to the sums
// that out holds (stored and loaded exactly), so that calls over consecutive ranges give bitwise
// one call over all of them.
template <class Row>
inline void weighted_rows_range(const float* p, std::int64_t ldp, std::int64_t nk, Row&& row, std::int64_t t0,
                                std::int64_t t1, std::int64_t n, float* out, std::int64_t ldo) noexcept {
    namespace s = kernel_detail::simd;
    constexpr int max_heads = s::width == 16 ? 8 : 4, max_vectors = 2;
    const std::int64_t vector_cols = n / s::width * s::width;
    for (std::int64_t k0 = 0; k0 < nk; k0 += max_heads) {
        const float* pk = p + k0 * ldp;
        float* ok = out + k0 * ldo;
        kernel_detail::with_count<max_heads>(std::min<std::int64_t>(max_heads, nk - k0), [&]<int NK>() {
            for (std::int64_t j0 = 0; j0 < vector_cols; j0 += max_vectors * s::width) {
                const std::int64_t vectors = std::min<std::int64_t>(max_vectors, (vector_cols - j0) / s::width);
                kernel_detail::with_count<max_vectors>(vectors, [&]<int NV>() {
                    kernel_detail::weighted_block<NK, NV>(pk, ldp, row, t0, t1, j0, ok, ldo);
                });
            }
            for (int k = 0; k < NK; ++k)
                for (std::int64_t j = vector_cols; j < n; ++j) {
                    float sum = t0 == 0 ? 0.0f : ok[k * ldo + j];
                    for (std::int64_t t = t0; t < t1; ++t) sum = std::fma(pk[k * ldp + t], s::to_float(row(t)[j]), sum);
                    ok[k * ldo + j] = sum;
                }
        });
    }
}

template <class Row>
inline void weighted_rows(const float* p, std::int64_t ldp, std::int64_t nk, Row&& row, std::int64_t count,
                          std::int64_t n, float* out, std::int64_t ldo) noexcept {
    weighted_rows_range(p, ldp, nk, row, 0, count, n, out, ldo);
}

// Elements [offset, ...) of a cached row, as dot_rows and weighted_rows read it: a pointer into a
// row of Scalar, or a q8_0_row over blocks read in place.
template <class T>
inline const T* cached_row(const T* row, std::int64_t offset) noexcept {
    return row + offset;
}
inline q8_0_row cached_row(const block_q8_0* row, std::int64_t offset) noexcept { return {row, offset}; }

// The addresses [first, last) of the bytes that elements [offset, offset + n) of a cached row take.
template <class T>
inline std::pair<std::uintptr_t, std::uintptr_t> cached_row_bytes(const T* row, std::int64_t offset,
                                                                  std::int64_t n) noexcept {
    return {reinterpret_cast<std::uintptr_t>(row + offset), reinterpret_cast<std::uintptr_t>(row + offset + n)};
}
inline std::pair<std::uintptr_t, std::uintptr_t> cached_row_bytes(const block_q8_0* row, std::int64_t offset,
                                                                  std::int64_t n) noexcept {
    constexpr std::int64_t b = block_q8_0::block_size;
    return {reinterpret_cast<std::uintptr_t>(row + offset / b),
            reinterpret_cast<std::uintptr_t>(row + (offset + n + b - 1) / b)};
}

namespace kernel_detail {

// Elements [offset, offset + n) of the cached rows table[t], t in [t0, t1), fetched ahead with the
// locality hint Locality (simd::prefetch_lines). One hint per instantiation: with both in one loop
// (a branch on the hint), GCC 12 dropped every prefetch of it.
template <int Locality, class Row>
inline void prefetch_cached_rows(const Row* const* table, std::int64_t t0, std::int64_t t1, std::int64_t offset,
                                 std::int64_t n) noexcept {
    for (std::int64_t t = t0; t < t1; ++t) {
        const auto [first, last] = cached_row_bytes(table[t], offset, n);
        simd::prefetch_lines<Locality>(first & ~std::uintptr_t{63}, last);
    }
}

// Positions a task takes at a time: the scores, then the values, of one block of dot_rows while
// the next block's rows are fetched.
inline constexpr std::int64_t attention_block = 16;

// Causal grouped-query attention of n query rows: row i, its queries q + i * n_heads * head_dim,
// attends to the cached rows rows[i] gives (its own sequence's [0, pos]), and its output goes to
// att + i * n_heads * head_dim, converted to Out. A task takes several query heads of one
// key/value head, so that their keys stay in cache and each value row is read once for all of
// them (the whole group, halved while that would leave fewer than two tasks per thread); rows go in
// the order 0, n - 1, 1, n - 2, ..., so that each thread's contiguous share of the tasks mixes
// short and long causal rows. Each head's scores and output are computed exactly as alone (the
// same sum per output), so the split changes no result. `ws` reserved for the shape and the
// longest row.
// A task walks its positions by blocks of attention_block, keys then values, and fetches the next
// block's part of the rows (its key/value head's elements) while it computes one: that part is a
// few lines of each row (a quarter of them in the 1.1B shape), and a paged sequence's rows are
// spread over the pool's blocks, which the hardware prefetchers did not follow. Intel Xeon (family
// 6 model 207), 2 threads, both codes in turn: the 1.1B shape's attention over 22 layers of float
// keys and values from memory, in times of a read pass over the same bytes (a standalone program,
// medians of five runs), 16 sequences of 136 positions 2.2 -> 1.7, 4 of 136 1.9 -> 1.7, 1 of 1024
// 2.4-2.7 -> 1.7-2.1, with the rows in L2 11% slower (the prefetches); 1.1B decode at
// 1024-2047 positions (decode_bench, q4_0 weights, seven runs) 0.73-0.80 -> 0.77-0.84 of its
// bound with a float cache, 0.72-0.78 either way with a q8_0 cache (bound by its arithmetic).
template <class Out, class Row>
void causal_attention(const attention_shape& s, std::int64_t n, const float* q, const attention_rows<Row>* rows,
                      Out* att, attention_workspace& ws, thread_pool& pool) {
    const std::int64_t group = s.n_heads / s.n_kv_heads, hd = s.head_dim, q_dim = s.n_heads * s.head_dim;
    std::int64_t per_task = group;
    while (per_task % 2 == 0 && n * (s.n_heads / per_task) < 2 * pool.size()) per_task /= 2;
    const std::int64_t tasks_per_token = s.n_heads / per_task;
    // The rows ahead into L2 on Intel CPUs, L1 otherwise, as the weights' (simd::prefetch_cursor).
    const auto tasks = [&]<int Locality>() {
        pool.parallel_for(n * tasks_per_token, [&](std::int64_t task, int thread) {
            const std::int64_t u = task / tasks_per_token, h0 = (task % tasks_per_token) * per_task;
            const std::int64_t i = u % 2 == 0 ? u / 2 : n - 1 - u / 2;
            const attention_rows<Row>& r = rows[i];
            const std::int64_t kv_off = (h0 / group) * hd;
            float* scores = ws.scores(thread);
            float* out = ws.outputs(thread);
            const auto key_row = [&](std::int64_t t) {
                return cached_row(r.key[t], kv_off);
            };
            const auto value_row = [&](std::int64_t t) {
                return cached_row(r.value[t], kv_off);
            };
            const auto next_block = [&](std::int64_t t) {
                return std::min(r.n_pos, t + attention_block);
            };
            for (std::int64_t t0 = 0; t0 < r.n_pos; t0 += attention_block) {
                const std::int64_t t1 = next_block(t0);
                if (t1 < r.n_pos)
                    prefetch_cached_rows<Locality>(r.key, t1, next_block(t1), kv_off, hd);
                else  // the first values
                    prefetch_cached_rows<Locality>(r.value, 0, next_block(0), kv_off, hd);
                const auto block_key_row = [&](std::int64_t t) {
                    return key_row(t0 + t);
                };
                dot_rows(block_key_row, t1 - t0, q + i * q_dim + h0 * hd, per_task, hd, hd, s.scale, scores + t0,
                         ws.positions());
            }
            for (std::int64_t k = 0; k < per_task; ++k) softmax(scores + k * ws.positions(), r.n_pos);
            for (std::int64_t t0 = 0; t0 < r.n_pos; t0 += attention_block) {
                const std::int64_t t1 = next_block(t0);
                if (t1 < r.n_pos) prefetch_cached_rows<Locality>(r.value, t1, next_block(t1), kv_off, hd);
                weighted_rows_range(scores, ws.positions(), per_task, value_row, t0, t1, hd, out, hd);
            }
            for (std::int64_t k = 0; k < per_task; ++k) {
                Out* dst = att + i * q_dim + (h0 + k) * hd;
                for (std::int64_t j = 0; j < hd; ++j) dst[j] = static_cast<Out>(out[k * hd + j]);
            }
        });
    };
    if (::nexttok::detail::isa::cpu_prefetch_rows_into_l2())
        tasks.template operator()<2>();
    else
        tasks.template operator()<3>();
}

}  // namespace kernel_detail

}  // namespace nexttok::NEXTTOK_KERNEL_PASS

#endif  // NEXTTOK_KERNEL_PASS

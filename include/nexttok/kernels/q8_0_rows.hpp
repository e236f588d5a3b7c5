// A row of q8_0 blocks read as float elements: what attention sees of a KV cache stored as q8_0
// (cache/q8_0_kv_cache.hpp). Element j of the row is float(qs) * float(d) of its block, one
// rounding, the same whichever way it is read: one at a time (row[j]), `width` at a time
// (simd::load), or by dot(). So attention over such rows keeps its contract (attention.hpp): the
// scores are bitwise dot(), the same for every split of positions and threads.
//
// q8_0_row behaves as the pointer attention expects of a row: `row + j` is the row from element j
// on, `row[j]` an element. It does not own the blocks.
#if !defined(NEXTTOK_KERNEL_PASS)
#include <nexttok/kernels/detail/passes.hpp>
#else

#include <nexttok/tensor/quant_blocks.hpp>

#include <cmath>
#include <cstdint>

namespace nexttok::NEXTTOK_KERNEL_PASS {

namespace kernel_detail::simd {

// Elements [0, width) of the row: one block's quants scaled at once, or element by element where
// they straddle two blocks (an offset that is not a multiple of width).
inline vec load(const q8_0_row& r) noexcept {
    constexpr std::int64_t bs = block_q8_0::block_size;
    const std::int64_t in_block = r.offset % bs;
    const block_q8_0& b = r.blocks[r.offset / bs];
    if (in_block + width <= bs)
        return mul(to_vec(load_i8(b.qs + in_block)), set1(kernel_detail::simd::half_to_float(b.d)));
    alignas(64) float f[width];
    for (int i = 0; i < width; ++i) f[i] = r[i];
    return load(static_cast<const float*>(f));
}

}  // namespace kernel_detail::simd

// sum_i row[i] * x[i], in the order of dot() for dense rows (dot.hpp): chunk k of `width`
// elements into accumulator k % accumulators, ascending; the accumulators summed, reduced; the
// last n % (accumulators * width) elements added one by one.
template <class X>
inline float dot(const q8_0_row& w, const X* x, std::int64_t n) noexcept {
    namespace s = kernel_detail::simd;
    constexpr int A = s::accumulators;
    constexpr std::int64_t step = static_cast<std::int64_t>(A) * s::width;
    s::vec v[A];
    for (int a = 0; a < A; ++a) v[a] = s::zero();
    std::int64_t i = 0;
    for (; i + step <= n; i += step)
        for (int a = 0; a < A; ++a)
            v[a] = s::fmadd(s::load(w + (i + a * s::width)), s::load(x + i + a * s::width), v[a]);
    s::vec sum = v[0];
    for (int a = 1; a < A; ++a) sum = s::add(sum, v[a]);
    float total = s::reduce(sum);
    // GCC 12, given a constant n that is a whole number of vectors, may warn about this loop's
    // iterations past n (-Waggressive-loop-optimizations), which never run.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
#endif
    for (; i < n; ++i) total = std::fma(w[i], s::to_float(x[i]), total);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    return total;
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS

#endif  // NEXTTOK_KERNEL_PASS

// Dot products of a row of quantized weights (blocks read in place) with activation vectors
// (float, Eigen::half or Eigen::bfloat16), accumulated in float: the block-format overload of
// dot_tile (dot.hpp), with the same determinism contract.
//
// Each block is dequantized once per tile into a stack buffer (exact values, see quant_blocks.hpp)
// and then multiplied into every token's accumulators. Chunk k of `width` lanes, counted from the
// start of the row, always goes to accumulator k % accumulators, in ascending k, and the
// accumulators are summed as in dot.hpp: the order depends only on n and the SIMD backend, never
// on NT, the thread or the batch.
#if !defined(NEXTTOK_KERNEL_PASS)
#include <nexttok/kernels/detail/passes.hpp>
#else

#include <nexttok/tensor/quant_blocks.hpp>

#include <algorithm>
#include <cstdint>

namespace nexttok::NEXTTOK_KERNEL_PASS {

// out[t] = sum_i w[i] * x[t][i] for t < NT, w being n / Block::block_size blocks (n a multiple of
// the block size).
template <int NT, quant_block Block, class X>
inline void dot_tile(const Block* w, const X* const* x, std::int64_t n, float* out) noexcept {
    namespace s = kernel_detail::simd;
    constexpr int A = s::accumulators;
    constexpr int qk = Block::block_size;
    static_assert(qk % s::width == 0);
    constexpr int chunks = qk / s::width;  // per block
    // Blocks dequantized together, so that a group spans at least A chunks (2 q8_0 blocks with
    // AVX-512, where a block is only 2 chunks).
    constexpr int group = chunks >= A ? 1 : A / chunks;
    static_assert((group * chunks) % A == 0, "a group must start at a chunk index that is a multiple of A");

    s::vec acc[NT][A];
    for (int t = 0; t < NT; ++t)
        for (int a = 0; a < A; ++a) acc[t][a] = s::zero();
    alignas(64) float buf[group * qk];  // the group's weights, dequantized

    const std::int64_t nb = n / qk;
    for (std::int64_t b0 = 0; b0 < nb; b0 += group) {
        int n_blocks = 1;
        if constexpr (group > 1) n_blocks = static_cast<int>(std::min<std::int64_t>(group, nb - b0));
        for (int j = 0; j < n_blocks; ++j) dequantize_block(w[b0 + j], buf + j * qk);
        const std::int64_t base = b0 * qk;
        const int n_chunks = n_blocks * chunks;
        for (int k0 = 0; k0 < n_chunks; k0 += A) {
            for (int a = 0; a < A && k0 + a < n_chunks; ++a) {
                const int off = (k0 + a) * s::width;
                const s::vec wv = s::load(buf + off);
                for (int t = 0; t < NT; ++t) acc[t][a] = s::fmadd(wv, s::load(x[t] + base + off), acc[t][a]);
            }
        }
    }
    for (int t = 0; t < NT; ++t) {
        s::vec sum = acc[t][0];
        for (int a = 1; a < A; ++a) sum = s::add(sum, acc[t][a]);
        out[t] = s::reduce(sum);
    }
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS

#endif  // NEXTTOK_KERNEL_PASS

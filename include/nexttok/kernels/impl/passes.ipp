// The definitions of kernels/detail/passes.hpp: the entry points that call the kernel set in use.
// With separate compilation, instantiated for every element type they take, in the one translation
// unit that compiles every set (impl/src.hpp).
#pragma once

#include <nexttok/kernels/detail/passes.hpp>

namespace nexttok {

// Calls `call` (a function and its arguments) in the kernel set in use.
#define NEXTTOK_KERNELS_CALL(call) NEXTTOK_ISA_CALL(::nexttok, call)

template <dense_element X>
void matmul_group(std::span<const matmul_target> targets, const X* x, std::int64_t ldx, std::int64_t n,
                  thread_pool& pool, matmul_workspace& ws) {
    NEXTTOK_KERNELS_CALL(kernel_detail::matmul_group(targets, x, ldx, n, pool, ws))
}

template <dense_element Out, class Row>
requires std::same_as<Row, Out> || std::same_as<Row, block_q8_0>
void causal_attention(const attention_shape& s, std::int64_t n, const float* q, const attention_rows<Row>* rows,
                      Out* att, attention_workspace& ws, thread_pool& pool) {
    NEXTTOK_KERNELS_CALL(kernel_detail::causal_attention(s, n, q, rows, att, ws, pool))
}

#undef NEXTTOK_KERNELS_CALL

#if !NEXTTOK_HEADER_ONLY
// Every element type the entry points take: activations of float, half and bfloat16; attention
// outputs of each, over cached rows of the same type or of q8_0 blocks.
#define NEXTTOK_INSTANTIATE(X)                                                                                       \
    template void matmul_group(std::span<const matmul_target>, const X*, std::int64_t, std::int64_t, thread_pool&,   \
                               matmul_workspace&);                                                                   \
    template void causal_attention(const attention_shape&, std::int64_t, const float*, const attention_rows<X>*, X*, \
                                   attention_workspace&, thread_pool&);                                              \
    template void causal_attention(const attention_shape&, std::int64_t, const float*,                               \
                                   const attention_rows<block_q8_0>*, X*, attention_workspace&, thread_pool&);
NEXTTOK_INSTANTIATE(float)
NEXTTOK_INSTANTIATE(Eigen::half)
NEXTTOK_INSTANTIATE(Eigen::bfloat16)
#undef NEXTTOK_INSTANTIATE
#endif

}  // namespace nexttok

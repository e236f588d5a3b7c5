// The kernels, compiled once per instruction set, and the entry points that choose between them at
// run time (kernel_isa.hpp). Every kernel file (pass_bodies.hpp lists them) is included once per
// set into its own namespace, nexttok::isa_portable, nexttok::isa_avx2 or nexttok::isa_avx512:
// - first the set of the translation unit's own flags (the base set), which nexttok:: names
//   (nexttok::dot is the base set's dot);
// - then, with GCC or Clang on x86-64 (NEXTTOK_KERNELS_DISPATCH, detail/isa.hpp), each higher set
//   under a target pragma, with the NEXTTOK_KERNELS_* macros of that set (detail/each_isa.hpp).
// What the sets share (tensor/, the workspaces of kernels/buffers.hpp, the thread pool) is included
// before any set, so that no shared function is compiled for a higher instruction set.
//
// matmul_group and causal_attention here call the set in use (one switch per call). They take a
// fixed set of element types (no callables), so that with NEXTTOK_SEPARATE_COMPILATION
// (detail/config.hpp) they are instantiated once for each, with every set, in the library's
// translation unit (impl/src.hpp: kernels/impl/passes.ipp), and a program's own translation units
// compile only their base set (no higher set, no <immintrin.h> for them). Header-only, every
// translation unit compiles every set and instantiates the entry points it calls.
#pragma once

#include <nexttok/detail/aligned_buffer.hpp>
#include <nexttok/detail/isa.hpp>
#include <nexttok/error.hpp>
#include <nexttok/kernels/buffers.hpp>
#include <nexttok/kernels/kernel_isa.hpp>
#include <nexttok/kernels/thread_pool.hpp>
#include <nexttok/model/rope_scaling.hpp>
#include <nexttok/tensor/k_quant_blocks.hpp>
#include <nexttok/tensor/legacy_quant_blocks.hpp>
#include <nexttok/tensor/quant_blocks.hpp>
#include <nexttok/tensor/tensor_view.hpp>
#include <nexttok/tensor/weight_types.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// Every kernel file, once per set (only the base set in a program's translation unit when compiled
// separately: impl/src.hpp defines NEXTTOK_DETAIL_COMPILING_LIBRARY).
#if !NEXTTOK_HEADER_ONLY && !defined(NEXTTOK_DETAIL_COMPILING_LIBRARY)
#define NEXTTOK_EACH_ISA_BASE_ONLY
#endif
#define NEXTTOK_EACH_ISA_BODY <nexttok/kernels/detail/pass_bodies.hpp>
#include <nexttok/detail/each_isa.hpp>

namespace nexttok {

namespace isa_base = NEXTTOK_ISA_BASE_SET;

// nexttok::dot, nexttok::kernel_detail::simd, ...: the base set.
using namespace isa_base;

template <class X>
void q8_activations::quantize(std::int64_t t, const X* x) noexcept {
    isa_base::kernel_detail::quantize_activations(*this, t, x);
}

// For each target, y[t * ldy + r] = dot(W row r, x[t * ldx ...]) for t < n, r < W.rows(), in one
// parallel_for. Every W has the same cols. Throws unsupported_error for a weight type without
// kernels (the loaders reject those up front), before any work starts.
template <dense_element X>
void matmul_group(std::span<const matmul_target> targets, const X* x, std::int64_t ldx, std::int64_t n,
                  thread_pool& pool, matmul_workspace& ws);

// y[t * ldy + r] = dot(W row r, x[t * ldx ...]) for t < n, r < W.rows().
template <dense_element X>
void matmul(const tensor_view& w, const X* x, std::int64_t ldx, std::int64_t n, float* y, std::int64_t ldy,
            thread_pool& pool, matmul_workspace& ws) {
    const matmul_target target{&w, y, ldy};
    matmul_group(std::span<const matmul_target>(&target, 1), x, ldx, n, pool, ws);
}

// As above with a workspace of the calling thread (allocates when it first sees a larger n x cols).
template <dense_element X>
void matmul(const tensor_view& w, const X* x, std::int64_t ldx, std::int64_t n, float* y, std::int64_t ldy,
            thread_pool& pool) {
    thread_local matmul_workspace ws;
    matmul(w, x, ldx, n, y, ldy, pool, ws);
}

// Causal grouped-query attention of n query rows (attention.hpp: kernel_detail::causal_attention):
// rows[i] for i < n. The output in the decoder's element type, the cached rows in the cache's (the
// same, or q8_0 blocks).
template <dense_element Out, class Row>
requires std::same_as<Row, Out> || std::same_as<Row, block_q8_0>
void causal_attention(const attention_shape& s, std::int64_t n, const float* q, const attention_rows<Row>* rows,
                      Out* att, attention_workspace& ws, thread_pool& pool);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/kernels/impl/passes.ipp>
#endif

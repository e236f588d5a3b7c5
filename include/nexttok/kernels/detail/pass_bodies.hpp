// One kernel set: every kernel file in dependency order, in namespace nexttok::NEXTTOK_KERNEL_PASS
// (kernels/detail/passes.hpp defines it and the NEXTTOK_KERNELS_* macros of the set, and includes
// this file once per set): no include guard. A set's kernel_detail namespace sees nexttok::detail.
namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {
using namespace ::nexttok::detail;
}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

#include <nexttok/kernels/detail/simd.hpp>
#include <nexttok/kernels/detail/q8_k_act.hpp>
#include <nexttok/kernels/dequantize.hpp>
#include <nexttok/kernels/quant_dot.hpp>
#include <nexttok/kernels/dot.hpp>
#include <nexttok/kernels/detail/packed_dense.hpp>
#include <nexttok/kernels/q8_0_rows.hpp>
#include <nexttok/kernels/ops.hpp>
#include <nexttok/kernels/quant_act.hpp>
#include <nexttok/kernels/detail/outer_prefill_avx512.hpp>
#include <nexttok/kernels/matmul.hpp>
#include <nexttok/kernels/attention.hpp>

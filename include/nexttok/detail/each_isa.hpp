// Includes the file NEXTTOK_EACH_ISA_BODY (a header name, <...> or "...") once per kernel set the
// translation unit carries, with NEXTTOK_KERNEL_PASS naming the set's namespace (isa_portable,
// isa_avx2 or isa_avx512) and the NEXTTOK_KERNELS_* macros of that set (detail/isa_macros.hpp):
// - first the set of the translation unit's own flags (NEXTTOK_ISA_BASE_SET);
// - then, with NEXTTOK_KERNELS_DISPATCH (detail/isa.hpp), each higher set under #pragma GCC target
//   (GCC) or #pragma clang attribute with the target attribute (Clang): the one place that names
//   the targets, whose features detail/isa.hpp's cpu_level() checks.
// With NEXTTOK_EACH_ISA_BASE_ONLY defined (kernels/detail/passes.hpp, in a program's translation unit
// when the library is compiled separately), only the first.
// Ends with the NEXTTOK_KERNELS_* macros of the translation unit's flags again. The kernels
// (kernels/detail/passes.hpp) and the benchmarks' limit loops are compiled this way; NEXTTOK_ISA_CALL
// (detail/isa.hpp) calls the set in use. Internal; no include guard (included once per body).
#ifndef NEXTTOK_EACH_ISA_BODY
#error "define NEXTTOK_EACH_ISA_BODY (the file to include once per kernel set) before including each_isa.hpp"
#endif

#include <nexttok/detail/isa.hpp>

// The intrinsics of the higher sets, declared before (outside) their target pragmas.
#if defined(NEXTTOK_KERNELS_DISPATCH) && !defined(NEXTTOK_EACH_ISA_BASE_ONLY)
#define NEXTTOK_EACH_ISA_HIGHER 1
#include <immintrin.h>
#endif

#define NEXTTOK_KERNEL_PASS NEXTTOK_ISA_BASE_SET
#include NEXTTOK_EACH_ISA_BODY
#undef NEXTTOK_KERNEL_PASS

#if defined(NEXTTOK_EACH_ISA_HIGHER) && NEXTTOK_KERNELS_BASE_LEVEL < 1
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
#define NEXTTOK_PASS_LEVEL 1
#define NEXTTOK_KERNEL_PASS isa_avx2
#include <nexttok/detail/isa_macros.hpp>
#include NEXTTOK_EACH_ISA_BODY
#undef NEXTTOK_KERNEL_PASS
#undef NEXTTOK_PASS_LEVEL
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

#if defined(NEXTTOK_EACH_ISA_HIGHER) && NEXTTOK_KERNELS_BASE_LEVEL < 2
#if defined(__clang__)
#pragma clang attribute push(                                                                               \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx512vbmi,gfni,avx2,fma,f16c"))), \
    apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx512vbmi,gfni,avx2,fma,f16c")
#endif
#define NEXTTOK_PASS_LEVEL 2
#define NEXTTOK_KERNEL_PASS isa_avx512
#include <nexttok/detail/isa_macros.hpp>
#include NEXTTOK_EACH_ISA_BODY
#undef NEXTTOK_KERNEL_PASS
#undef NEXTTOK_PASS_LEVEL
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

// Back to the macros of the translation unit's flags.
#include <nexttok/detail/isa_macros.hpp>
#undef NEXTTOK_EACH_ISA_BODY
#undef NEXTTOK_EACH_ISA_BASE_ONLY
#undef NEXTTOK_EACH_ISA_HIGHER

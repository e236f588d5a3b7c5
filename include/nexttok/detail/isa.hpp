// The instruction sets the kernels are written for, and which of them this translation unit
// compiles: the one place that reads the compiler's feature macros (__AVX512F__, ...). Every other
// kernel file tests the NEXTTOK_KERNELS_* macros defined here. Internal.
//
// Two families of kernels, each with three paths (the files that hold them):
//   float (simd.hpp: dot products of float, half and bfloat16 weights, attention, norms, exp)
//     NEXTTOK_KERNELS_AVX512       AVX-512 F (BW for bfloat16 loads where present)
//     NEXTTOK_KERNELS_AVX2         AVX2 + FMA + F16C, without AVX-512 F
//     neither                      portable C++
//   int8 (quantized weights against quantized activations: quant_act.hpp and detail/*qdot*)
//     NEXTTOK_KERNELS_INT8_AVX512  AVX-512 F, BW, DQ, VL, VNNI and VBMI: 64-byte steps
//                                  (detail/quant_act_avx512.hpp, k_quant_qdot_zmm.hpp,
//                                  legacy_qdot_avx512.hpp)
//     NEXTTOK_KERNELS_INT8_AVX2    AVX2 + FMA + F16C without the above: one block per 256-bit step
//                                  (detail/quant_act_avx2.hpp, k_quant_qdot_avx2.hpp, legacy_qdot_avx2.hpp)
//     neither                      portable C++ (detail/quant_act_portable.hpp, legacy_qdot_portable.hpp)
// and refinements inside a path: NEXTTOK_KERNELS_F16C (one-instruction half conversion of a
// scalar), NEXTTOK_KERNELS_AVX512BW (the bfloat16 load of the float kernels),
// NEXTTOK_KERNELS_VNNI256 (vpdpbusd on 256 bits: AVX-512 VNNI + VL, or AVX-VNNI) and
// NEXTTOK_KERNELS_GFNI (the nibble split of the AVX-512 int8 kernels).
//
// Every path of a family adds in the same order (each kernel's header says which), so the paths
// give bitwise the same outputs; tests/kernel_paths compiles each one and checks it against a scalar
// reference of that order.
#pragma once

#if defined(__AVX512F__)
#define NEXTTOK_KERNELS_AVX512 1
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define NEXTTOK_KERNELS_AVX2 1
#endif

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && \
    defined(__AVX512VNNI__) && defined(__AVX512VBMI__)
#define NEXTTOK_KERNELS_INT8_AVX512 1
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define NEXTTOK_KERNELS_INT8_AVX2 1
#endif

#if defined(__F16C__)
#define NEXTTOK_KERNELS_F16C 1
#endif

#if defined(__AVX512BW__)
#define NEXTTOK_KERNELS_AVX512BW 1
#endif

#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define NEXTTOK_KERNELS_VNNI256 1
#define NEXTTOK_KERNELS_VNNI256_EVEX 1  // _mm256_dpbusd_epi32
#elif defined(__AVXVNNI__)
#define NEXTTOK_KERNELS_VNNI256 1  // _mm256_dpbusd_avx_epi32
#endif

#if defined(__GFNI__)
#define NEXTTOK_KERNELS_GFNI 1
#endif

#if defined(__AVX512F__) || defined(__AVX2__) || defined(__F16C__)
#include <immintrin.h>
#endif

// Around code that uses AVX-512 intrinsics: GCC 12's start from _mm512_undefined_*(), which
// -Wuninitialized and -Wmaybe-uninitialized report wherever they are inlined (GCC bug 105593, fixed
// in GCC 13); the two warnings are silenced between NEXTTOK_INTRINSICS_BEGIN and _END only.
#if defined(__GNUC__) && !defined(__clang__)
#define NEXTTOK_INTRINSICS_BEGIN                                                         \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
        _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define NEXTTOK_INTRINSICS_END _Pragma("GCC diagnostic pop")
#else
#define NEXTTOK_INTRINSICS_BEGIN
#define NEXTTOK_INTRINSICS_END
#endif

namespace nexttok::detail::isa {

// The paths this translation unit compiles, by name (the benchmarks and tests print them).
inline constexpr const char* float_kernels =
#if defined(NEXTTOK_KERNELS_AVX512)
    "avx512";
#elif defined(NEXTTOK_KERNELS_AVX2)
    "avx2";
#else
    "portable";
#endif

inline constexpr const char* int8_kernels =
#if defined(NEXTTOK_KERNELS_INT8_AVX512)
    "avx512";
#elif defined(NEXTTOK_KERNELS_INT8_AVX2)
    "avx2";
#else
    "portable";
#endif

}  // namespace nexttok::detail::isa

// The instruction sets the kernels are written for, and which of them this translation unit
// compiles: the one place that reads the compiler's feature macros (__AVX512F__, ...). Every other
// kernel file tests the NEXTTOK_KERNELS_* macros defined here. Internal.
//
// Two families of kernels, each with three paths (the files that hold them):
//   float (simd.hpp: dot products of float, half and bfloat16 weights, attention, norms, exp)
//     NEXTTOK_KERNELS_AVX512       AVX-512 F (BW for bfloat16 loads where present)
//     NEXTTOK_KERNELS_AVX2         AVX2 + FMA + F16C, without AVX-512 F
//     neither                      portable C++ (the AVX2 path's lanes, one by one)
//   int8 (quantized weights against quantized activations: quant_act.hpp and detail/*qdot*)
//     NEXTTOK_KERNELS_INT8_AVX512  AVX-512 F, BW, DQ, VL, VNNI and VBMI: 64-byte steps
//                                  (detail/quant_act_avx512.hpp, k_quant_qdot_zmm.hpp,
//                                  legacy_qdot_avx512.hpp)
//     NEXTTOK_KERNELS_INT8_AVX2    AVX2 + FMA + F16C without the above: 256-bit steps
//                                  (detail/quant_act_avx2.hpp, k_quant_qdot_avx2.hpp, legacy_qdot_avx2.hpp)
//     neither                      portable C++ (detail/quant_act_portable.hpp, legacy_qdot_portable.hpp)
// and refinements inside a path: NEXTTOK_KERNELS_F16C (one-instruction half conversion of a
// scalar), NEXTTOK_KERNELS_AVX512BW (the bfloat16 load of the float kernels),
// NEXTTOK_KERNELS_VNNI256 (vpdpbusd on 256 bits: AVX-512 VNNI + VL, or AVX-VNNI),
// NEXTTOK_KERNELS_GFNI (the nibble split of the AVX-512 int8 kernels) and NEXTTOK_KERNELS_AVX512BF16
// (vdpbf16ps for bfloat16 weights from the flags; with dispatch, the AVX-512 set checks the CPU
// for it at run time: cpu_has_avx512bf16 below, kernels/dot.hpp).
//
// The int8 paths add in one order (each kernel's header says which), so they give bitwise the same
// outputs; tests/kernel_paths compiles each one and checks it against a scalar reference of that
// order. The float family's three paths add in one order of 16 lanes, with one fused multiply-add
// per lane and step (bfloat16 weights: two, in vdpbf16ps's order of pairs; kernels/dot.hpp), and so
// give bitwise the same outputs too (tests/kernel_paths, and tests/kernel_sets on the logits of
// real files). A program built with GCC or Clang on x86-64
// carries every path and picks one at run time (kernels/kernel_isa.hpp, kernels/detail/passes.hpp).
#pragma once

#include <nexttok/detail/isa_macros.hpp>

// The level of the kernels the translation unit's own flags give (2: the AVX-512 int8 set, 1: AVX2
// + FMA + F16C, 0: portable), and whether kernels/detail/passes.hpp also compiles the higher levels
// under a target pragma and chooses between them at run time (GCC or Clang on x86-64, unless the
// program defines NEXTTOK_NO_DISPATCH; neither pragma defines the feature macros, so
// detail/isa_macros.hpp defines the kernels' own for each set).
#if defined(NEXTTOK_KERNELS_INT8_AVX512)
#define NEXTTOK_KERNELS_BASE_LEVEL 2
#elif defined(NEXTTOK_KERNELS_INT8_AVX2)
#define NEXTTOK_KERNELS_BASE_LEVEL 1
#else
#define NEXTTOK_KERNELS_BASE_LEVEL 0
#endif
#if defined(__GNUC__) && defined(__x86_64__) && !defined(NEXTTOK_NO_DISPATCH)
#define NEXTTOK_KERNELS_DISPATCH 1
#endif

// The namespace names of the sets (detail/each_isa.hpp compiles one per set): the base set, and the
// set that runs at level 1 (AVX2 below an AVX-512 base; an AVX-512 base has no lower level to run).
#if NEXTTOK_KERNELS_BASE_LEVEL == 2
#define NEXTTOK_ISA_BASE_SET isa_avx512
#define NEXTTOK_ISA_LEVEL1_SET isa_avx512
#elif NEXTTOK_KERNELS_BASE_LEVEL == 1
#define NEXTTOK_ISA_BASE_SET isa_avx2
#define NEXTTOK_ISA_LEVEL1_SET isa_avx2
#else
#define NEXTTOK_ISA_BASE_SET isa_portable
#define NEXTTOK_ISA_LEVEL1_SET isa_avx2
#endif

// `return ns::<set in use>::call;` where namespace ns holds one namespace per set (detail/each_isa.hpp):
// one switch on kernels/kernel_isa.hpp's detail::isa::active_level() per call.
#if defined(NEXTTOK_KERNELS_DISPATCH)
#define NEXTTOK_ISA_CALL(ns, call)                    \
    switch (::nexttok::detail::isa::active_level()) { \
        case 2:                                       \
            return ns::isa_avx512::call;              \
        case 1:                                       \
            return ns::NEXTTOK_ISA_LEVEL1_SET::call;  \
        default:                                      \
            return ns::NEXTTOK_ISA_BASE_SET::call;    \
    }
#else
#define NEXTTOK_ISA_CALL(ns, call) return ns::NEXTTOK_ISA_BASE_SET::call;
#endif

// The intrinsics of the translation unit's own flags. The higher sets' (with dispatch) are
// declared by detail/each_isa.hpp, which compiles those sets: <immintrin.h> then declares every
// x86 intrinsic, about 100 MB of compiler memory in each translation unit that includes it, which
// one that only reads tensors or caches has no use for.
#if defined(__AVX512F__) || defined(__AVX2__) || defined(__F16C__)
#include <immintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__)
#include <cpuid.h>
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

inline constexpr int base_level = NEXTTOK_KERNELS_BASE_LEVEL;
#if defined(NEXTTOK_KERNELS_DISPATCH)
inline constexpr int top_level = 2;
#else
inline constexpr int top_level = base_level;
#endif

// The highest level this CPU (and its operating system) runs: the features of each level's
// target pragma in detail/each_isa.hpp.
inline int cpu_level() noexcept {
#if defined(NEXTTOK_KERNELS_DISPATCH)
    __builtin_cpu_init();
    // F16C from CPUID leaf 1 (Clang 14's __builtin_cpu_supports does not know the name); the AVX
    // state it needs is what __builtin_cpu_supports("avx2") checks.
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni") &&
        __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("gfni") && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma") && f16c)
        return 2;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c) return 1;
    return 0;
#else
    return base_level;  // the flags already require it
#endif
}

// Whether this CPU has AVX512_BF16 (vdpbf16ps; CPUID leaf 7, sub-leaf 1, EAX bit 5): the AVX-512
// set's products of bfloat16 weights use it where present (kernels/dot.hpp, bf16_block_range),
// decided once. Without dispatch, the flags decide (__AVX512BF16__).
inline bool cpu_has_avx512bf16() noexcept {
#if defined(NEXTTOK_KERNELS_DISPATCH)
    static const bool has = [] {
        unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
        return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 5)) != 0;
    }();
    return has;
#elif defined(__AVX512BF16__)
    return true;
#else
    return false;
#endif
}

// Whether this is an Intel CPU (CPUID vendor "GenuineIntel"), decided once: choices of the kernels
// that only measurement could make depend on it (below).
inline bool cpu_is_intel() noexcept {
#if defined(__GNUC__) && defined(__x86_64__)
    static const bool intel = [] {
        unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
        // "Genu" "ineI" "ntel" in EBX, EDX, ECX
        return __get_cpuid(0, &eax, &ebx, &ecx, &edx) && ebx == 0x756e6547u && edx == 0x49656e69u && ecx == 0x6c65746eu;
    }();
    return intel;
#else
    return false;
#endif
}

// Whether the kernels' software prefetch of the weight rows ahead (simd::prefetch_cursor) asks for
// L2 rather than L1: on Intel CPUs. A prefetch into L1 holds one of the core's few L1 fill buffers
// until its line comes from memory, and there it capped decode: Intel Xeon (family 6 model 167, 2
// threads), 1.1B-shaped decode f16 10.9 -> 12.8, q8_0 16.5 -> 22.4, q4_0 29 -> 39 tokens/s with L2.
// On AMD Zen 5, L1 was 2-8% faster (benchmarks/README.md, "How the kernels' parameters were chosen").
inline bool cpu_prefetch_rows_into_l2() noexcept { return cpu_is_intel(); }

// Whether vdpbf16ps runs at the rate of the FMAs it replaces (32 products per instruction, as two
// FMAs make): not on Intel CPUs, where it issues once per two cycles (Intel Xeon, family 6 model
// 167: a quarter of the FMA rate, so half the products), and the compute-bound prefill multiplies
// bfloat16 weights by two FMAs instead (kernels/dot.hpp, bf16_dot_in_prefill: 1.1B-shaped prefill
// 0.44 -> 0.53 of the float peak). On AMD Zen 5 it ran prefill at 1.36-1.39 of that peak.
inline bool cpu_bf16_dot_full_rate() noexcept { return !cpu_is_intel(); }

// Whether the prefill of float, half and (by two FMAs) bfloat16 weights with AVX-512 takes outer
// products (kernels/detail/outer_prefill_avx512.hpp: 3 weight vectors and 8 broadcasts per 24
// FMAs) rather than packed_block_range's 4 x 6 tile (10 vector loads per 24 FMAs): on Intel CPUs,
// where each 64-byte load costs the FMA ports about a third of a cycle. Intel Xeon (family 6 model
// 167), 1.1B-shaped f16 and bf16 prefill: 0.51-0.56 -> 0.61-0.68 of peak. AMD Zen 5 ran the 4 x 6
// tile at 0.97 of peak in L1 (prefill 0.70-0.72); the outer products, which also transpose the
// weights when they pack them, were not measured there.
inline bool cpu_outer_prefill() noexcept { return cpu_is_intel(); }

// Whether repacked q8_0 and q4_0 weights take the decode tiles (kernels/matmul.hpp, row_block: wide
// tiles of 8 tokens over each task's rows) for any number of tokens, prefill too, rather than the
// prefill kernel's groups of 12 tokens by ranges of 2048 columns: not on Intel CPUs, where the decode
// tiles were not measured for prefill. AMD Zen 5, 2 threads, 1.1B shape: every weight product of a
// step of 128 tokens, q8_0 691 -> 443 ms, q4_0 848 -> 582 (12-256 tokens alike); the 128-token
// prefill (nexttok_batch_bench) q8_0 119-191 -> 232-245 tokens/s, q4_0 159-195 -> 214-223. q4_k
// went from 164-183 to 149-158 by its decode tiles and keeps the prefill kernel.
inline bool cpu_int8_prefill_in_place() noexcept { return !cpu_is_intel(); }

// The paths of the kernels the translation unit's flags give, by name (tests/kernel_paths prints them).
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

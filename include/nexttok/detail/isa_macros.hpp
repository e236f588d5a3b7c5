// The NEXTTOK_KERNELS_* macros of detail/isa.hpp for the kernels being compiled: from the
// compiler's feature macros, or, while detail/each_isa.hpp compiles a kernel set for a higher
// instruction set under #pragma GCC target (which does not define them), from NEXTTOK_PASS_LEVEL
// (2: AVX-512 with BW, DQ, VL, VNNI, VBMI and GFNI; 1: AVX2, FMA, F16C). Included again for each
// set, so without an include guard. Internal.
#undef NEXTTOK_KERNELS_AVX512
#undef NEXTTOK_KERNELS_AVX2
#undef NEXTTOK_KERNELS_INT8_AVX512
#undef NEXTTOK_KERNELS_INT8_AVX2
#undef NEXTTOK_KERNELS_F16C
#undef NEXTTOK_KERNELS_AVX512BW
#undef NEXTTOK_KERNELS_VNNI256
#undef NEXTTOK_KERNELS_VNNI256_EVEX
#undef NEXTTOK_KERNELS_GFNI
#undef NEXTTOK_KERNELS_AVX512BF16

#if defined(NEXTTOK_PASS_LEVEL) && NEXTTOK_PASS_LEVEL == 2
#define NEXTTOK_KERNELS_AVX512 1
#define NEXTTOK_KERNELS_INT8_AVX512 1
#define NEXTTOK_KERNELS_F16C 1
#define NEXTTOK_KERNELS_AVX512BW 1
#define NEXTTOK_KERNELS_VNNI256 1
#define NEXTTOK_KERNELS_VNNI256_EVEX 1
#define NEXTTOK_KERNELS_GFNI 1
#elif defined(NEXTTOK_PASS_LEVEL) && NEXTTOK_PASS_LEVEL == 1
#define NEXTTOK_KERNELS_AVX2 1
#define NEXTTOK_KERNELS_INT8_AVX2 1
#define NEXTTOK_KERNELS_F16C 1
#elif !defined(NEXTTOK_PASS_LEVEL)
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

#if defined(__AVX512BF16__) && defined(__AVX512F__)
#define NEXTTOK_KERNELS_AVX512BF16 1  // vdpbf16ps always (otherwise chosen at run time: kernels/dot.hpp)
#endif
#endif

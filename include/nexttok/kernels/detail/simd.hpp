// The SIMD backend, chosen at compile time: AVX-512 (F), AVX2 + FMA + F16C, or portable scalar
// code. Loads convert float, Eigen::half and Eigen::bfloat16 to float lanes; all arithmetic is in
// float. Internal: kernels use it, nothing else should.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <cstring>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__) && defined(__F16C__))
#include <immintrin.h>
#endif

namespace nexttok::detail::simd {

template <class T>
inline float to_float(T v) noexcept {
    return static_cast<float>(v);
}

#if defined(__AVX512F__)

inline constexpr const char* backend_name = "avx512";
inline constexpr int width = 16;        // float lanes per register
inline constexpr int accumulators = 4;  // independent accumulators per dot product (latency hiding)
using vec = __m512;

inline vec zero() noexcept { return _mm512_setzero_ps(); }
inline vec load(const float* p) noexcept { return _mm512_loadu_ps(p); }
inline vec load(const Eigen::half* p) noexcept {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline vec load(const Eigen::bfloat16* p) noexcept {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}
inline vec fmadd(vec a, vec b, vec c) noexcept { return _mm512_fmadd_ps(a, b, c); }
inline vec add(vec a, vec b) noexcept { return _mm512_add_ps(a, b); }
inline float reduce(vec v) noexcept { return _mm512_reduce_add_ps(v); }

#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

inline constexpr const char* backend_name = "avx2";
inline constexpr int width = 8;
inline constexpr int accumulators = 2;
using vec = __m256;

inline vec zero() noexcept { return _mm256_setzero_ps(); }
inline vec load(const float* p) noexcept { return _mm256_loadu_ps(p); }
inline vec load(const Eigen::half* p) noexcept {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline vec load(const Eigen::bfloat16* p) noexcept {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}
inline vec fmadd(vec a, vec b, vec c) noexcept { return _mm256_fmadd_ps(a, b, c); }
inline vec add(vec a, vec b) noexcept { return _mm256_add_ps(a, b); }
inline float reduce(vec v) noexcept {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#else

inline constexpr const char* backend_name = "portable";
inline constexpr int width = 1;
inline constexpr int accumulators = 4;
using vec = float;

inline vec zero() noexcept { return 0.0f; }
template <class T>
inline vec load(const T* p) noexcept {
    return to_float(*p);
}
inline vec fmadd(vec a, vec b, vec c) noexcept { return a * b + c; }
inline vec add(vec a, vec b) noexcept { return a + b; }
inline float reduce(vec v) noexcept { return v; }

#endif

}  // namespace nexttok::detail::simd

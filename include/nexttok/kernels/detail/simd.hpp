// The SIMD backend of the float kernels, chosen at compile time (detail/isa.hpp): AVX-512 (F),
// AVX2 + FMA + F16C, or portable C++ that computes the AVX2 path's lanes one by one (the same bits). Loads convert float, Eigen::half and Eigen::bfloat16 to float lanes; all arithmetic is in
// float. Integer lanes (ivec: `width` int32 lanes) exist only to unpack quantized weights: load
// `width` bytes, extract bit fields, convert to float. Internal: kernels use it, nothing else should.
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#include <Eigen/Core>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <nexttok/detail/isa.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

// Fully unrolls the loop that follows (over a tile's rows or tokens), so that its accumulators
// stay in registers: GCC keeps a long loop body rolled and spills them to the stack otherwise.
// NEXTTOK_ALWAYS_INLINE, before a function or after a lambda's parameters: it is inlined where it
// is called (a kernel's step written as a lambda, or a loop that calls it, is otherwise compiled as
// a function of its own, and the accumulators it updates go through memory).
// NEXTTOK_UNROLL_4 unrolls a loop over steps by four (detail/outer_prefill_avx512.hpp).
#if defined(__GNUC__)
#define NEXTTOK_UNROLL _Pragma("GCC unroll 16")
#define NEXTTOK_UNROLL_4 _Pragma("GCC unroll 4")
#define NEXTTOK_ALWAYS_INLINE __attribute__((always_inline))
#else
#define NEXTTOK_UNROLL
#define NEXTTOK_UNROLL_4
#define NEXTTOK_ALWAYS_INLINE
#endif

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail::simd {

template <class T>
inline float to_float(T v) noexcept {
    return static_cast<float>(v);
}

// A block's half-precision scale as float (exact): one instruction with F16C.
inline float half_to_float(packed_half h) noexcept {
#if defined(NEXTTOK_KERNELS_F16C)
    std::uint16_t bits;
    std::memcpy(&bits, h.bytes, 2);
    return _cvtsh_ss(bits);
#else
    return h.to_float();
#endif
}

// Floats that hold the accumulators of one output between column ranges (dot_block_range):
// the `accumulators` vectors of `width` lanes (16 floats with AVX-512 and AVX2), or, for the
// integer kernels of quant_act.hpp, 8 lanes and a scalar.
inline constexpr int acc_slot = 16;

// Prefetches the cache lines that start in [begin, end) (addresses), with the locality hint
// Locality (3: into L1, 2: into L2). Callers that pass consecutive stretches of a stream request
// each of its lines once.
template <int Locality>
inline void prefetch_lines(std::uintptr_t begin, std::uintptr_t end) noexcept {
    for (auto q = (begin + 63) & ~std::uintptr_t{63}; q < end; q += 64)
        __builtin_prefetch(reinterpret_cast<const char*>(q), 0, Locality);
}

// Prefetches the line at `address` into L1: an address, not a pointer, since a line fetched ahead
// of a tile (dot.hpp's dense_near_bytes, quant_act.hpp's prefetch_rows_near) may lie past the end
// of its matrix (a prefetch never faults).
inline void prefetch_l1(std::uintptr_t address) noexcept {
    __builtin_prefetch(reinterpret_cast<const char*>(address), 0, 3);
}

// Software prefetch of the weight rows a little past the current register tile (matmul.hpp:
// prefetch_bytes), a few lines per step of the current tile, so that the
// memory system always has the coming rows in flight (the hardware prefetchers alone leave decode
// at about half of the bandwidth with short quantized rows). Into L1 rather than L2: 1.1B decode
// steps 2-8% shorter with 1 thread, up to 6% with 2 (one run of q4_0 1% longer; benchmarks/README.md, "How the
// kernels' parameters were chosen"), on AMD Zen 5. On Intel CPUs into L2
// (detail::isa::cpu_prefetch_rows_into_l2: there L1 prefetches wait for fill buffers). Prefetching
// never faults, so the cursor may run past the end of a matrix.
//
// advance(bytes) moves the cursor on by exactly `bytes` and prefetches each line that starts in
// the stretch passed, so a range's lines are requested once each and evenly over the steps that
// read the tile. (Advancing by whole lines instead, 5 lines for a step of 288 bytes, ran ahead
// and then paused for the tile's last steps: 1.1B-shaped q4_0 decode, 2 threads, 20.4-21.1 ->
// 19.7-20.2 ms per token; q8_0 and f16 unchanged within noise.)
struct prefetch_cursor {
    const char* next = nullptr;
    const char* end = nullptr;
    bool into_l2 = false;

    prefetch_cursor() = default;
    // The lines of [begin, end): begin is taken down to the start of its line.
    prefetch_cursor(const char* begin, const char* end_) noexcept
            : next(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(begin) & ~std::uintptr_t{63})),
              end(end_),
              into_l2(::nexttok::detail::isa::cpu_prefetch_rows_into_l2()) {}

    // Whether lines are left to request.
    bool pending() const noexcept { return next < end; }

    void advance(std::size_t bytes) noexcept {
        if (!pending()) return;
        const char* stop = static_cast<std::size_t>(end - next) > bytes ? next + bytes : end;
        const auto b = reinterpret_cast<std::uintptr_t>(next), e = reinterpret_cast<std::uintptr_t>(stop);
        if (into_l2)
            prefetch_lines<2>(b, e);
        else
            prefetch_lines<3>(b, e);
        next = stop;
    }
    // The next Lines lines, without looking at `end` (a prefetch never faults): for a tile whose
    // step is whole lines (repacked_qdot.hpp's wide tiles), where advance's loop and bounds cost
    // more. `next` stays at a line's start.
    template <int Lines>
    void advance_lines() noexcept {
        if (into_l2)
            for (int k = 0; k < Lines; ++k) __builtin_prefetch(next + 64 * k, 0, 2);
        else
            for (int k = 0; k < Lines; ++k) __builtin_prefetch(next + 64 * k, 0, 3);
        next += 64 * Lines;
    }
};

#if defined(NEXTTOK_KERNELS_AVX512)

NEXTTOK_INTRINSICS_BEGIN  // detail/isa.hpp

inline constexpr int width = 16;  // float lanes per register
// One 16-lane accumulator per dot product: latency is hidden by computing several outputs at once
// (dot_block), not by splitting one sum, so the order of a sum is the same in every tile shape.
inline constexpr int accumulators = 1;
using vec = __m512;

inline vec zero() noexcept { return _mm512_setzero_ps(); }
inline vec load(const float* p) noexcept { return _mm512_loadu_ps(p); }
inline vec load(const Eigen::half* p) noexcept {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// A bfloat16 is the top half of its float: word i goes to word 2 i + 1, the even words are zero.
// With AVX-512 BW one masked word permutation does it (the widening and the shift it replaces were
// one instruction more per 16 weights: 1.1B-shaped bf16 decode products, 2 threads, median ratio
// 0.989-0.996 in five runs of both codes in one process, token by token in turn).
inline vec load(const Eigen::bfloat16* p) noexcept {
#if defined(NEXTTOK_KERNELS_AVX512BW)
    const __m512i odd_words = _mm512_set_epi16(15, 0, 14, 0, 13, 0, 12, 0, 11, 0, 10, 0, 9, 0, 8, 0, 7, 0, 6, 0, 5, 0,
                                               4, 0, 3, 0, 2, 0, 1, 0, 0, 0);
    const __m512i v = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_maskz_permutexvar_epi16(0xaaaaaaaau, odd_words, v));
#else
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
#endif
}
inline vec fmadd(vec a, vec b, vec c) noexcept { return _mm512_fmadd_ps(a, b, c); }
// 2 * width bfloat16 words at p as a vector of float: lane l is word 2 l + 1 (odd) or word 2 l
// (even), the pairs that vdpbf16ps multiplies (kernels/dot.hpp, bf16_block_range).
inline vec load_odd_words(const void* p) noexcept {
    return _mm512_castsi512_ps(
        _mm512_and_si512(_mm512_loadu_si512(p), _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
}
inline vec load_even_words(const void* p) noexcept {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_loadu_si512(p), 16));
}
// v, from now on held in a register (as with AVX2 below): a 4 x 6 tile whose 6 token chunks were
// folded into its 24 FMAs made 28 loads per step, more than two load ports take in the 12 cycles
// of the FMAs. Kept in registers, 10 loads: packed_block_range in L1, AMD EPYC Zen 5, 1 thread,
// 184 -> 224 GFLOP/s (peak 230); 1.1B-shaped f16 prefill 0.48-0.50 -> 0.59-0.68 of peak.
inline vec in_register(vec v) noexcept {
    asm("" : "+v"(v));
    return v;
}
inline vec add(vec a, vec b) noexcept { return _mm512_add_ps(a, b); }
inline float reduce(vec v) noexcept { return _mm512_reduce_add_ps(v); }
// Sixteen reductions at once: lane i of reduce16(v) is bitwise reduce(v[reduce16_slot[i]]), the
// same pairs added at every level (lane j + lane j + 8, then + 4, + 2, + 1) by shuffles that
// serve sixteen vectors. So a caller accumulates item i in v[reduce16_slot[i]].
inline constexpr int reduce16_slot[16] = {0, 2, 1, 3, 8, 10, 9, 11, 4, 6, 5, 7, 12, 14, 13, 15};
inline vec reduce16(const vec (&v)[16]) noexcept {
    vec l1[8], l2[4], l3[2];
    for (int i = 0; i < 8; ++i)  // lanes 0-7: v[i]'s 8 sums, lanes 8-15: v[i + 8]'s
        l1[i] = _mm512_add_ps(_mm512_shuffle_f32x4(v[i], v[i + 8], 0xEE), _mm512_shuffle_f32x4(v[i], v[i + 8], 0x44));
    for (int i = 0; i < 4; ++i)  // quarters: 4 sums of items i, i + 8, i + 4, i + 12
        l2[i] =
            _mm512_add_ps(_mm512_shuffle_f32x4(l1[i], l1[i + 4], 0xDD), _mm512_shuffle_f32x4(l1[i], l1[i + 4], 0x88));
    for (int i = 0; i < 2; ++i)  // quarters: 2 sums of an item of l2[i], 2 of the same quarter's in l2[i + 2]
        l3[i] = _mm512_add_ps(_mm512_shuffle_ps(l2[i], l2[i + 2], _MM_SHUFFLE(3, 2, 3, 2)),
                              _mm512_shuffle_ps(l2[i], l2[i + 2], _MM_SHUFFLE(1, 0, 1, 0)));
    return _mm512_add_ps(_mm512_shuffle_ps(l3[0], l3[1], _MM_SHUFFLE(3, 1, 3, 1)),
                         _mm512_shuffle_ps(l3[0], l3[1], _MM_SHUFFLE(2, 0, 2, 0)));
}
// out[k] = reduce(load(slot(k))) for k < N: the outputs of a decode tile or sixteen rows of a
// prefill group (matmul.hpp), from 4 on sixteen at a time by reduce16 (bitwise the same). One by
// one (q8_k_act.hpp's qdot_result for the int8 kernels) they took a fifth of a 4 x 4 q4_0 tile's
// time in L2; a tree of 16 for 1-3 outputs made f16 decode 2% slower.
template <int N, class Slot>
inline void reduce_slots(Slot&& slot, float* out) noexcept {
    if constexpr (N < 4) {
        for (int k = 0; k < N; ++k) out[k] = reduce(load(slot(k)));
    } else {
        for (int k0 = 0; k0 < N; k0 += 16) {
            vec v[16];
            for (int i = 0; i < 16; ++i) v[reduce16_slot[i]] = k0 + i < N ? load(slot(k0 + i)) : zero();
            if (k0 + 16 <= N) {
                _mm512_storeu_ps(out + k0, reduce16(v));
            } else {
                alignas(64) float lanes[16];
                _mm512_store_ps(lanes, reduce16(v));
                for (int i = 0; k0 + i < N; ++i) out[k0 + i] = lanes[i];
            }
        }
    }
}
inline vec set1(float v) noexcept { return _mm512_set1_ps(v); }
inline vec mul(vec a, vec b) noexcept { return _mm512_mul_ps(a, b); }
inline vec sub(vec a, vec b) noexcept { return _mm512_sub_ps(a, b); }
inline void store(float* p, vec v) noexcept { _mm512_storeu_ps(p, v); }
inline vec div(vec a, vec b) noexcept { return _mm512_div_ps(a, b); }

// For exp (below): x clamped to [-104, 89] (NaN stays NaN), x rounded to the nearest integer,
// and p 2^n (scalef: overflow to infinity, underflow through the subnormals to zero).
inline vec clamp_exp_argument(vec x) noexcept {
    return _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
}
inline vec round_nearest(vec x) noexcept {
    return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
inline vec times_pow2(vec p, vec n) noexcept { return _mm512_scalef_ps(p, n); }

using ivec = __m512i;
// Reads exactly `width` (16) bytes, zero- or sign-extended to int32 lanes.
inline ivec load_u8(const std::uint8_t* p) noexcept {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline ivec load_i8(const std::int8_t* p) noexcept {
    return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline ivec and_i(ivec a, int mask) noexcept { return _mm512_and_si512(a, _mm512_set1_epi32(mask)); }
inline ivec or_i(ivec a, ivec b) noexcept { return _mm512_or_si512(a, b); }
inline ivec add_i(ivec a, int b) noexcept { return _mm512_add_epi32(a, _mm512_set1_epi32(b)); }
inline ivec shift_right_i(ivec a, int bits) noexcept { return _mm512_srl_epi32(a, _mm_cvtsi32_si128(bits)); }
inline ivec shift_left_i(ivec a, int bits) noexcept { return _mm512_sll_epi32(a, _mm_cvtsi32_si128(bits)); }
inline vec to_vec(ivec a) noexcept { return _mm512_cvtepi32_ps(a); }

NEXTTOK_INTRINSICS_END

#elif defined(NEXTTOK_KERNELS_AVX2)

inline constexpr int width = 8;
inline constexpr int accumulators = 2;  // two 8-lane halves emulate AVX-512's 16 lanes
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
// As with AVX-512: lane l is word 2 l + 1 (odd) or 2 l (even) of the 2 * width words at p.
inline vec load_odd_words(const void* p) noexcept {
    const __m256i v = _mm256_loadu_si256(static_cast<const __m256i*>(p));
    return _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(static_cast<int>(0xffff0000u))));
}
inline vec load_even_words(const void* p) noexcept {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_loadu_si256(static_cast<const __m256i*>(p)), 16));
}
// v, from now on held in a register: the compiler may not fold the load that produced it into
// each instruction that uses it (packed_block_range: one load of a token chunk for all rows,
// not one per row; with AVX2 the folded loads outnumbered what the load ports take).
inline vec in_register(vec v) noexcept {
    asm("" : "+x"(v));
    return v;
}
inline vec add(vec a, vec b) noexcept { return _mm256_add_ps(a, b); }
inline float reduce(vec v) noexcept {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
inline vec set1(float v) noexcept { return _mm256_set1_ps(v); }
inline vec mul(vec a, vec b) noexcept { return _mm256_mul_ps(a, b); }
inline vec sub(vec a, vec b) noexcept { return _mm256_sub_ps(a, b); }
inline void store(float* p, vec v) noexcept { _mm256_storeu_ps(p, v); }
inline vec div(vec a, vec b) noexcept { return _mm256_div_ps(a, b); }

// For exp (below), as with AVX-512; 2^n (n in [-150, 128]) applied as two factors 2^(n/2), each
// a normal float built in the exponent field.
inline vec clamp_exp_argument(vec x) noexcept {
    return _mm256_min_ps(_mm256_set1_ps(89.0f), _mm256_max_ps(_mm256_set1_ps(-104.0f), x));
}
inline vec round_nearest(vec x) noexcept { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline vec times_pow2(vec p, vec n) noexcept {
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

using ivec = __m256i;
// Reads exactly `width` (8) bytes, zero- or sign-extended to int32 lanes.
inline ivec load_u8(const std::uint8_t* p) noexcept {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline ivec load_i8(const std::int8_t* p) noexcept {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline ivec and_i(ivec a, int mask) noexcept { return _mm256_and_si256(a, _mm256_set1_epi32(mask)); }
inline ivec or_i(ivec a, ivec b) noexcept { return _mm256_or_si256(a, b); }
inline ivec add_i(ivec a, int b) noexcept { return _mm256_add_epi32(a, _mm256_set1_epi32(b)); }
inline ivec shift_right_i(ivec a, int bits) noexcept { return _mm256_srl_epi32(a, _mm_cvtsi32_si128(bits)); }
inline ivec shift_left_i(ivec a, int bits) noexcept { return _mm256_sll_epi32(a, _mm_cvtsi32_si128(bits)); }
inline vec to_vec(ivec a) noexcept { return _mm256_cvtepi32_ps(a); }

#else

// Portable C++ that computes what the AVX2 path computes, bitwise: 8 float lanes, two
// accumulators, each lane's multiply-add fused (std::fma: one rounding, as vfmadd), the lanes
// reduced in the tree of AVX2's reduce, min, max and rounding with the instructions' semantics.
// So a program gives the same outputs on any CPU (the AVX-512 path adds in the same order too).
inline constexpr int width = 8;
inline constexpr int accumulators = 2;
struct vec {
    float lane[8];
};

template <class F>
inline vec each_lane(F&& f) noexcept {
    vec r;
    for (int k = 0; k < 8; ++k) r.lane[k] = f(k);
    return r;
}

inline vec zero() noexcept { return vec{}; }
template <class T>
inline vec load(const T* p) noexcept {
    return each_lane([p](int k) { return to_float(p[k]); });
}
inline vec fmadd(vec a, vec b, vec c) noexcept {
    return each_lane([&](int k) { return std::fma(a.lane[k], b.lane[k], c.lane[k]); });
}
// As with AVX2: lane l is word 2 l + 1 (odd) or 2 l (even) of the 2 * width words at p.
inline vec load_words(const void* p, int first) noexcept {
    std::uint16_t words[2 * width];
    std::memcpy(words, p, sizeof words);
    return each_lane(
        [&](int k) { return std::bit_cast<float>(static_cast<std::uint32_t>(words[2 * k + first]) << 16); });
}
inline vec load_odd_words(const void* p) noexcept { return load_words(p, 1); }
inline vec load_even_words(const void* p) noexcept { return load_words(p, 0); }
inline vec in_register(vec v) noexcept { return v; }
inline vec add(vec a, vec b) noexcept {
    return each_lane([&](int k) { return a.lane[k] + b.lane[k]; });
}
inline vec sub(vec a, vec b) noexcept {
    return each_lane([&](int k) { return a.lane[k] - b.lane[k]; });
}
inline vec mul(vec a, vec b) noexcept {
    return each_lane([&](int k) { return a.lane[k] * b.lane[k]; });
}
inline vec div(vec a, vec b) noexcept {
    return each_lane([&](int k) { return a.lane[k] / b.lane[k]; });
}
// AVX2's tree: the two halves, then lanes 2 and 3 onto 0 and 1, then lane 1 onto lane 0.
inline float reduce(vec v) noexcept {
    const float* l = v.lane;
    return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
}
inline vec set1(float v) noexcept {
    return each_lane([v](int) { return v; });
}
inline void store(float* p, vec v) noexcept { std::memcpy(p, v.lane, sizeof v.lane); }

// For exp (below), as the instructions do it: max and min give their second operand when either
// is NaN (so NaN stays NaN), rounding to the nearest integer breaks ties to even, and 2^n is
// applied as AVX2 does.
inline vec clamp_exp_argument(vec x) noexcept {
    return each_lane([&](int k) {
        const float m = -104.0f > x.lane[k] ? -104.0f : x.lane[k];
        return 89.0f < m ? 89.0f : m;
    });
}
inline vec round_nearest(vec x) noexcept {
    return each_lane([&](int k) { return std::nearbyint(x.lane[k]); });
}
inline vec times_pow2(vec p, vec n) noexcept {
    return each_lane([&](int k) {
        // An integer in [-150, 128], or NaN, which the instruction turns into INT32_MIN.
        const std::int32_t ni = std::isnan(n.lane[k]) ? INT32_MIN : static_cast<std::int32_t>(n.lane[k]);
        const std::int32_t n1 = ni >> 1, n2 = ni - n1;
        const float s1 = std::bit_cast<float>(static_cast<std::uint32_t>(n1 + 127) << 23);
        const float s2 = std::bit_cast<float>(static_cast<std::uint32_t>(n2 + 127) << 23);
        return p.lane[k] * s1 * s2;
    });
}

struct ivec {
    std::int32_t lane[8];
};
template <class F>
inline ivec each_int_lane(F&& f) noexcept {
    ivec r;
    for (int k = 0; k < 8; ++k) r.lane[k] = f(k);
    return r;
}
// Reads exactly `width` (8) bytes, zero- or sign-extended to int32 lanes.
inline ivec load_u8(const std::uint8_t* p) noexcept {
    return each_int_lane([p](int k) { return static_cast<std::int32_t>(p[k]); });
}
inline ivec load_i8(const std::int8_t* p) noexcept {
    return each_int_lane([p](int k) { return static_cast<std::int32_t>(p[k]); });
}
inline ivec and_i(ivec a, int mask) noexcept {
    return each_int_lane([&](int k) { return a.lane[k] & mask; });
}
inline ivec or_i(ivec a, ivec b) noexcept {
    return each_int_lane([&](int k) { return a.lane[k] | b.lane[k]; });
}
inline ivec add_i(ivec a, int b) noexcept {
    return each_int_lane([&](int k) { return a.lane[k] + b; });
}
inline ivec shift_right_i(ivec a, int bits) noexcept {
    return each_int_lane(
        [&](int k) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(a.lane[k]) >> bits); });
}
inline ivec shift_left_i(ivec a, int bits) noexcept {
    return each_int_lane(
        [&](int k) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(a.lane[k]) << bits); });
}
inline vec to_vec(ivec a) noexcept {
    return each_lane([&](int k) { return static_cast<float>(a.lane[k]); });
}

#endif

// e^x within 2 ulp: x = n ln 2 + r (|r| <= ln 2 / 2, ln 2 in two parts so that r is exact), e^r
// by a degree-7 polynomial, times 2^n.
inline vec exp(vec x) noexcept {
    x = clamp_exp_argument(x);
    const vec n = round_nearest(mul(x, set1(1.44269504088896341f)));
    vec r = fmadd(n, set1(-0.693359375f), x);
    r = fmadd(n, set1(2.12194440e-4f), r);
    vec p = set1(1.9875691500e-4f);
    p = fmadd(p, r, set1(1.3981999507e-3f));
    p = fmadd(p, r, set1(8.3334519073e-3f));
    p = fmadd(p, r, set1(4.1665795894e-2f));
    p = fmadd(p, r, set1(1.6666665459e-1f));
    p = fmadd(p, r, set1(5.0000001201e-1f));
    p = fmadd(p, mul(r, r), add(r, set1(1.0f)));
    return times_pow2(p, n);
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail::simd

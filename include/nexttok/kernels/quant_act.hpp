// Integer dot products for quantized weights, as llama.cpp computes them: the activation row is
// quantized once per matmul to 8 bits per block of 32 (q8_activations), and each weight block is
// multiplied with it in int32 (AVX-512 VNNI, AVX-VNNI vpdpbusd, AVX2 maddubs, or scalar), then
// scaled in float. A q4_0 block is half the bytes of its float dequantization work, which is what
// lets decode run at the memory-bandwidth limit.
//
// With AVX-512 (BW, DQ, VL, VBMI, VNNI) a step covers four q8_0 blocks or eight q4_0 blocks
// (their quant bytes gathered by two-source byte permutations, their half-precision scales by one
// word permutation, against activations grouped to match) or a q4_k block two sub-blocks per
// instruction, against activations quantized once more by 256 elements (llama.cpp's q8_K), so
// that a whole q4_k block sums in int32. Otherwise one block per 256-bit instruction.
//
// Accuracy: activations are rounded to 8 bits per 32 (relative error about 1/254 of the block's
// largest value), or per 256 for q4_k weights with AVX-512, which is llama.cpp's own error for each
// type; the reference-logit tolerance for quantized files (data/README.md, 3e-2) holds with it.
//
// Determinism: an output's value depends only on its weight row, its activation row and n. Integer
// sums are exact; the float accumulation goes step by step (4 or 8 blocks, a q4_k block, or one
// block without AVX-512) in ascending order into one accumulator of 16 lanes (or 8 lanes plus a scalar
// for q4_k's minimums; with AVX-512, q4_k's minimums in an accumulator of their own, added in after
// every 8 blocks), reduced in a fixed tree. So any tile shape (NR rows x NT tokens), thread
// count or batch gives bitwise the same outputs, and quantization is a pure function of one row:
// prefill and decode agree bitwise.
#pragma once

#include <nexttok/kernels/detail/q8_k_act.hpp>
#include <nexttok/kernels/detail/simd.hpp>
#include <nexttok/kernels/quant_blocks.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && \
    defined(__AVX512VNNI__) && defined(__AVX512VBMI__)
#define NEXTTOK_INT8_ZMM 1
#endif

namespace nexttok {

// One activation row of n elements (n % 32 == 0) quantized to 8 bits per block of 32: element i
// ~= lane_d[i / 4] * qs[i]. Arrays rather than blocks, so that a SIMD load of any width takes
// consecutive blocks. Each array is padded with zeros to a multiple of 64 bytes.
struct q8_act_row {
    const std::int8_t* qs;     // [n]
    const std::int32_t* neg8;  // [n / 4]: -8 * (qs[4l] + ... + qs[4l + 3]), q4_0's "- 8" folded into the int dot
    const float* lane_d;       // [n / 4]: the scale d of the block of lane l (block l / 8)
    const float* dsum;         // [n / 32]: d * (sum of the block's qs), q4_k's minimum term
    // Only where the kernels use them (q8_act_row::grouped, the AVX-512 kernels), the same values
    // grouped for q8_0 weights, by quads of 4 blocks (128 elements, padded with zeros to whole
    // quads): in quad k, qs4[128k + 16i + j] = element 32(4k + i) + j and
    // qs4[128k + 64 + 16i + j] = element 32(4k + i) + 16 + j (i < 4, j < 16), the order in which
    // the q8_0 kernel gathers the first and last 16 quant bytes of 4 blocks. Lane l of quad k
    // covers bytes 4l..4l+3 of both halves.
    const std::int8_t* qs4;        // [n]
    const std::int32_t* neg128_4;  // [n / 8]: -128 * (sum of the lane's 8 values)
    const float* lane_d4;          // [n / 8]: the scale d of the lane's block (block 4k + l / 4)
    // and for 256-element weights (n % 256 == 0 only, else unset: q4_k with AVX-512; q2_k, q3_k and
    // iq4_xs with every instruction set), quantized anew by 256 elements, one
    // scale each (llama.cpp's q8_K): element i ~= d_k[i / 256] * (its value in qs_k), where qs_k
    // holds each 256 elements' blocks of 32 in the order 0, 2, 1, 3, 4, 6, 5, 7, the order of a
    // q4_k block's low and high nibbles. bsum_k[j]: the sum of block j's values (element order);
    // bsum16_k[i]: of elements 16 i .. 16 i + 15 (detail/q8_k_act.hpp).
    const std::int8_t* qs_k;       // [n]
    const float* d_k;              // [n / 256]
    const std::int16_t* bsum_k;    // [n / 32]
    const std::int16_t* bsum16_k;  // [n / 16]
    // and grouped for q4_0 weights by octets of 8 blocks (256 elements, padded with zeros to whole
    // octets): octet o holds four 64-byte parts, qs8[256o + 64m + 8k + j] = element
    // 32(8o + k) + {0, 16, 8, 24}[m] + j (k, j < 8): the low and high nibbles of the first 8
    // quant bytes of the 8 blocks, then of their last 8. Lane l of octet o (bytes 4l..4l+3 of
    // each part) covers 16 elements of block 8o + l / 2.
    const std::int8_t* qs8;      // [n]
    const std::int32_t* neg8_8;  // [n / 16]: -8 * (sum of the lane's 16 values)
    const float* lane_d8;        // [n / 16]: the scale d of the lane's block (block 8o + l / 2)

#if defined(NEXTTOK_INT8_ZMM)
    static constexpr bool grouped = true;
#else
    static constexpr bool grouped = false;
#endif
};

// Quantized activation rows, owning their storage (64-byte aligned). Sized by resize(), which
// keeps the allocation when it can: a decoder sizes it once outside the token loop.
class q8_activations {
public:
    void resize(std::int64_t n_tokens, std::int64_t n) {
        n_ = n;
        const std::int64_t full = lines(n), quarter = lines(n / 8), quads = lines((n + 127) / 128 * 128);
        const std::int64_t octets = lines((n + 255) / 256 * 256);
        row_lines_ = 4 * full + quarter + lines(n / 64) + lines(n / 16) + lines(n / 8) + 2 * quads + octets + 2 * lines(octets * 64 / 4);
        const auto size = static_cast<std::size_t>(n_tokens * row_lines_);
        if (store_.size() < size) store_.resize(size);
        rows_.resize(static_cast<std::size_t>(n_tokens));
        for (std::int64_t t = 0; t < n_tokens; ++t) {
            std::byte* at = store_[static_cast<std::size_t>(t * row_lines_)].bytes;
            auto take = [&at](std::int64_t n_lines) {
                std::byte* p = at;
                at += 64 * n_lines;
                return p;
            };
            q8_act_row& r = rows_[static_cast<std::size_t>(t)];
            r.qs = reinterpret_cast<const std::int8_t*>(take(full));
            r.neg8 = reinterpret_cast<const std::int32_t*>(take(full));
            r.lane_d = reinterpret_cast<const float*>(take(full));
            r.dsum = reinterpret_cast<const float*>(take(quarter));
            r.qs4 = reinterpret_cast<const std::int8_t*>(take(quads));
            r.neg128_4 = reinterpret_cast<const std::int32_t*>(take(quads));
            r.lane_d4 = reinterpret_cast<const float*>(r.neg128_4 + (quads * 64) / 8);
            r.qs_k = reinterpret_cast<const std::int8_t*>(take(full));
            r.d_k = reinterpret_cast<const float*>(take(lines(n / 64)));
            r.bsum_k = reinterpret_cast<const std::int16_t*>(take(lines(n / 16)));
            r.bsum16_k = reinterpret_cast<const std::int16_t*>(take(lines(n / 8)));
            r.qs8 = reinterpret_cast<const std::int8_t*>(take(octets));
            r.neg8_8 = reinterpret_cast<const std::int32_t*>(take(lines(octets * 64 / 4)));
            r.lane_d8 = reinterpret_cast<const float*>(take(lines(octets * 64 / 4)));
        }
    }

    // Row t := x[0, n) quantized: d = amax / 127, q = round-to-nearest-even(x / d).
    template <class X>
    void quantize(std::int64_t t, const X* x) noexcept;

    const q8_act_row* rows() const noexcept { return rows_.data(); }
    const q8_act_row& row(std::int64_t t) const noexcept { return rows_[static_cast<std::size_t>(t)]; }

private:
    struct alignas(64) line {
        std::byte bytes[64];
    };
    static std::int64_t lines(std::int64_t bytes) noexcept { return (bytes + 63) / 64; }

    std::int64_t n_ = 0, row_lines_ = 0;
    std::vector<line> store_;
    std::vector<q8_act_row> rows_;
};

// Weight block types that have an integer kernel here; others (q5_k, q6_k) use quant_dot.hpp.
template <class W>
inline constexpr bool has_int8_kernel =
    std::is_same_v<W, block_q8_0> || std::is_same_v<W, block_q4_0> || std::is_same_v<W, block_q4_k> ||
    is_k_quant_int8_block<W> || is_legacy_int8_block<W>;

#if defined(__GNUC__) && !defined(__clang__)  // GCC bug 105593, as in simd.hpp
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#if defined(NEXTTOK_INT8_ZMM)
namespace detail {

// 256 elements x, of largest magnitude amax, quantized for q4_k (q8_act_row::qs_k, d_k, bsum_k).
template <class X>
inline void quantize_q8_k(const X* x, float amax, std::int8_t* qs, float* d, std::int16_t* bsum) noexcept {
    namespace s = simd;
    constexpr int order[8] = {0, 2, 1, 3, 4, 6, 5, 7};  // the q4_k grouping
    *d = amax / 127.0f;
    const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    __m256i ls[8];  // each block's 8 lane sums
    for (int j = 0; j < 8; ++j) {
        const __m128i q0 = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(s::load(x + 32 * j), id)));
        const __m128i q1 = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(s::load(x + 32 * j + 16), id)));
        const __m256i q01 = _mm256_set_m128i(q1, q0);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs + 32 * order[j]), q01);
        ls[j] = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(1), q01);
    }
    // Pairwise sums: in each 128-bit half, blocks 0-3 (4-7) by two rounds, then the halves added.
    const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(ls[0], ls[1]), _mm256_hadd_epi32(ls[2], ls[3]));
    const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(ls[4], ls[5]), _mm256_hadd_epi32(ls[6], ls[7]));
    const __m128i sa = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    const __m128i sb = _mm_add_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(bsum), _mm_packs_epi32(sa, sb));  // |sum| <= 32 x 127
}

}  // namespace detail
#endif

template <class X>
void q8_activations::quantize(std::int64_t t, const X* x) noexcept {
    namespace s = detail::simd;
    const q8_act_row& row = rows_[static_cast<std::size_t>(t)];
    auto* qs = const_cast<std::int8_t*>(row.qs);
    auto* neg8 = const_cast<std::int32_t*>(row.neg8);
    auto* lane_d = const_cast<float*>(row.lane_d);
    auto* dsum = const_cast<float*>(row.dsum);
    const std::int64_t nb = n_ / 32;
#if defined(NEXTTOK_INT8_ZMM)
    auto* qs4 = const_cast<std::int8_t*>(row.qs4);
    auto* neg128_4 = const_cast<std::int32_t*>(row.neg128_4);
    auto* lane_d4 = const_cast<float*>(row.lane_d4);
    auto* qs8 = const_cast<std::int8_t*>(row.qs8);
    auto* neg8_8 = const_cast<std::int32_t*>(row.neg8_8);
    auto* lane_d8 = const_cast<float*>(row.lane_d8);
    const bool k_grouping = n_ % 256 == 0;
    float k_amax = 0.0f;  // of the current 256 elements
#endif
    for (std::int64_t b = 0; b < nb; ++b) {
        const X* xb = x + b * 32;
        std::int8_t* q = qs + b * 32;
#if defined(NEXTTOK_INT8_ZMM)
        const __m512 v0 = s::load(xb), v1 = s::load(xb + 16);
        const __m512 m = _mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1));
        __m256 m8 = _mm256_max_ps(_mm512_castps512_ps256(m), _mm512_extractf32x8_ps(m, 1));
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        const float amax = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
        const float d = amax / 127.0f;
        const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
        const __m128i q0 = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v0, id)));
        const __m128i q1 = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v1, id)));
        const __m256i q01 = _mm256_set_m128i(q1, q0);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), q01);
        // The 8 lane sums of 4 values, their -8 multiples, the lane scales.
        const __m256i ls = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(1), q01);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(neg8 + 8 * b), _mm256_mullo_epi32(ls, _mm256_set1_epi32(-8)));
        const __m256 dv = _mm256_set1_ps(d);
        _mm256_storeu_ps(lane_d + 8 * b, dv);
        const __m128i ls4 = _mm_add_epi32(_mm256_castsi256_si128(ls), _mm256_extracti128_si256(ls, 1));
        __m128i s2 = _mm_add_epi32(ls4, _mm_unpackhi_epi64(ls4, ls4));
        s2 = _mm_add_epi32(s2, _mm_shuffle_epi32(s2, 1));
        dsum[b] = d * static_cast<float>(_mm_cvtsi128_si32(s2));
        // The q8_0 grouping: block i of quad k gives bytes 16 i.. of both halves, lanes 4 i..4 i + 3.
        const std::int64_t k = b / 4, i = b % 4;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(qs4 + 128 * k + 16 * i), q0);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(qs4 + 128 * k + 64 + 16 * i), q1);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(neg128_4 + 16 * k + 4 * i), _mm_mullo_epi32(ls4, _mm_set1_epi32(-128)));
        _mm_storeu_ps(lane_d4 + 16 * k + 4 * i, _mm256_castps256_ps128(dv));
        // The q4_0 octet grouping: block k of octet o, lanes 2k and 2k + 1.
        {
            std::int8_t* q8 = qs8 + 256 * (b / 8) + 8 * (b % 8);
            _mm_storel_epi64(reinterpret_cast<__m128i*>(q8), q0);
            _mm_storel_epi64(reinterpret_cast<__m128i*>(q8 + 64), q1);
            _mm_storel_epi64(reinterpret_cast<__m128i*>(q8 + 128), _mm_unpackhi_epi64(q0, q0));
            _mm_storel_epi64(reinterpret_cast<__m128i*>(q8 + 192), _mm_unpackhi_epi64(q1, q1));
            const __m128i ls2 = _mm_add_epi32(ls4, _mm_unpackhi_epi64(ls4, ls4));
            _mm_storel_epi64(reinterpret_cast<__m128i*>(neg8_8 + 2 * b), _mm_mullo_epi32(ls2, _mm_set1_epi32(-8)));
            _mm_storel_pi(reinterpret_cast<__m64*>(lane_d8 + 2 * b), _mm256_castps256_ps128(dv));
        }
        k_amax = std::max(k_amax, amax);
        if (k_grouping && b % 8 == 7) {
            const std::int64_t k = b / 8;
            detail::quantize_q8_k(x + 256 * k, k_amax, const_cast<std::int8_t*>(row.qs_k) + 256 * k,
                                  const_cast<float*>(row.d_k) + k, const_cast<std::int16_t*>(row.bsum_k) + 8 * k);
            detail::q8_k_bsum16(row.qs_k + 256 * k, const_cast<std::int16_t*>(row.bsum16_k) + 16 * k);
            k_amax = 0.0f;
        }
#else
#if defined(__AVX512F__)
        const __m512 v0 = s::load(xb), v1 = s::load(xb + 16);
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        const float d = amax / 127.0f;
        const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v0, id))));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v1, id))));
#else
        float amax = 0.0f;
        for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(s::to_float(xb[i])));
        const float d = amax / 127.0f;
        const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (int i = 0; i < 32; ++i) q[i] = detail::round_to_int8(s::to_float(xb[i]) * id);
#endif
        int sum = 0;
        for (int l = 0; l < 8; ++l) {
            const int ls = q[4 * l] + q[4 * l + 1] + q[4 * l + 2] + q[4 * l + 3];
            neg8[8 * b + l] = -8 * ls;
            lane_d[8 * b + l] = d;
            sum += ls;
        }
        dsum[b] = d * static_cast<float>(sum);
#endif
    }
#if !defined(NEXTTOK_INT8_ZMM)
    if (n_ % 256 == 0)  // the per-256 quantization for q2_k, q3_k and iq4_xs (detail/q8_k_act.hpp)
        for (std::int64_t k = 0; k < n_ / 256; ++k) {
            auto* qs_k = const_cast<std::int8_t*>(row.qs_k) + 256 * k;
            detail::quantize_q8_k_scalar(x + 256 * k, qs_k, const_cast<float*>(row.d_k) + k,
                                         const_cast<std::int16_t*>(row.bsum_k) + 8 * k);
            detail::q8_k_bsum16(qs_k, const_cast<std::int16_t*>(row.bsum16_k) + 16 * k);
        }
#endif
    // Zero padding: a kernel may load a whole pair of blocks where the row has one left.
    std::fill(qs + n_, qs + 64 * lines(n_), std::int8_t{0});
    std::fill(neg8 + n_ / 4, neg8 + 16 * lines(n_), 0);
    std::fill(lane_d + n_ / 4, lane_d + 16 * lines(n_), 0.0f);
    std::fill(dsum + nb, dsum + 16 * lines(n_ / 8), 0.0f);
#if defined(NEXTTOK_INT8_ZMM)
    {  // the rest of the last quad, and of the arrays' last lines
        const std::int64_t n4 = (n_ + 127) / 128 * 128;
        for (std::int64_t b = nb; b < n4 / 32; ++b) {
            const std::int64_t k = b / 4, i = b % 4;
            std::memset(qs4 + 128 * k + 16 * i, 0, 16);
            std::memset(qs4 + 128 * k + 64 + 16 * i, 0, 16);
            for (int u = 0; u < 4; ++u) neg128_4[16 * k + 4 * i + u] = 0, lane_d4[16 * k + 4 * i + u] = 0.0f;
        }
        const std::int64_t n8 = (n_ + 255) / 256 * 256;
        for (std::int64_t b = nb; b < n8 / 32; ++b) {
            std::int8_t* q8 = qs8 + 256 * (b / 8) + 8 * (b % 8);
            for (int m = 0; m < 4; ++m) std::memset(q8 + 64 * m, 0, 8);
            neg8_8[2 * b] = neg8_8[2 * b + 1] = 0;
            lane_d8[2 * b] = lane_d8[2 * b + 1] = 0.0f;
        }
    }
#endif
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace detail {

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// Decode (one token: each weight streamed from memory once) also fetches each row's lines a short
// way ahead into L1, besides the cursor's prefetch of the next tiles into L2, so that the kernels'
// loads rarely wait on L2: near_steps steps ahead in the AVX-512 kernels (a q4_k block is a step
// in both), near_blocks blocks in the one-block steps of the AVX2 q8_0 and q4_0 kernels (figures
// at matmul.hpp's decode_tile_rows; AVX2 build, one large q8_0 matrix, 2 threads: 26.5-27.2 ->
// 29.4-30.1 GB/s; its q4_0 and q4_k kernels are bound by arithmetic here).
inline constexpr int near_steps = 4;
inline constexpr int near_blocks = 32;

// Prefetches into L1 the lines that start in [p + Ahead, p + Ahead + Bytes). A row's steps pass
// consecutive stretches, so each of its lines is requested once. (Requesting every line that a
// step's stretch touches, a third of them twice, was slower: 1.1B-shaped decode, 2 threads,
// median ms per token, q4_0 21.0-21.2 -> 20.0-20.6, q4_k 20.5-22.2 -> 20.7-21.5, q8_0 within
// noise.)
template <std::size_t Ahead, std::size_t Bytes>
inline void prefetch_near(const void* p) noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(p) + Ahead;
    simd::prefetch_lines<3>(a, a + Bytes);
}

// prefetch_near from block b of each of the NR rows, in decode tiles (NT == 1) only. Bytes == 0:
// the line that holds w[r] + b + Ahead instead, whether or not an earlier block asked for it (the
// AVX2 kernels' one-block q8_0 and q4_0 steps, where a branch on whether a line starts in the block
// measured slower: AVX2 build, one large matrix, 2 threads, q8_0 30.5-31.5 -> 29.4 GB/s, q4_0
// 22.5-23.5 -> 20.7).
template <int NR, int NT, std::size_t Ahead, std::size_t Bytes, class Block>
inline void prefetch_rows_near(const Block* const* w, std::int64_t b) noexcept {
    if constexpr (NT == 1)
        for (int r = 0; r < NR; ++r) {
            if constexpr (Bytes == 0) __builtin_prefetch(reinterpret_cast<const char*>(w[r] + b) + Ahead, 0, 3);
            else prefetch_near<Ahead, Bytes>(w[r] + b);
        }
}

#if defined(NEXTTOK_INT8_ZMM)

// The accumulators of output (r, t) live in acc[r * ld + t * acc_slot, + 16): 16 float lanes.
// Each *_range kernel adds weight blocks [b0, b1) of NR rows x NT tokens: it loads the
// accumulators, runs the blocks in ascending order and stores them back (exactly), so splitting
// the blocks into ranges (at multiples of 8 blocks) never changes a result.
template <int NR, int NT>
struct acc16 {
    __m512 v[NR][NT];
    acc16(const float* acc, std::int64_t ld) noexcept {
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) v[r][t] = _mm512_load_ps(acc + r * ld + t * simd::acc_slot);
    }
    void store(float* acc, std::int64_t ld) const noexcept {
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) _mm512_store_ps(acc + r * ld + t * simd::acc_slot, v[r][t]);
    }
};

struct byte_index {
    alignas(64) std::uint8_t bytes[64];
};

// vpermt2b indexes for four q8_0 blocks (34 bytes each, quant bytes from byte 2): bytes 16 i ..
// 16 i + 15 take the first 16 quant bytes of block i from (the quad's bytes [0, 64), [64, 128));
// the second 16 from (its bytes [8, 72), [72, 136)).
inline constexpr byte_index q8_0_quad_low = [] {
    byte_index ix{};
    for (int j = 0; j < 64; ++j) ix.bytes[j] = static_cast<std::uint8_t>(34 * (j / 16) + 2 + j % 16);
    return ix;
}();
inline constexpr byte_index q8_0_quad_high = [] {
    byte_index ix{};
    for (int j = 0; j < 64; ++j) ix.bytes[j] = static_cast<std::uint8_t>(34 * (j / 16) + 18 + j % 16 - 8);
    return ix;
}();

inline __m512i load_index(const byte_index& ix) noexcept { return _mm512_load_si512(ix.bytes); }

// A mask of the first max(0, min(64, n)) bytes.
inline __mmask64 first_bytes(std::int64_t n) noexcept {
    return n >= 64 ? ~__mmask64{0} : n <= 0 ? __mmask64{0} : (__mmask64{1} << n) - 1;
}

// Calls step(r, b, s0, sX, s8, sX8) for rows r < NR and groups of K blocks from b0 to b1: the 64
// bytes of row r from the group's byte 0, X, 8 and X + 8. A last group of fewer than K blocks
// (only at the end of a row) is read with masks, never past the row; bytes past it are zero.
// Near: prefetch_near each row's group near_steps groups ahead (decode).
template <int NR, int K, int X, bool Near, class Block, class Step>
inline void for_each_group(const Block* const* w, std::int64_t b0, std::int64_t b1, simd::prefetch_cursor& pf,
                           Step&& step) noexcept {
    std::int64_t b = b0;
    for (; b + K <= b1; b += K) {
        pf.advance(NR * K * sizeof(Block));
        NEXTTOK_UNROLL
        for (int r = 0; r < NR; ++r) {
            const char* p = reinterpret_cast<const char*>(w[r] + b);
            if constexpr (Near) prefetch_near<near_steps * K * sizeof(Block), K * sizeof(Block)>(p);
            step(r, b, _mm512_loadu_si512(p), _mm512_loadu_si512(p + X), _mm512_loadu_si512(p + 8),
                 _mm512_loadu_si512(p + X + 8));
        }
    }
    if (b < b1) {
        const std::int64_t n = static_cast<std::int64_t>(sizeof(Block)) * (b1 - b);
        for (int r = 0; r < NR; ++r) {
            const char* p = reinterpret_cast<const char*>(w[r] + b);
            step(r, b, _mm512_maskz_loadu_epi8(first_bytes(n), p), _mm512_maskz_loadu_epi8(first_bytes(n - X), p + X),
                 _mm512_maskz_loadu_epi8(first_bytes(n - 8), p + 8),
                 _mm512_maskz_loadu_epi8(first_bytes(n - X - 8), p + X + 8));
        }
    }
}

// Four q8_0 blocks (136 bytes) per step, against the activations' quad grouping
// (q8_act_row::qs4): the first halves of the four blocks' quant bytes by one two-source byte
// permutation of the quad's bytes [0, 128), the second halves by one of [8, 136), the four scales
// by one word permutation. A last group of 1-3 blocks (only at the end of a row) is read with
// masks, never past the row. Signed weights: w + 128 is unsigned, and sum (w + 128) x - 128 sum x
// takes its correction from the activations' lane sums (q8_act_row::neg128_4).
template <int NR, int NT>
inline void qdot_range(const block_q8_0* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc16<NR, NT> a(acc, ld);
    const __m512i pick_lo = load_index(q8_0_quad_low), pick_hi = load_index(q8_0_quad_high);
    const __m512i dpick = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 51, 51, 51, 51, 34, 34, 34, 34,
                                           17, 17, 17, 17, 0, 0, 0, 0);
    const __m512i bias = _mm512_set1_epi8(-128);
    // s0, s64, s8, s72: the quad's bytes from 0, 64, 8 and 72.
    auto step = [&](int r, std::int64_t b, __m512i s0, __m512i s64, __m512i s8, __m512i s72) {
        const __m512i lo = _mm512_xor_si512(_mm512_permutex2var_epi8(s0, pick_lo, s64), bias);
        const __m512i hi = _mm512_xor_si512(_mm512_permutex2var_epi8(s8, pick_hi, s72), bias);
        const __m512 wd = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutex2var_epi16(s0, dpick, s64)));
        NEXTTOK_UNROLL
        for (int t = 0; t < NT; ++t) {
            const q8_act_row& xr = *x[t];
            const std::int8_t* xq = xr.qs4 + 32 * b;
            __m512i sum = _mm512_load_si512(xr.neg128_4 + 4 * b);  // the correction: -128 * lane sum
            sum = _mm512_dpbusd_epi32(sum, lo, _mm512_load_si512(xq));
            sum = _mm512_dpbusd_epi32(sum, hi, _mm512_load_si512(xq + 64));
            const __m512 scale = _mm512_mul_ps(wd, _mm512_load_ps(xr.lane_d4 + 4 * b));
            a.v[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), scale, a.v[r][t]);
        }
    };
    for_each_group<NR, 4, 64, NT == 1>(w, b0, b1, pf, step);
    a.store(acc, ld);
}

// vpermt2b index for eight q4_0 blocks (144 bytes, quant bytes from byte 2): over (the octet's
// bytes [0, 64), [72, 136)), byte 8k + j takes quant byte j of block k; over ([8, 72), [80, 144)),
// quant byte 8 + j. Both are the same index: block k's byte sits at 18 (k % 4) + 2 + j of the
// first source (k < 4) or of the second.
inline constexpr byte_index q4_0_octet_bytes = [] {
    byte_index ix{};
    for (int i = 0; i < 64; ++i) ix.bytes[i] = static_cast<std::uint8_t>(18 * (i / 8 % 4) + 2 + i % 8 + (i >= 32 ? 64 : 0));
    return ix;
}();

// The high nibble of every byte, by one affine transformation over GF(2): result bit i is
// source bit i + 4 (i < 4), other bits zero.
inline __m512i high_nibbles(__m512i v) noexcept {
#if defined(__GFNI__)
    return _mm512_gf2p8affine_epi64_epi8(v, _mm512_set1_epi64(0x1020408000000000), 0);
#else
    return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0f));
#endif
}

// Eight q4_0 blocks (144 bytes) per step: the first 8 and the last 8 quant bytes of each block
// gathered by one two-source byte permutation each, so that a lane of 4 bytes stays in one block
// through all four integer dot products (low and high nibbles of both) and the float work (scale,
// convert, multiply-add) is done once per 8 blocks. The 8 scales come by one two-source word
// permutation. A last group of 1-7 blocks (only at the end of a row) is read with masks, never
// past the row, and meets the activations' zero padding.
template <int NR, int NT>
inline void qdot_range(const block_q4_0* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc16<NR, NT> a(acc, ld);
    const __m512i pick = load_index(q4_0_octet_bytes);
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    // Lane l: block l / 2's scale, at word 9 (k % 4) of the first source (k < 4) or of the second.
    const __m512i dpick = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 59, 59, 50, 50, 41, 41, 32, 32,
                                           27, 27, 18, 18, 9, 9, 0, 0);
    // s0, s72, s8, s80: the octet's bytes from 0, 72, 8 and 80.
    auto step = [&](int r, std::int64_t b, __m512i s0, __m512i s72, __m512i s8, __m512i s80) {
        const __m512i first = _mm512_permutex2var_epi8(s0, pick, s72), last = _mm512_permutex2var_epi8(s8, pick, s80);
        const __m512i q[4] = {_mm512_and_si512(first, low4), high_nibbles(first), _mm512_and_si512(last, low4),
                              high_nibbles(last)};
        const __m512 wd = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutex2var_epi16(s0, dpick, s72)));
        NEXTTOK_UNROLL
        for (int t = 0; t < NT; ++t) {
            const q8_act_row& xr = *x[t];
            const std::int8_t* xq = xr.qs8 + 32 * b;
            // sum (nibble - 8) x = sum nibble x - 8 sum x
            __m512i sum = _mm512_load_si512(xr.neg8_8 + 2 * b);
            for (int m = 0; m < 4; ++m) sum = _mm512_dpbusd_epi32(sum, q[m], _mm512_load_si512(xq + 64 * m));
            const __m512 scale = _mm512_mul_ps(wd, _mm512_load_ps(xr.lane_d8 + 2 * b));
            a.v[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), scale, a.v[r][t]);
        }
    };
    for_each_group<NR, 8, 72, NT == 1>(w, b0, b1, pf, step);
    a.store(acc, ld);
}

// vpermb indexes of a q4_k step's scales: step i multiplies sub-blocks (0, 2), (1, 3), (4, 6) or
// (5, 7), so its words 0-15 take scale byte a, words 16-31 scale byte b (the odd bytes are masked).
struct byte_indexes4 {
    byte_index ix[4];
};
inline constexpr byte_indexes4 q4_k_scale_pick = [] {
    constexpr int pairs[4][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7}};
    byte_indexes4 p{};
    for (int i = 0; i < 4; ++i)
        for (int w = 0; w < 32; ++w) p.ix[i].bytes[2 * w] = static_cast<std::uint8_t>(pairs[i][w / 16]);
    return p;
}();

// The 6-bit scales and minimums of q4_k blocks a and b (ggml's get_scale_min_k4), a's in the low
// 128 bits and b's in the high, each as bytes: scales 0-3, 4-7, minimums 0-3, 4-7. With a block's
// scale bytes as words u0, u1, u2, scales 0-3 are u0 & 0x3f.., minimums 0-3 u1 & 0x3f.., scales 4-7
// (u2 & 0x0f..) | ((u0 >> 2) & 0x30..), minimums 4-7 ((u2 >> 4) & 0x0f..) | ((u1 >> 2) & 0x30..).
// The 16-byte loads end in the blocks' first quant bytes. (Two rows' blocks at once rather than
// one in 128 bits: 1.1B-shaped decode products, 2 threads, median ms per token 1.2% shorter,
// measured with both codes in one process, token by token in turn.)
inline __m256i q4_k_scales_mins(const block_q4_k& a, const block_q4_k& b) noexcept {
    const __m256i u = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a.scales))),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)), 1);
    const __m256i lo = _mm256_and_si256(u, _mm256_set1_epi32(0x3f3f3f3f));
    const __m256i u2 =
        _mm256_srlv_epi32(_mm256_shuffle_epi32(u, _MM_SHUFFLE(2, 2, 2, 2)), _mm256_set_epi32(0, 0, 4, 0, 0, 0, 4, 0));
    const __m256i hi = _mm256_or_si256(_mm256_and_si256(u2, _mm256_set1_epi32(0x0f0f0f0f)),
                                       _mm256_and_si256(_mm256_srli_epi32(u, 2), _mm256_set1_epi32(0x30303030)));
    return _mm256_unpacklo_epi32(lo, hi);
}

// A q4_k block against the activations' per-256 quantization (q8_act_row::qs_k, d_k, bsum_k), as
// llama.cpp's q4_K x q8_K: sub-block j is d sc_j q - dmin m_j, so the block's dot is
// xd (d sum_j sc_j sum(q xq) - dmin sum_j m_j bsum_j), both sums exact in int32. Sub-blocks go
// two per step: unsigned nibbles times signed activations summed in pairs (16 bits, at most
// 2 x 15 x 127), then times the sub-blocks' scales and summed in pairs into one int32 vector
// (vpdpwssd) over the whole block, so the float work is one conversion and one multiply-add per
// block and row. (Per-32 activation scales, four conversions and multiply-adds a block, were
// slower: 1.1B-shaped decode products, 2 threads, median ms per token 2% longer, measured with
// both codes in one process, token by token in turn.)
// The minimum terms of two rows go together in 256 bits (row r in lanes 0-3, row r + 1 in 4-7)
// into their own accumulator, which is subtracted from lanes 0-3 of the rows' accumulators after
// each block whose index is 7 mod 8 and at the end of the range. Ranges split only there (at
// multiples of 8 blocks), so every tile shape and range split adds the same numbers in the same
// order. (Against the minimums added into each row's accumulator every block: 14 instructions
// fewer a block and two rows, every weight product of a 1.1B token 0.979-0.983 of the time, 2
// threads, three runs, median ratio with both codes in one process, token by token in turn.)
template <int NR, int NT>
inline void qdot_range(const block_q4_k* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc16<NR, NT> a(acc, ld);
    constexpr int NP = (NR + 1) / 2;  // row pairs (the last may hold one row twice)
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const __m512i scale_pick[4] = {load_index(q4_k_scale_pick.ix[0]), load_index(q4_k_scale_pick.ix[1]),
                                   load_index(q4_k_scale_pick.ix[2]), load_index(q4_k_scale_pick.ix[3])};
    // Bytes 8-15 of each 128-bit lane (a row's minimums, from q4_k_scales_mins) as words.
    const __m256i mins_words = _mm256_set_epi8(-1, 15, -1, 14, -1, 13, -1, 12, -1, 11, -1, 10, -1, 9, -1, 8, -1, 15, -1, 14,
                                               -1, 13, -1, 12, -1, 11, -1, 10, -1, 9, -1, 8);
    const __m256i dmin_pick = _mm256_set_epi32(3, 3, 3, 3, 1, 1, 1, 1);  // dmin xd of row r, r + 1
    const __m512i d_second = _mm512_set1_epi32(2);                         // d xd of row r + 1
    for (std::int64_t c0 = b0, c1; c0 < b1; c0 = c1) {  // chunks ending at multiples of 8 blocks
        c1 = std::min(b1, (c0 / 8 + 1) * 8);
        __m256 macc[NP][NT];
        for (int p = 0; p < NP; ++p)
            for (int t = 0; t < NT; ++t) macc[p][t] = _mm256_setzero_ps();
        for (std::int64_t b = c0; b < c1; ++b) {
            pf.advance(NR * sizeof(block_q4_k));
            NEXTTOK_UNROLL
            for (int p = 0; p < NP; ++p) {
                const int r = 2 * p, r1 = std::min(r + 1, NR - 1);
                const block_q4_k& wa = w[r][b];
                const block_q4_k& wb1 = w[r1][b];
                const __m256i both = q4_k_scales_mins(wa, wb1);
                std::uint32_t da, db;
                std::memcpy(&da, &wa.d, 4);
                std::memcpy(&db, &wb1.d, 4);
                // d, dmin of row r, then of row r + 1 (lanes 4-7 zero)
                const __m256 dm = _mm256_cvtph_ps(_mm_insert_epi32(_mm_cvtsi32_si128(static_cast<int>(da)), static_cast<int>(db), 1));
                const __m256i m16 = _mm256_shuffle_epi8(both, mins_words);
                NEXTTOK_UNROLL
                for (int h = 0; h < 2; ++h) {
                    if (r + h >= NR) break;
                    const block_q4_k& wb = w[r + h][b];
                    if constexpr (NT == 1) prefetch_near<near_steps * sizeof(block_q4_k), sizeof(block_q4_k)>(&wb);
                    const __m128i sm8 = h == 0 ? _mm256_castsi256_si128(both) : _mm256_extracti128_si256(both, 1);
                    __m512i sc[4];  // step i's scales as words
                    for (int i = 0; i < 4; ++i)
                        sc[i] = _mm512_maskz_permutexvar_epi8(0x5555555555555555, scale_pick[i], _mm512_castsi128_si512(sm8));
                    __m512i q[4];
                    for (int k = 0; k < 2; ++k) {  // qs bytes [64k, 64k + 64): sub-blocks 4k .. 4k + 3
                        const __m512i raw = _mm512_loadu_si512(wb.qs + 64 * k);
                        q[2 * k] = _mm512_and_si512(raw, low4);  // sub-blocks 4k, 4k + 2
                        q[2 * k + 1] = high_nibbles(raw);        // sub-blocks 4k + 1, 4k + 3
                    }
                    NEXTTOK_UNROLL
                    for (int t = 0; t < NT; ++t) {
                        const q8_act_row& xr = *x[t];
                        __m512i sum = _mm512_setzero_si512();
                        for (int i = 0; i < 4; ++i) {
                            const __m512i xq = _mm512_load_si512(xr.qs_k + 256 * b + 64 * i);
                            sum = _mm512_dpwssd_epi32(sum, _mm512_maddubs_epi16(q[i], xq), sc[i]);
                        }
                        const __m256 dk = _mm256_mul_ps(dm, _mm256_set1_ps(xr.d_k[b]));
                        if (h == 0) {  // both rows' minimum terms
                            const __m256i bs =
                                _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xr.bsum_k + 8 * b)));
                            const __m256 mins = _mm256_cvtepi32_ps(_mm256_madd_epi16(m16, bs));
                            macc[p][t] = _mm256_fmadd_ps(mins, _mm256_permutexvar_ps(dmin_pick, dk), macc[p][t]);
                        }
                        const __m512 dx = h == 0 ? _mm512_broadcastss_ps(_mm256_castps256_ps128(dk))
                                                 : _mm512_permutexvar_ps(d_second, _mm512_castps256_ps512(dk));
                        a.v[r + h][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), dx, a.v[r + h][t]);
                    }
                }
            }
        }
        NEXTTOK_UNROLL
        for (int p = 0; p < NP; ++p)
            for (int t = 0; t < NT; ++t) {
                a.v[2 * p][t] = _mm512_mask_sub_ps(a.v[2 * p][t], 0x000f, a.v[2 * p][t], _mm512_castps256_ps512(macc[p][t]));
                if (2 * p + 1 < NR)
                    a.v[2 * p + 1][t] = _mm512_mask_sub_ps(a.v[2 * p + 1][t], 0x000f, a.v[2 * p + 1][t],
                                                           _mm512_castps128_ps512(_mm256_extractf128_ps(macc[p][t], 1)));
            }
    }
    a.store(acc, ld);
}

inline float qdot_result(const float* slot) noexcept { return _mm512_reduce_add_ps(_mm512_load_ps(slot)); }

#elif defined(__AVX2__) && defined(__FMA__)

// c + sum over each group of 4 bytes of u (unsigned) * v (signed), in 8 int32 lanes.
inline __m256i dpbusd(__m256i c, __m256i u, __m256i v) noexcept {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpbusd_epi32(c, u, v);
#elif defined(__AVXVNNI__)
    return _mm256_dpbusd_avx_epi32(c, u, v);
#else
    // u <= 128 here (|q8_0| or a nibble), so the 16-bit pair sums cannot saturate.
    return _mm256_add_epi32(c, _mm256_madd_epi16(_mm256_maddubs_epi16(u, v), _mm256_set1_epi16(1)));
#endif
}

inline float reduce8(__m256 v) noexcept {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline __m256i load32(const void* p) noexcept { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// The 32 nibbles of 16 bytes as bytes: low nibbles first (elements 0..15), then high (16..31).
inline __m256i unpack_nibbles(const std::uint8_t* p) noexcept {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(q, 4), q);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0f));
}

// A half-precision scale in all 8 float lanes.
inline __m256 broadcast_half(const packed_half& h) noexcept {
    std::int16_t bits;
    std::memcpy(&bits, h.bytes, 2);
    return _mm256_cvtph_ps(_mm_set1_epi16(bits));
}

// The accumulators of output (r, t) live in acc[r * ld + t * acc_slot, + 9): 8 float lanes and,
// for q4_k, the scalar sum of the minimum terms at [8]. Each *_range kernel adds weight blocks
// [b0, b1) of NR rows x NT tokens: it loads the accumulators, runs the blocks in ascending order
// and stores them back (exactly), so splitting the blocks into ranges never changes a result.
inline constexpr int min_lane = 8;

template <int NR, int NT>
struct acc8 {
    __m256 v[NR][NT];
    acc8(const float* acc, std::int64_t ld) noexcept {
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) v[r][t] = _mm256_load_ps(acc + r * ld + t * simd::acc_slot);
    }
    void store(float* acc, std::int64_t ld) const noexcept {
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) _mm256_store_ps(acc + r * ld + t * simd::acc_slot, v[r][t]);
    }
};

template <int NR, int NT>
inline void qdot_range(const block_q8_0* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc8<NR, NT> a(acc, ld);
    for (std::int64_t b = b0; b < b1; ++b) {
        pf.advance(NR * sizeof(block_q8_0));
        prefetch_rows_near<NR, NT, near_blocks * sizeof(block_q8_0), 0>(w, b);
        __m256i wq[NR], wc[NR];
        __m256 wd[NR];
        for (int r = 0; r < NR; ++r) {
            wq[r] = load32(w[r][b].qs);
#if defined(__AVX512VNNI__) || defined(__AVXVNNI__)
            // x + 128 is unsigned: sum (x + 128) w - 128 sum w, the correction computed once per row.
            wc[r] = _mm256_sub_epi32(_mm256_setzero_si256(), dpbusd(_mm256_setzero_si256(), _mm256_set1_epi8(-128), wq[r]));
#else
            wc[r] = _mm256_abs_epi8(wq[r]);  // |w| as unsigned, the sign moves to x (maddubs would saturate x + 128)
#endif
            wd[r] = broadcast_half(w[r][b].d);
        }
        for (int t = 0; t < NT; ++t) {
            const __m256i xq = load32(x[t]->qs + 32 * b);
            const __m256 xd = _mm256_set1_ps(x[t]->lane_d[8 * b]);
#if defined(__AVX512VNNI__) || defined(__AVXVNNI__)
            const __m256i xu = _mm256_xor_si256(xq, _mm256_set1_epi8(-128));
#endif
            for (int r = 0; r < NR; ++r) {
#if defined(__AVX512VNNI__) || defined(__AVXVNNI__)
                const __m256i p = dpbusd(wc[r], xu, wq[r]);
#else
                const __m256i p = dpbusd(_mm256_setzero_si256(), wc[r], _mm256_sign_epi8(xq, wq[r]));
#endif
                a.v[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(wd[r], xd), a.v[r][t]);
            }
        }
    }
    a.store(acc, ld);
}

template <int NR, int NT>
inline void qdot_range(const block_q4_0* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc8<NR, NT> a(acc, ld);
    for (std::int64_t b = b0; b < b1; ++b) {
        pf.advance(NR * sizeof(block_q4_0));
        prefetch_rows_near<NR, NT, near_blocks * sizeof(block_q4_0), 0>(w, b);
        __m256i wq[NR];
        __m256 wd[NR];
        for (int r = 0; r < NR; ++r) {
            wq[r] = unpack_nibbles(w[r][b].qs);
            wd[r] = broadcast_half(w[r][b].d);
        }
        for (int t = 0; t < NT; ++t) {
            const __m256i xq = load32(x[t]->qs + 32 * b);
            const __m256i c = load32(x[t]->neg8 + 8 * b);  // sum (nibble - 8) x = sum nibble x - 8 sum x
            const __m256 xd = _mm256_set1_ps(x[t]->lane_d[8 * b]);
            for (int r = 0; r < NR; ++r) {
                const __m256i p = dpbusd(c, wq[r], xq);
                a.v[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(wd[r], xd), a.v[r][t]);
            }
        }
    }
    a.store(acc, ld);
}

// A q4_k block spans 8 activation blocks: sub-block j is d sc_j q - dmin m_j, so its dot is
// d sc_j xd_j sum(q xq) - dmin m_j xd_j sum(xq); the second terms are summed in a scalar.
template <int NR, int NT>
inline void qdot_range(const block_q4_k* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc8<NR, NT> a(acc, ld);
    float mins[NR][NT];
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) mins[r][t] = acc[r * ld + t * simd::acc_slot + min_lane];
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (std::int64_t b = b0; b < b1; ++b) {
        pf.advance(NR * sizeof(block_q4_k));
        prefetch_rows_near<NR, NT, near_steps * sizeof(block_q4_k), sizeof(block_q4_k)>(w, b);
        k_sub_scales k[NR];
        for (int r = 0; r < NR; ++r) k[r] = unpack_k_sub_scales(w[r][b].scales, w[r][b].d.to_float(), w[r][b].dmin.to_float());
        for (int i = 0; i < 4; ++i) {
            __m256i lo[NR], hi[NR];
            for (int r = 0; r < NR; ++r) {
                const __m256i q = load32(w[r][b].qs + 32 * i);
                lo[r] = _mm256_and_si256(q, low4);
                hi[r] = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
            }
            for (int t = 0; t < NT; ++t) {
                const std::int64_t j0 = 8 * b + 2 * i;  // activation blocks j0, j0 + 1
                const __m256i xq0 = load32(x[t]->qs + 32 * j0), xq1 = load32(x[t]->qs + 32 * (j0 + 1));
                const float xd0 = x[t]->lane_d[8 * j0], xd1 = x[t]->lane_d[8 * (j0 + 1)];
                for (int r = 0; r < NR; ++r) {
                    const __m256i p0 = dpbusd(_mm256_setzero_si256(), lo[r], xq0);
                    const __m256i p1 = dpbusd(_mm256_setzero_si256(), hi[r], xq1);
                    a.v[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(k[r].scale[2 * i] * xd0), a.v[r][t]);
                    a.v[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p1), _mm256_set1_ps(k[r].scale[2 * i + 1] * xd1), a.v[r][t]);
                    // Explicit fused multiply-adds: left to the compiler, contraction could differ between tiles.
                    mins[r][t] = std::fma(k[r].min[2 * i], x[t]->dsum[j0], mins[r][t]);
                    mins[r][t] = std::fma(k[r].min[2 * i + 1], x[t]->dsum[j0 + 1], mins[r][t]);
                }
            }
        }
    }
    a.store(acc, ld);
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) acc[r * ld + t * simd::acc_slot + min_lane] = mins[r][t];
}

inline float qdot_result(const float* slot) noexcept { return reduce8(_mm256_load_ps(slot)) - slot[min_lane]; }

#else  // portable: the same sums in scalar code (a different, equally fixed, float order)

inline constexpr int min_lane = 8;

inline int block_int_dot(const block_q8_0& w, const std::int8_t* x) noexcept {
    int s = 0;
    for (int i = 0; i < 32; ++i) s += w.qs[i] * x[i];
    return s;
}

inline int block_int_dot(const block_q4_0& w, const std::int8_t* x) noexcept {
    int s = 0;
    for (int i = 0; i < 16; ++i) s += ((w.qs[i] & 0x0f) - 8) * x[i] + ((w.qs[i] >> 4) - 8) * x[i + 16];
    return s;
}

// Accumulators of (r, t): the sum at slot[0], the q4_k minimum terms at slot[min_lane].
template <int NR, int NT, class Block>
inline void qdot_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1, float* acc,
                       std::int64_t ld, simd::prefetch_cursor) noexcept {
    for (int r = 0; r < NR; ++r) {
        for (int t = 0; t < NT; ++t) {
            float* slot = acc + r * ld + t * simd::acc_slot;
            float sum = slot[0], mins = slot[min_lane];
            const q8_act_row& xr = *x[t];
            for (std::int64_t b = b0; b < b1; ++b) {
                const Block& wb = w[r][b];
                if constexpr (std::is_same_v<Block, block_q4_k>) {
                    const k_sub_scales k = unpack_k_sub_scales(wb.scales, wb.d.to_float(), wb.dmin.to_float());
                    for (int j = 0; j < 8; ++j) {
                        const std::int64_t xb = 8 * b + j;
                        const std::uint8_t* q = wb.qs + 32 * (j / 2);
                        int s = 0;
                        for (int l = 0; l < 32; ++l) s += ((j % 2 == 0) ? (q[l] & 0x0f) : (q[l] >> 4)) * xr.qs[32 * xb + l];
                        sum += static_cast<float>(s) * (k.scale[j] * xr.lane_d[8 * xb]);
                        mins += k.min[j] * xr.dsum[xb];
                    }
                } else {
                    sum += static_cast<float>(block_int_dot(wb, xr.qs + 32 * b)) * (wb.d.to_float() * xr.lane_d[8 * b]);
                }
            }
            slot[0] = sum;
            slot[min_lane] = mins;
        }
    }
}

inline float qdot_result(const float* slot) noexcept { return slot[0] - slot[min_lane]; }

#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace detail

}  // namespace nexttok

// The kernels of q2_k, q3_k and iq4_xs (their own files; declared before qdot_block_range below,
// whose qualified call detail::qdot_range sees the overloads declared up to here).
#include <nexttok/kernels/detail/k_quant_qdot.hpp>
// And of q4_1, q5_0, q5_1 and iq4_nl, with their own accumulator layout (qdot_block_finish).
#include <nexttok/kernels/detail/legacy_qdot.hpp>

namespace nexttok {

// Adds weight blocks [b0, b1) of NR rows (each row's blocks at w[r]) times NT quantized
// activation rows into the accumulators acc (output (r, t) at acc[r * ld + t * acc_slot], 64-byte
// aligned, zero before the first range). A range boundary other than b1 must be a multiple of 8
// blocks (the q4_0 kernel's step). `pf` as in dot_block_range.
template <int NR, int NT, class Block>
    requires has_int8_kernel<Block>
inline void qdot_block_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                             float* acc, std::int64_t ld, detail::simd::prefetch_cursor pf = {}) noexcept {
    detail::qdot_range<NR, NT>(w, x, b0, b1, acc, ld, pf);
}

// out[r * NT + t] = the dot product those accumulators hold (of Block weights).
template <int NR, int NT, class Block = void>
inline void qdot_block_finish(const float* acc, std::int64_t ld, float* out) noexcept {
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) {
            const float* slot = acc + r * ld + t * detail::simd::acc_slot;
            if constexpr (is_legacy_int8_block<Block>) out[r * NT + t] = detail::legacy_qdot_result(slot);
            else if constexpr (is_k_quant_int8_block<Block>) out[r * NT + t] = detail::k_quant_qdot_result(slot);
            else out[r * NT + t] = detail::qdot_result(slot);
        }
}

// out[r * NT + t] = sum_i w[r][i] * x[t] element i: NR weight rows of n / Block::block_size
// blocks times NT quantized activation rows of n elements, over all blocks at once.
template <int NR, int NT, class Block>
    requires has_int8_kernel<Block>
inline void qdot_block(const Block* const* w, const q8_act_row* const* x, std::int64_t n, float* out,
                       detail::simd::prefetch_cursor pf = {}) noexcept {
    alignas(64) float acc[NR * NT * detail::simd::acc_slot] = {};
    qdot_block_range<NR, NT>(w, x, 0, n / Block::block_size, acc, NT * detail::simd::acc_slot, pf);
    qdot_block_finish<NR, NT, Block>(acc, NT * detail::simd::acc_slot, out);
}

}  // namespace nexttok

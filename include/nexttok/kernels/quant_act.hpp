// Integer dot products for quantized weights, as llama.cpp computes them: the activation row is
// quantized once per matmul to 8 bits per block of 32 (q8_activations), and each weight block is
// multiplied with it in int32 (AVX-512 VNNI, AVX-VNNI vpdpbusd, AVX2 maddubs, or scalar), then
// scaled in float. A q4_0 block is half the bytes of its float dequantization work, which is what
// lets decode run at the memory-bandwidth limit.
//
// The kernels of each instruction set have their own file (detail/isa.hpp names them): with
// AVX-512 (detail/quant_act_avx512.hpp) a step covers four q8_0 blocks, eight q4_0 blocks or a
// q4_k block, against activations grouped to match and, for q4_k, quantized once more by 256
// elements (llama.cpp's q8_K); with AVX2 (detail/quant_act_avx2.hpp) one block per 256-bit
// instruction; the portable code (detail/quant_act_portable.hpp) one value at a time. This file
// holds what they share: the activation rows, their quantization block by block, and the entry
// points qdot_block_range, qdot_block_finish and qdot_block.
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
#pragma once

#include <nexttok/detail/isa.hpp>
#include <nexttok/kernels/detail/q8_k_act.hpp>
#include <nexttok/kernels/detail/simd.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace nexttok {

// One activation row of n elements (n % 32 == 0) quantized to 8 bits per block of 32: element i
// ~= lane_scales[i / 4] * qs[i]. Arrays rather than blocks, so that a SIMD load of any width takes
// consecutive blocks. Each array is padded with zeros to a multiple of 64 bytes. The arrays belong
// to the q8_activations that made the row: its quantize() writes them, the kernels only read.
struct q8_act_row {
    std::int8_t* qs;            // [n]
    std::int32_t* minus8_sums;  // [n / 4]: -8 * (qs[4l] + ... + qs[4l + 3]), q4_0's "- 8" folded into the int dot
    float* lane_scales;         // [n / 4]: the scale d of the block of lane l (block l / 8)
    float* dsum;                // [n / 32]: d * (sum of the block's qs), q4_k's minimum term
    // Only where the kernels use them (q8_act_row::grouped, the AVX-512 kernels), the same values
    // grouped for q8_0 weights, by quads of 4 blocks (128 elements, padded with zeros to whole
    // quads): in quad k, quad_qs[128k + 16i + j] = element 32(4k + i) + j and
    // quad_qs[128k + 64 + 16i + j] = element 32(4k + i) + 16 + j (i < 4, j < 16), the order in
    // which the q8_0 kernel gathers the first and last 16 quant bytes of 4 blocks. Lane l of quad k
    // covers bytes 4l..4l+3 of both halves.
    std::int8_t* quad_qs;              // [n]
    std::int32_t* quad_minus128_sums;  // [n / 8]: -128 * (sum of the lane's 8 values)
    float* quad_lane_scales;           // [n / 8]: the scale d of the lane's block (block 4k + l / 4)
    // and for 256-element weights (n % 256 == 0 only, else unset: q4_k with AVX-512; q2_k, q3_k and
    // iq4_xs with every instruction set), quantized anew by 256 elements, one scale each
    // (llama.cpp's q8_K): element i ~= q8k_scales[i / 256] * (its value in q8k_qs), where q8k_qs
    // holds each 256 elements' blocks of 32 in the order 0, 2, 1, 3, 4, 6, 5, 7, the order of a
    // q4_k block's low and high nibbles. q8k_block_sums[j]: the sum of block j's values (element
    // order); q8k_sums16[i]: of elements 16 i .. 16 i + 15 (detail/q8_k_act.hpp).
    std::int8_t* q8k_qs;           // [n]
    float* q8k_scales;             // [n / 256]
    std::int16_t* q8k_block_sums;  // [n / 32]
    std::int16_t* q8k_sums16;      // [n / 16]
    // and grouped for q4_0 weights by octets of 8 blocks (256 elements, padded with zeros to whole
    // octets): octet o holds four 64-byte parts, octet_qs[256o + 64m + 8k + j] = element
    // 32(8o + k) + {0, 16, 8, 24}[m] + j (k, j < 8): the low and high nibbles of the first 8
    // quant bytes of the 8 blocks, then of their last 8. Lane l of octet o (bytes 4l..4l+3 of
    // each part) covers 16 elements of block 8o + l / 2.
    std::int8_t* octet_qs;            // [n]
    std::int32_t* octet_minus8_sums;  // [n / 16]: -8 * (sum of the lane's 16 values)
    float* octet_lane_scales;         // [n / 16]: the scale d of the lane's block (block 8o + l / 2)

#if defined(NEXTTOK_KERNELS_INT8_AVX512)
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
        row_lines_ = 4 * full + quarter + lines(n / 64) + lines(n / 16) + lines(n / 8) + 2 * quads + octets +
                     2 * lines(octets * 64 / 4);
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
            r.qs = reinterpret_cast<std::int8_t*>(take(full));
            r.minus8_sums = reinterpret_cast<std::int32_t*>(take(full));
            r.lane_scales = reinterpret_cast<float*>(take(full));
            r.dsum = reinterpret_cast<float*>(take(quarter));
            r.quad_qs = reinterpret_cast<std::int8_t*>(take(quads));
            r.quad_minus128_sums = reinterpret_cast<std::int32_t*>(take(quads));
            r.quad_lane_scales = reinterpret_cast<float*>(r.quad_minus128_sums + (quads * 64) / 8);
            r.q8k_qs = reinterpret_cast<std::int8_t*>(take(full));
            r.q8k_scales = reinterpret_cast<float*>(take(lines(n / 64)));
            r.q8k_block_sums = reinterpret_cast<std::int16_t*>(take(lines(n / 16)));
            r.q8k_sums16 = reinterpret_cast<std::int16_t*>(take(lines(n / 8)));
            r.octet_qs = reinterpret_cast<std::int8_t*>(take(octets));
            r.octet_minus8_sums = reinterpret_cast<std::int32_t*>(take(lines(octets * 64 / 4)));
            r.octet_lane_scales = reinterpret_cast<float*>(take(lines(octets * 64 / 4)));
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

namespace detail {

NEXTTOK_INTRINSICS_BEGIN

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
            if constexpr (Bytes == 0)
                __builtin_prefetch(reinterpret_cast<const char*>(w[r] + b) + Ahead, 0, 3);
            else
                prefetch_near<Ahead, Bytes>(w[r] + b);
        }
}

// Block x[0, 32) quantized into q[0, 32): q = round-to-nearest-even(x * 127 / amax). Returns amax,
// the block's largest magnitude (the scale is amax / 127).
template <class X>
inline float quantize_block32(const X* x, std::int8_t* q) noexcept {
    namespace s = simd;
#if defined(NEXTTOK_KERNELS_AVX512)
    const __m512 v0 = s::load(x), v1 = s::load(x + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
    const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v0, id))));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16),
                     _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v1, id))));
#else
    float amax = 0.0f;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(s::to_float(x[i])));
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    for (int i = 0; i < 32; ++i) q[i] = round_to_int8(s::to_float(x[i]) * id);
#endif
    return amax;
}

// The row's arrays from x[0, n) block by block, without the AVX-512 groupings (the AVX2 and
// portable kernels' quantize_act_row), and the per-256 quantization when n % 256 == 0.
template <class X>
inline void quantize_act_row_by_blocks(const q8_act_row& row, const X* x, std::int64_t n) noexcept {
    for (std::int64_t b = 0; b < n / 32; ++b) {
        std::int8_t* q = row.qs + b * 32;
        const float d = quantize_block32(x + b * 32, q) / 127.0f;
        int sum = 0;
        for (int l = 0; l < 8; ++l) {
            const int lane_sum = q[4 * l] + q[4 * l + 1] + q[4 * l + 2] + q[4 * l + 3];
            row.minus8_sums[8 * b + l] = -8 * lane_sum;
            row.lane_scales[8 * b + l] = d;
            sum += lane_sum;
        }
        row.dsum[b] = d * static_cast<float>(sum);
    }
    if (n % 256 == 0)  // for q2_k, q3_k and iq4_xs (detail/q8_k_act.hpp)
        for (std::int64_t k = 0; k < n / 256; ++k) {
            quantize_q8_k_scalar(x + 256 * k, row.q8k_qs + 256 * k, row.q8k_scales + k, row.q8k_block_sums + 8 * k);
            q8_k_bsum16(row.q8k_qs + 256 * k, row.q8k_sums16 + 16 * k);
        }
}

NEXTTOK_INTRINSICS_END

}  // namespace detail

}  // namespace nexttok

// Each instruction set's kernels (detail::qdot_range for q8_0, q4_0 and q4_k, qdot_result) and its
// detail::quantize_act_row; only the file of this build's instruction set has content.
#include <nexttok/kernels/detail/quant_act_avx2.hpp>
#include <nexttok/kernels/detail/quant_act_avx512.hpp>
#include <nexttok/kernels/detail/quant_act_portable.hpp>
// The kernels of q2_k, q3_k and iq4_xs (their own files; declared before qdot_block_range below,
// whose qualified call detail::qdot_range sees the overloads declared up to here).
#include <nexttok/kernels/detail/k_quant_qdot.hpp>
// And of q4_1, q5_0, q5_1 and iq4_nl, with their own accumulator layout (qdot_block_finish).
#include <nexttok/kernels/detail/legacy_qdot.hpp>

namespace nexttok {

template <class X>
void q8_activations::quantize(std::int64_t t, const X* x) noexcept {
    const q8_act_row& row = rows_[static_cast<std::size_t>(t)];
    detail::quantize_act_row(row, x, n_);
    // Zero padding: a kernel may load a whole pair of blocks where the row has one left.
    std::fill(row.qs + n_, row.qs + 64 * lines(n_), std::int8_t{0});
    std::fill(row.minus8_sums + n_ / 4, row.minus8_sums + 16 * lines(n_), 0);
    std::fill(row.lane_scales + n_ / 4, row.lane_scales + 16 * lines(n_), 0.0f);
    std::fill(row.dsum + n_ / 32, row.dsum + 16 * lines(n_ / 8), 0.0f);
}

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
            if constexpr (is_legacy_int8_block<Block>)
                out[r * NT + t] = detail::legacy_qdot_result(slot);
            else if constexpr (is_k_quant_int8_block<Block>)
                out[r * NT + t] = detail::k_quant_qdot_result(slot);
            else
                out[r * NT + t] = detail::qdot_result(slot);
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

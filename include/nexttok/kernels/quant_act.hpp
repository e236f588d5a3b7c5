// Integer dot products for quantized weights, as llama.cpp computes them: the activation row is
// quantized once per matmul to 8 bits per block of 32 (q8_activations), and each weight block is
// multiplied with it in int32 (AVX-512 VNNI, AVX-VNNI vpdpbusd, AVX2 maddubs, or scalar), then
// scaled in float. A q4_0 block is half the bytes of its float dequantization work, which is what
// lets decode run at the memory-bandwidth limit.
//
// The kernels of each instruction set have their own file (detail/isa.hpp names them): with
// AVX-512 (detail/quant_act_avx512.hpp) a step covers four q8_0 blocks, eight q4_0 blocks or a
// q4_k block, against activations grouped to match; with AVX2 (detail/quant_act_avx2.hpp) two
// q8_0 blocks, four q4_0 blocks (against the same groupings) or a q4_k block in two halves;
// the portable code (detail/quant_act_portable.hpp) goes lane by lane. q4_k reads the
// activations quantized once more by 256 elements (llama.cpp's q8_K) on every set. The q8_0 and
// q4_0 matrices of a model are repacked one lane per block (tensor/repacked_blocks.hpp), whose
// kernels (detail/repacked_qdot.hpp) take 16 blocks a step on every set. This file
// holds what they share: the activation rows, their quantization block by block, and the entry
// points qdot_block_range, qdot_block_finish and qdot_block.
//
// Accuracy: activations are rounded to 8 bits per 32 (relative error about 1/254 of the block's
// largest value), or per 256 for q4_k weights, which is llama.cpp's own error for each type; the
// reference-logit tolerance for quantized files (data/README.md, 3e-2) holds with it.
//
// One float order on every instruction set, so that the AVX-512, AVX2 and portable kernels give
// bitwise the same outputs. The accumulators of output (r, t) are the 16 floats of its slot,
// acc[0, 16), starting at +0; integer sums are exact in int32; blocks go in ascending order; the
// output is the 16 lanes reduced by the fixed tree of qdot_result (detail/q8_k_act.hpp).
//   q8_0: lane 4 (b % 4) + q takes block b's quarter q, s = the sum of w_e xq_e over elements
//     4q .. 4q + 3 and 16 + 4q .. 16 + 4q + 3: acc = fma(float(s), d * dx, acc), d the block's
//     scale and dx its activation block's (d * dx rounded once).
//   q4_0: the order of detail/legacy_qdot.hpp (lane 2 (b % 8) + h, the block's half h) with
//     levels q - 8.
//   q4_k: lane k (0..15) takes the products of bytes 64 i + 4 k .. + 3 of the block's q8k_qs for
//     the four steps i, with nibble i % 2 of qs bytes 64 (i / 2) + 32 (k / 8) + 4 (k % 8) .. + 3
//     at their sub-block's 6-bit scale sc ({0, 1, 4, 5}[i] for k < 8, {2, 3, 6, 7}[i] above):
//     L_k = sum sc q xq, acc[k] = fma(float(L_k), d * dx, acc[k]) with dx = q8k_scales[b]. The
//     minimums go into 4 lanes of their own, M_j = m_2j bsum_2j + m_2j+1 bsum_2j+1 (q8k_block_sums),
//     macc[j] = fma(float(M_j), dmin * dx, macc[j]); after every block whose index is 7 mod 8 and
//     at the end of a range, acc[j] = acc[j] - macc[j] for j < 4 and macc restarts at +0.
//   repacked q8_0 and q4_0 (tensor/repacked_blocks.hpp, detail/repacked_qdot.hpp): lane b % 16
//     takes block b whole: s = the sum of its 32 products w_e xq_e (q4_0: levels q - 8),
//     acc = fma(float(s), d * dx, acc) with d * dx rounded once.
// A block past the row's end (a partial group) has zero weights, scales and activations, and
// fma(0, 0, acc) == acc. A range boundary other than its end is a multiple of 8 blocks (16 for
// repacked rows).
//
// Determinism: an output's value depends only on its weight row, its activation row and n. So any
// tile shape (NR rows x NT tokens), thread count, batch or instruction set gives bitwise the same
// outputs, and quantization is a pure function of one row.
#if !defined(NEXTTOK_KERNEL_PASS)
#include <nexttok/kernels/detail/passes.hpp>
#else

#include <nexttok/detail/isa.hpp>
#include <nexttok/tensor/quant_blocks.hpp>
#include <nexttok/tensor/repacked_blocks.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace nexttok::NEXTTOK_KERNEL_PASS {

// Whether this set's quantization also writes q8_act_row's grouped arrays (the AVX-512 and AVX2
// kernels of q8_0 and q4_0).
#if defined(NEXTTOK_KERNELS_INT8_AVX512) || defined(NEXTTOK_KERNELS_INT8_AVX2)
inline constexpr bool q8_act_grouped = true;
#else
inline constexpr bool q8_act_grouped = false;
#endif

// Weight block types that have an integer kernel here; others (q5_k, q6_k) use quant_dot.hpp.
template <class W>
inline constexpr bool has_int8_kernel =
    std::is_same_v<W, block_q8_0> || std::is_same_v<W, block_q4_0> || std::is_same_v<W, block_q4_k> ||
    is_k_quant_int8_block<W> || is_legacy_int8_block<W> || repacked_block<W>;

namespace kernel_detail {

NEXTTOK_INTRINSICS_BEGIN

// Decode (one token: each weight streamed from memory once) also fetches each row's lines a short
// way ahead into L1, besides the cursor's prefetch of the next tiles, so that the kernels'
// loads rarely wait on L2: near_steps steps ahead in the AVX-512 kernels (a q4_k block is a step
// in both; q8_0 and q4_0 also in tiles of up to 4 tokens), near_blocks blocks in the AVX2 q8_0, q4_0 and legacy kernels (figures at matmul.hpp's
// decode_tile_rows, measured with the earlier one-block AVX2 kernels; AVX2 build, one large q8_0
// matrix, 2 threads: 26.5-27.2 -> 29.4-30.1 GB/s; its q4_0 and q4_k kernels were bound by
// arithmetic there).
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
// AVX2 legacy kernels; with the earlier one-block AVX2 q8_0 and q4_0 steps, a branch on whether a
// line starts in the block measured slower: AVX2 build, one large matrix, 2 threads, q8_0
// 30.5-31.5 -> 29.4 GB/s, q4_0 22.5-23.5 -> 20.7).
template <int NR, int NT, std::size_t Ahead, std::size_t Bytes, class Block>
inline void prefetch_rows_near(const Block* const* w, std::int64_t b) noexcept {
    if constexpr (NT == 1)
        for (int r = 0; r < NR; ++r) {
            if constexpr (Bytes == 0)
                simd::prefetch_l1(reinterpret_cast<std::uintptr_t>(w[r] + b) + Ahead);
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

// Block b's values q[0, 32), scale d and value sum into the row's one-lane-per-block arrays (r16_*).
inline void store_r16_block(const q8_act_row& row, std::int64_t b, const std::int8_t* q, float d, int sum) noexcept {
    std::int8_t* lane = row.r16_qs + 512 * (b / 16) + 4 * (b % 16);
    for (int j = 0; j < 8; ++j) std::memcpy(lane + 64 * j, q + 4 * j, 4);
    row.r16_minus128_sums[b] = -128 * sum;
    row.r16_minus8_sums[b] = -8 * sum;
    row.r16_scales[b] = d;
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
        store_r16_block(row, b, q, d, sum);
    }
    if (n % 256 == 0)  // for q4_k, q2_k, q3_k and iq4_xs (detail/q8_k_act.hpp)
        for (std::int64_t k = 0; k < n / 256; ++k) {
            quantize_q8_k_scalar(x + 256 * k, row.q8k_qs + 256 * k, row.q8k_scales + k, row.q8k_block_sums + 8 * k);
            q8_k_bsum16(row.q8k_qs + 256 * k, row.q8k_sums16 + 16 * k);
        }
}

// q4_k's lanes (the order in this file's header): the sub-block whose scale step i of a block
// applies in lanes 0-7 ([0][i]) and in lanes 8-15 ([1][i]).
inline constexpr int q4_k_step_sub_blocks[2][4] = {{0, 1, 4, 5}, {2, 3, 6, 7}};

NEXTTOK_INTRINSICS_END

}  // namespace kernel_detail

}  // namespace nexttok::NEXTTOK_KERNEL_PASS

// Each instruction set's kernels (kernel_detail::qdot_range for q8_0, q4_0 and q4_k) and its
// kernel_detail::quantize_act_row; only the file of this build's instruction set has content.
#include <nexttok/kernels/detail/quant_act_avx2.hpp>
#include <nexttok/kernels/detail/quant_act_avx512.hpp>
#include <nexttok/kernels/detail/quant_act_portable.hpp>
// The kernels of q2_k, q3_k and iq4_xs (their own files; declared before qdot_block_range below,
// whose qualified call kernel_detail::qdot_range sees the overloads declared up to here).
#include <nexttok/kernels/detail/k_quant_qdot.hpp>
// And of repacked q8_0 and q4_0 rows.
#include <nexttok/kernels/detail/repacked_qdot.hpp>
// And of q4_1, q5_0, q5_1 and iq4_nl (and q4_0's portable kernel).
#include <nexttok/kernels/detail/legacy_qdot.hpp>

namespace nexttok::NEXTTOK_KERNEL_PASS {

namespace kernel_detail {

// Row t of `act` := x[0, act.cols()) quantized by this set's kernels, its padding zeroed.
template <class X>
inline void quantize_activations(const q8_activations& act, std::int64_t t, const X* x) noexcept {
    quantize_act_row(act.row(t), x, act.cols());
    act.zero_padding(t);
}

}  // namespace kernel_detail

// Adds weight blocks [b0, b1) of NR rows (each row's blocks at w[r]) times NT quantized
// activation rows into the accumulators acc (output (r, t) at acc[r * ld + t * acc_slot], 64-byte
// aligned, zero before the first range). A range boundary other than b1 must be a multiple of 8
// blocks (the q4_0 kernel's step; 16 for repacked rows). `pf` as in dot_block_range.
template <int NR, int NT, class Block>
requires has_int8_kernel<Block>
inline void qdot_block_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                             float* acc, std::int64_t ld, kernel_detail::simd::prefetch_cursor pf = {}) noexcept {
    kernel_detail::qdot_range<NR, NT>(w, x, b0, b1, acc, ld, pf);
}

// out[r * NT + t] = the dot product those accumulators hold (the 16 lanes of any int8 kernel).
template <int NR, int NT>
inline void qdot_block_finish(const float* acc, std::int64_t ld, float* out) noexcept {
#if defined(NEXTTOK_KERNELS_AVX512)
    namespace s = kernel_detail::simd;
    s::reduce_slots<NR * NT>([&](int k) { return acc + k / NT * ld + k % NT * s::acc_slot; }, out);
#else
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) {
            const float* slot = acc + r * ld + t * kernel_detail::simd::acc_slot;
            out[r * NT + t] = kernel_detail::qdot_result(slot);
        }
#endif
}

// out[r * NT + t] = sum_i w[r][i] * x[t] element i: NR weight rows of n / Block::block_size
// blocks times NT quantized activation rows of n elements, over all blocks at once.
template <int NR, int NT, class Block>
requires has_int8_kernel<Block>
inline void qdot_block(const Block* const* w, const q8_act_row* const* x, std::int64_t n, float* out,
                       kernel_detail::simd::prefetch_cursor pf = {}) noexcept {
    alignas(64) float acc[NR * NT * kernel_detail::simd::acc_slot] = {};
    qdot_block_range<NR, NT>(w, x, 0, n / Block::block_size, acc, NT * kernel_detail::simd::acc_slot, pf);
    qdot_block_finish<NR, NT>(acc, NT * kernel_detail::simd::acc_slot, out);
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS

#endif  // NEXTTOK_KERNEL_PASS

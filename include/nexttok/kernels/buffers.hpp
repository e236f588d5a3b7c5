// The types the kernels share with their callers, the same whichever instruction set runs the
// kernels (kernels/detail/passes.hpp): quantized activation rows and matmul's scratch, attention's
// shape, rows and scratch, and a q8_0 row read as floats. They hold data and no kernel code, so
// that a decoder sizes its scratch once and any of the compiled kernel sets can use it.
#pragma once

#include <nexttok/detail/aligned_buffer.hpp>
#include <nexttok/detail/config.hpp>
#include <nexttok/tensor/quant_blocks.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nexttok {

// A type of one element of a dense vector: weights, activations and cache entries.
template <class T>
concept dense_element = std::same_as<T, float> || std::same_as<T, Eigen::half> || std::same_as<T, Eigen::bfloat16>;

// One activation row of n elements (n % 32 == 0) quantized to 8 bits per block of 32: element i
// ~= lane_scales[i / 4] * qs[i]. Arrays rather than blocks, so that a SIMD load of any width takes
// consecutive blocks. Each array is padded with zeros to a multiple of 64 bytes. The arrays belong
// to the q8_activations that made the row: its quantize() writes them, the kernels only read.
struct q8_act_row {
    std::int8_t* qs;            // [n]
    std::int32_t* minus8_sums;  // [n / 4]: -8 * (qs[4l] + ... + qs[4l + 3]), q4_0's "- 8" folded into the int dot
    float* lane_scales;         // [n / 4]: the scale d of the block of lane l (block l / 8)
    float* dsum;                // [n / 32]: d * (sum of the block's qs), q4_k's minimum term
    // Only where the kernels use them (q8_act_grouped: the AVX-512 and AVX2 kernels), the same values
    // grouped for q8_0 weights, by quads of 4 blocks (128 elements, padded with zeros to whole
    // quads): in quad k, quad_qs[128k + 16i + j] = element 32(4k + i) + j and
    // quad_qs[128k + 64 + 16i + j] = element 32(4k + i) + 16 + j (i < 4, j < 16), the order in
    // which the q8_0 kernel gathers the first and last 16 quant bytes of 4 blocks. Lane l of quad k
    // covers bytes 4l..4l+3 of both halves.
    std::int8_t* quad_qs;              // [n]
    std::int32_t* quad_minus128_sums;  // [n / 8]: -128 * (sum of the lane's 8 values)
    float* quad_lane_scales;           // [n / 8]: the scale d of the lane's block (block 4k + l / 4)
    // and for 256-element weights (n % 256 == 0 only, else unset: q4_k, q2_k, q3_k and iq4_xs with
    // every instruction set), quantized anew by 256 elements, one scale each
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
    // and, with every instruction set, one lane per block for repacked q8_0 and q4_0 weights
    // (tensor/repacked_blocks.hpp), by groups of 16 blocks (512 elements, padded with zero blocks
    // to whole groups): r16_qs[512 g + 64 j + 4 l + k] = element 32 (16 g + l) + 4 j + k (j < 8,
    // k < 4), so that chunk j of a group meets chunk j of a repacked q8_0 group, and chunks j and
    // j + 4 the low and high nibbles of chunk j of a q4_0 group; per block b (padding zero):
    std::int8_t* r16_qs;              // [n rounded up to 512]
    std::int32_t* r16_minus128_sums;  // -128 * (the sum of the block's 32 values)
    std::int32_t* r16_minus8_sums;    // -8 * (that sum)
    float* r16_scales;                // the block's scale d
};

// One activation rounded to bfloat16 for a product with bfloat16 weights (dot.hpp, bf16_block):
// the bits of the bfloat16 that vcvtneps2bf16 gives, round_to_bf16 below.
struct bf16_act {
    std::uint16_t bits;
};

// x rounded to bfloat16 as vcvtneps2bf16 rounds it: to nearest, ties to even; subnormal inputs
// become a zero of their sign; NaN stays a (quiet) NaN; floats above the largest bfloat16 become
// infinity.
constexpr bf16_act round_to_bf16(float x) noexcept {
    std::uint32_t u = std::bit_cast<std::uint32_t>(x);
    if ((u & 0x7f800000u) == 0) u &= 0x80000000u;
    if ((u & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((u >> 16) | 0x40u)};
    return {static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
}

// Quantized activation rows, owning their storage (64-byte aligned). Sized by resize(), which
// keeps the allocation when it can: a decoder sizes it once outside the token loop.
class q8_activations {
public:
    NEXTTOK_DECL void resize(std::int64_t n_tokens, std::int64_t n);

    // Row t := x[0, n) quantized: d = amax / 127, q = round-to-nearest-even(x / d), by the kernels
    // this translation unit is compiled for (matmul quantizes by the kernels it dispatches to; the
    // rows are the same bits either way: quant_act.hpp).
    template <class X>
    void quantize(std::int64_t t, const X* x) noexcept;
    // Zeros row t's padding past n: a kernel may load a whole pair of blocks where the row has one
    // left. After each quantization of the row.
    void zero_padding(std::int64_t t) const noexcept {
        const q8_act_row& r = rows_[static_cast<std::size_t>(t)];
        std::fill(r.qs + n_, r.qs + 64 * lines(n_), std::int8_t{0});
        std::fill(r.minus8_sums + n_ / 4, r.minus8_sums + 16 * lines(n_), 0);
        std::fill(r.lane_scales + n_ / 4, r.lane_scales + 16 * lines(n_), 0.0f);
        std::fill(r.dsum + n_ / 32, r.dsum + 16 * lines(n_ / 8), 0.0f);
        for (std::int64_t b = n_ / 32; b < (n_ + 511) / 512 * 16; ++b) {
            for (int j = 0; j < 8; ++j)
                std::fill_n(r.r16_qs + 512 * (b / 16) + 64 * j + 4 * (b % 16), 4, std::int8_t{0});
            r.r16_minus128_sums[b] = r.r16_minus8_sums[b] = 0;
            r.r16_scales[b] = 0.0f;
        }
    }
    std::int64_t cols() const noexcept { return n_; }

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

// Scratch of matmul: the activation rows quantized to 8 bits, or packed as float for dense weights
// (with one packed block of weight rows per thread). Owned by one caller (a decoder), sized by
// reserve() outside the token loop; not thread-safe.
class matmul_workspace {
public:
    NEXTTOK_DECL void reserve(std::int64_t n_tokens, std::int64_t cols);
    NEXTTOK_DECL q8_activations& activations(std::int64_t n_tokens, std::int64_t cols);
    // n_tokens activation rows of `cols` packed as float (matmul's prefill of dense weights).
    NEXTTOK_DECL float* packed_tokens(std::int64_t n_tokens, std::int64_t cols);
    // n_tokens activation rows of `cols` rounded to bfloat16 (matmul of bfloat16 weights), row t at
    // + t * cols. Grows on the first call of a size, then keeps its storage.
    NEXTTOK_DECL bf16_act* rounded_tokens(std::int64_t n_tokens, std::int64_t cols);
    // Thread `thread`'s block of `floats` packed weights, for threads [0, n_threads).
    NEXTTOK_DECL float* packed_rows(int thread, int n_threads, std::int64_t floats);

private:
    template <class T>
    static void grow(detail::aligned_vector<T>& v, std::int64_t elements) {
        if (v.size() < static_cast<std::size_t>(elements)) v.resize(static_cast<std::size_t>(elements));
    }
    std::int64_t reserved_tokens_ = 0, reserved_cols_ = 0;
    q8_activations act_;
    detail::aligned_vector<float> packed_tokens_;
    detail::aligned_vector<bf16_act> rounded_;
    std::vector<detail::aligned_vector<float>> packed_rows_;  // (threads)
};

// One product of a matmul_group: y[t * ldy + r] = dot(W row r, x row t). Non-owning.
struct matmul_target {
    const tensor_view* w;
    float* y;
    std::int64_t ldy;
};

// The cached rows one query row attends to: key[t] and value[t] point to the start of position t's
// key and value rows (all heads), for t < n_pos. Row is the cache's element type: float,
// Eigen::half, Eigen::bfloat16 or block_q8_0. The tables belong to the caller (a decoder builds one
// per sequence and layer, which the query rows of that sequence share).
template <class Row>
struct attention_rows {
    const Row* const* key = nullptr;
    const Row* const* value = nullptr;
    std::int64_t n_pos = 0;
};

// Grouped-query attention's shape: query head h reads key/value head h / (n_heads / n_kv_heads).
struct attention_shape {
    std::int64_t n_heads = 0, n_kv_heads = 0, head_dim = 0;
    float scale = 1.0f;  // on the scores, 1 / sqrt(head_dim)
};

// The scratch of causal_attention, per thread: scores and outputs of the query heads of one
// key/value head. reserve() once outside the token loop; causal_attention allocates nothing.
class attention_workspace {
public:
    NEXTTOK_DECL void reserve(const attention_shape& s, int n_threads, std::int64_t max_positions);
    std::int64_t positions() const noexcept { return positions_; }
    // Thread t's scores: head k of its task at [k * positions(), + n_pos).
    float* scores(int t) noexcept { return scores_.data() + static_cast<std::size_t>(t * group_ * positions_); }
    // Thread t's outputs: head k of its task at [k * head_dim, + head_dim).
    float* outputs(int t) noexcept { return outputs_.data() + static_cast<std::size_t>(t * group_ * head_dim_); }

private:
    std::int64_t group_ = 0, positions_ = 0, head_dim_ = 0;
    std::vector<float> scores_;   // (n_threads, query heads per key head, max_positions)
    std::vector<float> outputs_;  // (n_threads, query heads per key head, head_dim)
};

// A row of q8_0 blocks read as float elements (q8_0_rows.hpp).
struct q8_0_row {
    const block_q8_0* blocks = nullptr;  // the row's first block
    std::int64_t offset = 0;             // elements before this view's element 0

    q8_0_row operator+(std::int64_t j) const noexcept { return {blocks, offset + j}; }
    float operator[](std::int64_t j) const noexcept {
        const std::int64_t i = offset + j;
        const block_q8_0& b = blocks[i / block_q8_0::block_size];
        return static_cast<float>(b.qs[i % block_q8_0::block_size]) * b.d.to_float();
    }
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/kernels/impl/buffers.ipp>
#endif

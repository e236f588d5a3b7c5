// Quantized weight blocks with ggml's exact byte layouts (GGUF stores them as they are), and their
// dequantization to float. A row of n weights is n / block_size consecutive blocks; the structs are
// 1-byte aligned, so a pointer to blocks can be formed at any address of a mapped file.
//
// Layouts (element e of a block, value in float):
//   q8_0 (34 bytes / 32):  d, qs[32] int8                   w = d * qs[e]
//   q4_0 (18 bytes / 32):  d, qs[16] nibbles                w = d * (nibble - 8); e < 16 low nibble
//                                                            of qs[e], e >= 16 high nibble of qs[e - 16]
//   q4_k (144 bytes / 256): d, dmin, scales[12], qs[128]    8 sub-blocks of 32 with 6-bit scale sc_j and
//                                                            min m_j: w = (d * sc_j) * q - (dmin * m_j);
//                                                            q = nibble of qs[32 * (j / 2) + e % 32],
//                                                            low for even j, high for odd j
//   q5_k (176 bytes / 256): d, dmin, scales[12], qh[32], qs[128]
//                                                            as q4_k, q += 16 * bit j of qh[e % 32]
//   q6_k (210 bytes / 256): ql[128], qh[64], scales[16] int8, d
//                                                            16 sub-blocks of 16: w = (d * scales[e / 16]) * (q - 32),
//                                                            q 6 bits: half h = e / 128, quarter k = e % 128 / 32,
//                                                            l = e % 32: low 4 bits from ql[64h + 32(k % 2) + l]
//                                                            (low nibble for k < 2, high for k >= 2), high 2 bits
//                                                            are bits 2k, 2k+1 of qh[32h + l]
// The 12 bytes of k-quant scales hold eight 6-bit scales and eight 6-bit mins: for j < 4, scale j
// is bits 0-5 of byte j and min j bits 0-5 of byte j + 4; for j >= 4, the low 4 bits of scale j
// and of min j are the low and high nibble of byte j + 4, their top 2 bits are bits 6-7 of bytes
// j - 4 and j.
//
// Exactness: d and dmin are half precision (11 significant bits) and scales have at most 8 bits,
// so every product d * sc * q above is exact in float; only the subtraction of the min in q4_k
// and q5_k rounds, once. The results are therefore the same floats as ggml's dequantize_row_*,
// whatever the evaluation order or FMA contraction.
#pragma once

#include <nexttok/io/tensor_type.hpp>
#include <nexttok/kernels/detail/simd.hpp>

#include <Eigen/Core>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace nexttok {

// A half-precision value as ggml stores it in blocks: IEEE binary16, little-endian. Bytes rather
// than a uint16_t keep every block 1-byte aligned.
struct packed_half {
    std::uint8_t bytes[2];

    float to_float() const noexcept {
        std::uint16_t bits;
        std::memcpy(&bits, bytes, 2);
        return detail::simd::half_bits_to_float(bits);
    }
    // Rounds to nearest even, as ggml's GGML_FP32_TO_FP16.
    static packed_half from_float(float v) noexcept {
        const Eigen::half h(v);
        packed_half p;
        std::memcpy(p.bytes, &h, 2);
        return p;
    }
};

struct block_q8_0 {
    static constexpr int block_size = 32;
    static constexpr tensor_type type = tensor_type::q8_0;
    packed_half d;
    std::int8_t qs[32];
};

struct block_q4_0 {
    static constexpr int block_size = 32;
    static constexpr tensor_type type = tensor_type::q4_0;
    packed_half d;
    std::uint8_t qs[16];
};

struct block_q4_k {
    static constexpr int block_size = 256;
    static constexpr tensor_type type = tensor_type::q4_k;
    packed_half d;
    packed_half dmin;
    std::uint8_t scales[12];
    std::uint8_t qs[128];
};

struct block_q5_k {
    static constexpr int block_size = 256;
    static constexpr tensor_type type = tensor_type::q5_k;
    packed_half d;
    packed_half dmin;
    std::uint8_t scales[12];
    std::uint8_t qh[32];
    std::uint8_t qs[128];
};

struct block_q6_k {
    static constexpr int block_size = 256;
    static constexpr tensor_type type = tensor_type::q6_k;
    std::uint8_t ql[128];
    std::uint8_t qh[64];
    std::int8_t scales[16];
    packed_half d;
};

static_assert(sizeof(packed_half) == 2 && alignof(packed_half) == 1);
static_assert(sizeof(block_q8_0) == 34 && alignof(block_q8_0) == 1);
static_assert(sizeof(block_q4_0) == 18 && alignof(block_q4_0) == 1);
static_assert(sizeof(block_q4_k) == 144 && alignof(block_q4_k) == 1);
static_assert(sizeof(block_q5_k) == 176 && alignof(block_q5_k) == 1);
static_assert(sizeof(block_q6_k) == 210 && alignof(block_q6_k) == 1);
static_assert(offsetof(block_q4_k, qs) == 16 && offsetof(block_q5_k, qh) == 16 && offsetof(block_q5_k, qs) == 48);
static_assert(offsetof(block_q6_k, qh) == 128 && offsetof(block_q6_k, scales) == 192 && offsetof(block_q6_k, d) == 208);

// One of the block structs above: a storage type of weights that kernels read in place.
template <class T>
concept quant_block = std::is_trivially_copyable_v<T> && std::is_standard_layout_v<T> && requires {
    { T::block_size } -> std::convertible_to<int>;
    { T::type } -> std::convertible_to<tensor_type>;
};

namespace detail {

struct k_scale_min {
    int scale;  // 0..63
    int min;    // 0..63
};

// Scale and min of sub-block j (0..7) from the 12 packed bytes of a q4_k / q5_k block.
inline k_scale_min unpack_k_scale_min(const std::uint8_t* s, int j) noexcept {
    if (j < 4) return {s[j] & 63, s[j + 4] & 63};
    return {(s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4), (s[j + 4] >> 4) | ((s[j] >> 6) << 4)};
}

// The eight (d * scale_j, dmin * min_j) of a q4_k / q5_k block, exact in float.
struct k_sub_scales {
    float scale[8];
    float min[8];
};

inline k_sub_scales unpack_k_sub_scales(const std::uint8_t* s, float d, float dmin) noexcept {
    k_sub_scales r;
    for (int j = 0; j < 4; ++j) {  // both halves at once, without the branch of unpack_k_scale_min
        r.scale[j] = d * static_cast<float>(s[j] & 63);
        r.min[j] = dmin * static_cast<float>(s[j + 4] & 63);
        r.scale[j + 4] = d * static_cast<float>((s[j + 8] & 0x0f) | ((s[j] >> 6) << 4));
        r.min[j + 4] = dmin * static_cast<float>((s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4));
    }
    return r;
}

}  // namespace detail

// y[0, block_size) = the block's weights. The loops step by the SIMD width with compile-time
// bounds; each load of quant bytes serves every output chunk that takes bits from it.
inline void dequantize_block(const block_q8_0& b, float* y) noexcept {
    namespace s = detail::simd;
    const s::vec d = s::set1(b.d.to_float());
    for (int e = 0; e < 32; e += s::width) s::store(y + e, s::mul(s::to_vec(s::load_i8(b.qs + e)), d));
}

inline void dequantize_block(const block_q4_0& b, float* y) noexcept {
    namespace s = detail::simd;
    const s::vec d = s::set1(b.d.to_float());
    for (int e = 0; e < 16; e += s::width) {
        const s::ivec q = s::load_u8(b.qs + e);
        s::store(y + e, s::mul(s::to_vec(s::add_i(s::and_i(q, 0x0f), -8)), d));
        s::store(y + 16 + e, s::mul(s::to_vec(s::add_i(s::shift_right_i(q, 4), -8)), d));
    }
}

// Sub-blocks 2i and 2i + 1 (32 weights each) take the low and high nibbles of qs[32i, 32i + 32).
inline void dequantize_block(const block_q4_k& b, float* y) noexcept {
    namespace s = detail::simd;
    const detail::k_sub_scales k = detail::unpack_k_sub_scales(b.scales, b.d.to_float(), b.dmin.to_float());
    for (int i = 0; i < 4; ++i) {
        const s::vec scale0 = s::set1(k.scale[2 * i]), min0 = s::set1(k.min[2 * i]);
        const s::vec scale1 = s::set1(k.scale[2 * i + 1]), min1 = s::set1(k.min[2 * i + 1]);
        for (int l = 0; l < 32; l += s::width) {
            const s::ivec q = s::load_u8(b.qs + 32 * i + l);
            s::store(y + 64 * i + l, s::sub(s::mul(s::to_vec(s::and_i(q, 0x0f)), scale0), min0));
            s::store(y + 64 * i + 32 + l, s::sub(s::mul(s::to_vec(s::shift_right_i(q, 4)), scale1), min1));
        }
    }
}

// As q4_k, plus the fifth bit of weight l of sub-block j in bit j of qh[l].
inline void dequantize_block(const block_q5_k& b, float* y) noexcept {
    namespace s = detail::simd;
    const detail::k_sub_scales k = detail::unpack_k_sub_scales(b.scales, b.d.to_float(), b.dmin.to_float());
    for (int i = 0; i < 4; ++i) {
        const s::vec scale0 = s::set1(k.scale[2 * i]), min0 = s::set1(k.min[2 * i]);
        const s::vec scale1 = s::set1(k.scale[2 * i + 1]), min1 = s::set1(k.min[2 * i + 1]);
        for (int l = 0; l < 32; l += s::width) {
            const s::ivec q = s::load_u8(b.qs + 32 * i + l);
            const s::ivec h = s::shift_right_i(s::load_u8(b.qh + l), 2 * i);  // bits 2i, 2i+1 -> 0, 1
            const s::ivec q0 = s::or_i(s::and_i(q, 0x0f), s::shift_left_i(s::and_i(h, 1), 4));
            const s::ivec q1 = s::or_i(s::shift_right_i(q, 4), s::shift_left_i(s::and_i(h, 2), 3));
            s::store(y + 64 * i + l, s::sub(s::mul(s::to_vec(q0), scale0), min0));
            s::store(y + 64 * i + 32 + l, s::sub(s::mul(s::to_vec(q1), scale1), min1));
        }
    }
}

// Per half of 128: quarter k's low 4 bits are the low (k < 2) or high (k >= 2) nibbles of
// ql[32 (k % 2) + l], its high 2 bits are bits 2k, 2k + 1 of qh[l]; scale e / 16.
inline void dequantize_block(const block_q6_k& b, float* y) noexcept {
    namespace s = detail::simd;
    const float d = b.d.to_float();
    for (int h = 0; h < 2; ++h) {
        const std::uint8_t* ql = b.ql + 64 * h;
        const std::uint8_t* qh = b.qh + 32 * h;
        float* yh = y + 128 * h;
        for (int l = 0; l < 32; l += s::width) {
            const s::ivec a = s::load_u8(ql + l), c = s::load_u8(ql + 32 + l), hi = s::load_u8(qh + l);
            const s::ivec q[4] = {
                s::or_i(s::and_i(a, 0x0f), s::shift_left_i(s::and_i(hi, 0x03), 4)),
                s::or_i(s::and_i(c, 0x0f), s::shift_left_i(s::and_i(hi, 0x0c), 2)),
                s::or_i(s::shift_right_i(a, 4), s::and_i(hi, 0x30)),
                s::or_i(s::shift_right_i(c, 4), s::shift_right_i(s::and_i(hi, 0xc0), 2)),
            };
            for (int k = 0; k < 4; ++k) {
                const int e = 32 * k + l;
                const s::vec scale = s::set1(d * static_cast<float>(b.scales[8 * h + e / 16]));
                s::store(yh + e, s::mul(s::to_vec(s::add_i(q[k], -32)), scale));
            }
        }
    }
}

// y[0, n) = the weights of a row of n / Block::block_size blocks; n must be a multiple of the
// block size (the GGUF reader checks it for every tensor).
template <quant_block Block>
inline void dequantize_row(const Block* x, float* y, std::int64_t n) noexcept {
    for (std::int64_t b = 0; b < n / Block::block_size; ++b) dequantize_block(x[b], y + b * Block::block_size);
}

}  // namespace nexttok

#include <nexttok/kernels/legacy_quant_blocks.hpp>  // q4_1, q5_0, q5_1, iq4_nl
#include <nexttok/kernels/k_quant_blocks.hpp>       // q2_k, q3_k, iq4_xs

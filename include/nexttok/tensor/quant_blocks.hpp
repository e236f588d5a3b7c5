// Quantized weight blocks with ggml's exact byte layouts (GGUF stores them as they are); their
// dequantization to float is kernels/dequantize.hpp (SIMD) for the types below, and beside the
// layouts for the others (legacy_quant_blocks.hpp, k_quant_blocks.hpp: scalar). A row of n weights is n / block_size consecutive blocks; the structs are
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

#include <nexttok/detail/isa.hpp>
#include <nexttok/tensor/tensor_type.hpp>

#include <Eigen/Core>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace nexttok {

namespace detail {

// IEEE binary16 bits to float (exact): one instruction with F16C, which Eigen's scalar
// conversion does not use with every GCC configuration.
inline float half_bits_to_float(std::uint16_t bits) noexcept {
#if defined(NEXTTOK_KERNELS_F16C)
    return _cvtsh_ss(bits);
#else
    return static_cast<float>(Eigen::half(Eigen::half_impl::raw_uint16_to_half(bits)));
#endif
}

}  // namespace detail

// A half-precision value as ggml stores it in blocks: IEEE binary16, little-endian. Bytes rather
// than a uint16_t keep every block 1-byte aligned.
struct packed_half {
    std::uint8_t bytes[2];

    float to_float() const noexcept {
        std::uint16_t bits;
        std::memcpy(&bits, bytes, 2);
        return detail::half_bits_to_float(bits);
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

}  // namespace nexttok

#include <nexttok/tensor/legacy_quant_blocks.hpp>  // q4_1, q5_0, q5_1, iq4_nl
#include <nexttok/tensor/k_quant_blocks.hpp>       // q2_k, q3_k, iq4_xs

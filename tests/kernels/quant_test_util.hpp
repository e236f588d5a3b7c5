// Oracles for the quantized-block tests, written from ggml's published block layouts and
// independently of the library: half-precision decoding by bit arithmetic, per-element formulas
// (element e -> its byte, bits and scale) rather than the library's loops, values in double.
#pragma once

#include <nexttok/kernels/quant_act.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

namespace nexttok::test {

// IEEE binary16 -> double, from the bits.
inline double half_value(std::uint16_t bits) {
    const int sign = bits >> 15, exponent = (bits >> 10) & 31, mantissa = bits & 1023;
    double v = exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
    return sign ? -v : v;
}

inline packed_half half_bits(std::uint16_t bits) {
    packed_half h;
    h.bytes[0] = static_cast<std::uint8_t>(bits & 0xff);  // little-endian
    h.bytes[1] = static_cast<std::uint8_t>(bits >> 8);
    return h;
}

inline std::uint16_t bits_of(packed_half h) { return static_cast<std::uint16_t>(h.bytes[0] | (h.bytes[1] << 8)); }

// The 8-bit activation that the integer kernels multiply element i of a W row with, as d * q
// (quant_act.hpp): q4_k weights meet the per-256 quantization (q8k_qs, in the q4_k grouping of
// blocks 0, 2, 1, 3, 4, 6, 5, 7, and q8k_scales), all others the per-32 one.
struct q8_value {
    double d;
    int q;
};
template <class W>
q8_value activation_q8(const q8_act_row& x, std::int64_t i) {
    if constexpr (std::is_same_v<W, block_q4_k>) {
        constexpr int order[8] = {0, 2, 1, 3, 4, 6, 5, 7};
        return {x.q8k_scales[i / 256], x.q8k_qs[256 * (i / 256) + 32 * order[i % 256 / 32] + i % 32]};
    }
    return {x.lane_scales[i / 4], x.qs[i]};
}

// The 12 scale bytes of a q4_k / q5_k block holding 6-bit scales sc[8] and mins m[8]: j < 4 in
// bits 0-5 of bytes j (scale) and j + 4 (min); j >= 4 low 4 bits in the low (scale) and high (min)
// nibble of byte j + 4, top 2 bits in bits 6-7 of byte j - 4 (scale) and byte j (min).
inline std::array<std::uint8_t, 12> pack_k_scales(const int (&sc)[8], const int (&m)[8]) {
    std::array<std::uint8_t, 12> s{};
    for (int j = 0; j < 4; ++j) {
        s[j] = static_cast<std::uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
        s[j + 4] = static_cast<std::uint8_t>(m[j] | ((m[j + 4] >> 4) << 6));
        s[j + 8] = static_cast<std::uint8_t>((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
    }
    return s;
}

// Exact values of the weights (double), from the per-element layout formulas.
inline std::vector<double> oracle(const block_q8_0& b) {
    std::vector<double> w(32);
    for (int e = 0; e < 32; ++e) w[e] = half_value(bits_of(b.d)) * b.qs[e];
    return w;
}

inline std::vector<double> oracle(const block_q4_0& b) {
    std::vector<double> w(32);
    for (int e = 0; e < 32; ++e) {
        const int nibble = e < 16 ? (b.qs[e] & 15) : (b.qs[e - 16] >> 4);
        w[e] = half_value(bits_of(b.d)) * (nibble - 8);
    }
    return w;
}

// sc and m: the unpacked 6-bit scales and mins, given by the caller (hand-written or generated).
inline std::vector<double> oracle(const block_q4_k& b, const int (&sc)[8], const int (&m)[8]) {
    std::vector<double> w(256);
    for (int e = 0; e < 256; ++e) {
        const int j = e / 32;
        const std::uint8_t byte = b.qs[32 * (j / 2) + e % 32];
        const int q = j % 2 == 0 ? (byte & 15) : (byte >> 4);
        w[e] = half_value(bits_of(b.d)) * sc[j] * q - half_value(bits_of(b.dmin)) * m[j];
    }
    return w;
}

inline std::vector<double> oracle(const block_q5_k& b, const int (&sc)[8], const int (&m)[8]) {
    std::vector<double> w(256);
    for (int e = 0; e < 256; ++e) {
        const int j = e / 32;
        const std::uint8_t byte = b.qs[32 * (j / 2) + e % 32];
        const int q = (j % 2 == 0 ? (byte & 15) : (byte >> 4)) + 16 * ((b.qh[e % 32] >> j) & 1);
        w[e] = half_value(bits_of(b.d)) * sc[j] * q - half_value(bits_of(b.dmin)) * m[j];
    }
    return w;
}

inline std::vector<double> oracle(const block_q6_k& b) {
    std::vector<double> w(256);
    for (int e = 0; e < 256; ++e) {
        const int h = e / 128, k = e % 128 / 32, l = e % 32;
        const std::uint8_t low_byte = b.ql[64 * h + 32 * (k % 2) + l];
        const int low = k < 2 ? (low_byte & 15) : (low_byte >> 4);
        const int high = (b.qh[32 * h + l] >> (2 * k)) & 3;
        w[e] = half_value(bits_of(b.d)) * b.scales[e / 16] * (low + 16 * high - 32);
    }
    return w;
}

// Random blocks: every quant byte uniform, scales d / dmin random normal halves of moderate
// magnitude (2^-10 .. 2^1, either sign for d), k-quant scales and mins uniform 0..63.
class block_source {
public:
    explicit block_source(std::uint64_t seed) : rng_(seed) {}

    std::uint8_t byte() { return static_cast<std::uint8_t>(rng_() & 0xff); }
    std::uint16_t half(bool allow_negative = true) {
        const std::uint16_t exponent = static_cast<std::uint16_t>(5 + rng_() % 12);  // 2^-10 .. 2^1
        const std::uint16_t sign = allow_negative ? static_cast<std::uint16_t>(rng_() & 1) : 0;
        return static_cast<std::uint16_t>((sign << 15) | (exponent << 10) | (rng_() & 1023));
    }
    int six_bits() { return static_cast<int>(rng_() % 64); }
    float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }
    std::mt19937_64& engine() { return rng_; }

    template <class Block>
    void fill_bytes(Block& b) {
        std::uint8_t raw[sizeof(Block)];
        for (auto& r : raw) r = byte();
        std::memcpy(&b, raw, sizeof(Block));
    }

    block_q8_0 q8_0() {
        block_q8_0 b;
        fill_bytes(b);
        b.d = half_bits(half());
        return b;
    }
    block_q4_0 q4_0() {
        block_q4_0 b;
        fill_bytes(b);
        b.d = half_bits(half());
        return b;
    }
    // The k-quant generators also return the unpacked scales and mins they packed.
    template <class Block>
    Block k_block(int (&sc)[8], int (&m)[8]) {
        Block b;
        fill_bytes(b);
        b.d = half_bits(half());
        b.dmin = half_bits(half());
        for (int j = 0; j < 8; ++j) {
            sc[j] = six_bits();
            m[j] = six_bits();
        }
        const auto packed = pack_k_scales(sc, m);
        std::memcpy(b.scales, packed.data(), 12);
        return b;
    }
    block_q6_k q6_k() {
        block_q6_k b;
        fill_bytes(b);
        b.d = half_bits(half());
        return b;
    }

private:
    std::mt19937_64 rng_;
};

// Each of got[0..want.size()) is the float nearest want[e], bit for bit.
inline void expect_exact(const float* got, const std::vector<double>& want) {
    for (std::size_t e = 0; e < want.size(); ++e)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got[e]), std::bit_cast<std::uint32_t>(static_cast<float>(want[e])))
            << "element " << e << ": got " << got[e] << ", expected " << want[e];
}

}  // namespace nexttok::test

// Activation rows holding NaN, +-inf, values near FLT_MAX or a subnormal block maximum (whose
// 127 / amax overflows to inf): every path quantizes them without undefined behaviour (a float to
// int8 conversion out of range is; build this program with -fsanitize=undefined,float-cast-overflow
// -fno-sanitize-recover=all to see it: GCC leaves float-cast-overflow out of -fsanitize=undefined),
// keeps every quant in [-127, 127], and leaves the blocks around them exactly as their formula
// says (quantization is per block).
#include "kernel_path.hpp"

#include <nexttok/kernels/quant_act.hpp>
#include <nexttok/tensor/quantize.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace nexttok {
namespace {

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float nan = std::numeric_limits<float>::quiet_NaN();

// 256 elements (so the per-256 quantization runs too), blocks of 32:
//   0: a NaN   1: +inf   2: -inf   3: +-3e38 (finite, huge)   4: a subnormal maximum
//   5..7: ordinary values, quantized as their formula says whatever the blocks before them hold.
std::vector<float> hostile_row() {
    std::vector<float> x = test::activations(1, 256, 11);
    x[3] = nan;
    x[32 + 5] = inf;
    x[64 + 7] = -inf;
    x[96 + 1] = 3e38f;
    x[96 + 2] = -3e38f;
    for (int i = 0; i < 32; ++i) x[static_cast<std::size_t>(128 + i)] = i % 2 ? 1e-45f : 0.0f;
    return x;
}

bool finite_input_block(std::int64_t b) { return b == 3 || b >= 5; }

TEST(kernel_path, non_finite_activations_quantize_to_defined_values) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    const std::vector<float> x = hostile_row();
    q8_activations act;
    act.resize(1, 256);
    act.quantize(0, x.data());
    const q8_act_row& row = act.row(0);
    for (std::int64_t i = 0; i < 256; ++i) {
        ASSERT_GE(row.qs[i], -127) << "element " << i;
        ASSERT_GE(row.q8k_qs[i], -127) << "element " << i << " of the per-256 quantization";
    }
    // The reference is only defined for finite blocks (it converts without a clamp).
    for (std::int64_t b : {3, 5, 6, 7}) {
        const test::q8_reference ref = test::quantize_q8_reference(x.data() + 32 * b, 32);
        for (int i = 0; i < 32; ++i)
            EXPECT_EQ(row.qs[32 * b + i], ref.q[static_cast<std::size_t>(i)]) << "block " << b << " element " << i;
        EXPECT_EQ(std::bit_cast<std::uint32_t>(row.lane_scales[8 * b]), std::bit_cast<std::uint32_t>(ref.d[0]))
            << "block " << b;
        EXPECT_EQ(std::bit_cast<std::uint32_t>(row.dsum[b]), std::bit_cast<std::uint32_t>(ref.dsum[0]))
            << "block " << b;
    }
    // The huge block's extremes are the ends of the range, as for any block maximum.
    EXPECT_EQ(row.qs[96 + 1], 127);
    EXPECT_EQ(row.qs[96 + 2], -127);
}

TEST(kernel_path, non_finite_rows_quantize_to_q8_0_and_q4_0_without_undefined_behaviour) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    const std::vector<float> x = hostile_row();
    std::vector<block_q8_0> q8(8);
    std::vector<block_q4_0> q4(8);
    quantize_row_q8_0(x.data(), q8.data(), 256);
    quantize_row_q4_0(x.data(), q4.data(), 256);
    for (std::int64_t b = 0; b < 8; ++b) {
        for (int j = 0; j < 32; ++j) ASSERT_GE(q8[static_cast<std::size_t>(b)].qs[j], -127) << "block " << b;
        if (!finite_input_block(b)) continue;
        // Blocks of finite values: exactly what that block alone quantizes to.
        block_q8_0 alone8;
        block_q4_0 alone4;
        quantize_row_q8_0(x.data() + 32 * b, &alone8, 32);
        quantize_row_q4_0(x.data() + 32 * b, &alone4, 32);
        EXPECT_EQ(std::memcmp(&alone8, &q8[static_cast<std::size_t>(b)], sizeof alone8), 0) << "block " << b;
        EXPECT_EQ(std::memcmp(&alone4, &q4[static_cast<std::size_t>(b)], sizeof alone4), 0) << "block " << b;
    }
    EXPECT_EQ(q8[3].qs[1], 127);
    EXPECT_EQ(q8[3].qs[2], -127);
}

}  // namespace
}  // namespace nexttok

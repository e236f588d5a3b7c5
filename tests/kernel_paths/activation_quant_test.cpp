// The base of every kernel-path comparison: each program really compiles the kernels of its path,
// and the 8-bit activation quantization (quant_act.hpp), which all integer kernels start from, is
// bitwise its formula on every path (per block of 32: d = amax / 127, q = nearest-even(x * 127 /
// amax), dsum = d * sum q).
#include "kernel_path.hpp"

#include <nexttok/kernels/detail/simd.hpp>
#include <nexttok/kernels/quant_act.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>

namespace nexttok {
namespace {

TEST(kernel_path, program_compiles_its_path) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    // The avx512bf16 program is the avx512 one with vdpbf16ps for bfloat16 weights.
    const bool bf16 = test::kernel_path() == "avx512bf16";
    const std::string path = bf16 ? "avx512" : test::kernel_path();
    // The float kernels of the program's own set: one accumulator of 16 lanes with AVX-512, two of
    // 8 lanes with AVX2 and the portable code (which computes the AVX2 lanes one by one).
    EXPECT_EQ(kernel_detail::simd::width, path == "avx512" ? 16 : 8);
    EXPECT_EQ(kernel_detail::simd::accumulators, path == "avx512" ? 1 : 2);
    EXPECT_EQ(std::string(detail::isa::float_kernels), path);
    EXPECT_EQ(std::string(detail::isa::int8_kernels), path);
    EXPECT_EQ(q8_act_grouped, path != "portable");
#if defined(NEXTTOK_KERNELS_AVX512BF16)
    EXPECT_TRUE(bf16) << "vdpbf16ps compiled into the " << path << " program";
#else
    EXPECT_FALSE(bf16) << "the avx512bf16 program compiled without vdpbf16ps";
#endif
}

TEST(kernel_path, activation_quantization_is_its_formula) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    constexpr std::int64_t n = 3, cols = 1248;  // 39 blocks: a partial quad and octet of blocks
    const std::vector<float> x = test::activations(n, cols, 5);
    q8_activations act;
    act.resize(n, cols);
    for (std::int64_t t = 0; t < n; ++t) {
        act.quantize(t, x.data() + t * cols);
        const test::q8_reference ref = test::quantize_q8_reference(x.data() + t * cols, cols);
        const q8_act_row& row = act.row(t);
        for (std::int64_t i = 0; i < cols; ++i) ASSERT_EQ(row.qs[i], ref.q[i]) << "token " << t << " element " << i;
        for (std::int64_t b = 0; b < cols / 32; ++b) {
            for (int l = 0; l < 8; ++l)
                ASSERT_EQ(std::bit_cast<std::uint32_t>(row.lane_scales[8 * b + l]),
                          std::bit_cast<std::uint32_t>(ref.d[b]))
                    << "token " << t << " block " << b;
            ASSERT_EQ(std::bit_cast<std::uint32_t>(row.dsum[b]), std::bit_cast<std::uint32_t>(ref.dsum[b]))
                << "token " << t << " block " << b;
        }
    }
}

}  // namespace
}  // namespace nexttok

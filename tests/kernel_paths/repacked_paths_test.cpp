// Repacked q8_0 and q4_0 rows (tensor/repacked_blocks.hpp) through matmul on this program's kernel
// path, bitwise against the documented float order (kernels/quant_act.hpp) computed here in scalar
// code from the rows before repacking (ggml's block layouts) and the activation quantization's
// formula: block b whole into lane b % 16 by fma(float(sum w xq), d * dx), the 16 lanes reduced
// by the fixed tree. 1 and 2 threads, all tokens in one call (prefill) and calls of 1-16 tokens
// (the in-place tiles), rows of whole groups of 16 blocks, of a partial last group, of one
// partial group, and of two prefill column ranges. Also: the repacked rows read back as floats
// (read_row) are bitwise those of the rows before repacking.
#include "kernel_path.hpp"

#include <nexttok/kernels/dequantize.hpp>
#include <nexttok/tensor/quant_blocks.hpp>
#include <nexttok/tensor/repacked_blocks.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

namespace nexttok {
namespace {
namespace r16 {  // (the kernel-path tests share one unity build)

std::uint16_t bits_of(const packed_half& h) { return static_cast<std::uint16_t>(h.bytes[0] | (h.bytes[1] << 8)); }

// Element e's integer level in the file's layout.
template <class Block>
int level(const Block& w, int e) {
    if constexpr (std::is_same_v<Block, block_q8_0>)
        return w.qs[e];
    else
        return (e < 16 ? (w.qs[e] & 15) : (w.qs[e - 16] >> 4)) - 8;
}

template <class Block>
float reference(const Block* row, std::int64_t n_blocks, const test::q8_reference& x) {
    float lanes[16] = {};
    for (std::int64_t b = 0; b < n_blocks; ++b) {
        std::int32_t s = 0;
        for (int e = 0; e < 32; ++e) s += level(row[b], e) * x.q[32 * b + e];
        const float scale = test::half_to_float(bits_of(row[b].d)) * x.d[b];
        lanes[b % 16] = std::fma(static_cast<float>(s), scale, lanes[b % 16]);
    }
    return test::reduce16_tree(lanes);
}

template <class Block, class Repacked>
void check(std::int64_t rows, std::int64_t cols, std::int64_t n) {
    test::block_matrix<Block> file(rows, cols);
    test::fill_blocks(file.blocks, 31 + cols);  // (q8_0's -128 included)
    test::block_matrix<Repacked> w(rows, cols);
    const std::int64_t nb = cols / 32;
    for (std::int64_t r = 0; r < rows; ++r)
        detail::repack_row_r16(file.row(r), reinterpret_cast<std::uint8_t*>(w.blocks.data() + r * nb), nb);
    // Read back as floats: the file's values, bitwise.
    std::vector<float> want(static_cast<std::size_t>(cols)), got(want.size());
    for (std::int64_t r = 0; r < rows; ++r) {
        read_row(file.view, r, want.data());
        read_row(w.view, r, got.data());
        for (std::int64_t e = 0; e < cols; ++e)
            ASSERT_EQ(std::bit_cast<std::uint32_t>(got[e]), std::bit_cast<std::uint32_t>(want[e]))
                << "row " << r << " element " << e;
    }
    const std::vector<float> x = test::activations(n, cols, 9 + cols);
    std::vector<test::q8_reference> xq;
    for (std::int64_t t = 0; t < n; ++t) xq.push_back(test::quantize_q8_reference(x.data() + t * cols, cols));
    test::expect_matmul_bitwise(w.view, x, n, [&](std::int64_t r, std::int64_t t) {
        return reference(file.row(r), nb, xq[static_cast<std::size_t>(t)]);
    });
}

}  // namespace r16

template <class Pair>
class repacked_paths : public ::testing::Test {};
template <class B, class R>
struct repacked_pair {
    using block = B;
    using repacked = R;
};
using repacked_pairs =
    ::testing::Types<repacked_pair<block_q8_0, block_q8_0_r16>, repacked_pair<block_q4_0, block_q4_0_r16>>;
TYPED_TEST_SUITE(repacked_paths, repacked_pairs);

// 37 rows: register tiles of 4, 3 or 2 rows and single rows. 19 tokens in one call: on Intel CPUs
// prefill groups of 12 and 7; elsewhere with AVX-512 the decode tiles, of 8, 8 and 3 tokens
// (detail/isa.hpp, cpu_int8_prefill_in_place).
TYPED_TEST(repacked_paths, whole_groups_of_blocks) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    r16::check<typename TypeParam::block, typename TypeParam::repacked>(37, 1024, 19);
}
TYPED_TEST(repacked_paths, partial_groups_and_two_column_ranges) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    r16::check<typename TypeParam::block, typename TypeParam::repacked>(37, 32 * 75, 13);  // ranges of 64 blocks and 11
    r16::check<typename TypeParam::block, typename TypeParam::repacked>(9, 32 * 17, 10);   // a last group of 1 block
    r16::check<typename TypeParam::block, typename TypeParam::repacked>(9, 32 * 11, 16);   // one group of 11 (ffn 352)
}
TYPED_TEST(repacked_paths, rows_shorter_than_a_group) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    r16::check<typename TypeParam::block, typename TypeParam::repacked>(5, 32, 3);
    r16::check<typename TypeParam::block, typename TypeParam::repacked>(5, 128, 8);
}

}  // namespace
}  // namespace nexttok

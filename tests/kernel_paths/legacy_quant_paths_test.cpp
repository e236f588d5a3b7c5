// q4_0, q4_1, q5_0, q5_1, iq4_nl and q8_0 weights through matmul on this program's kernel path,
// bitwise against the documented float order (kernels/detail/legacy_qdot.hpp, kernels/quant_act.hpp)
// computed here in scalar code from ggml's block layouts and the activation quantization's formula:
// per block b, half h (quant bytes 4h..4h+3 and 8+4h..8+4h+3, low and high nibbles) into lane
// 2 (b % 8) + h by fma(float(sum v xq), d * dx), then for q4_1 / q5_1 fma(m, dsum) into lane
// 2 (b % 8); q8_0's quarter q (elements 4q..4q+3 and 16+4q..16+4q+3) into lane 4 (b % 4) + q; the 16
// lanes reduced by the fixed tree. 1 and 2 threads, all tokens in one call (prefill) and calls of
// 1-3 tokens (decode), rows of 1, 3, 33 and 67 blocks (partial groups, two prefill column ranges).
#include "kernel_path.hpp"

#include <nexttok/tensor/quant_blocks.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

namespace nexttok {
namespace {

std::uint16_t bits_of(const packed_half& h) { return static_cast<std::uint16_t>(h.bytes[0] | (h.bytes[1] << 8)); }

template <class Block>
constexpr bool has_min = std::is_same_v<Block, block_q4_1> || std::is_same_v<Block, block_q5_1>;
template <class Block>
constexpr bool has_qh = std::is_same_v<Block, block_q5_0> || std::is_same_v<Block, block_q5_1>;

// Element e's integer level, from the layout: nibble e of qs (low nibbles first), the fifth bit
// bit e of qh (little-endian), q5_0's offset 16, iq4_nl's table (ggml's kvalues_iq4nl).
template <class Block>
int level(const Block& w, int e) {
    if constexpr (std::is_same_v<Block, block_q8_0>) return w.qs[e];
    int q = e < 16 ? (w.qs[e] & 15) : (w.qs[e - 16] >> 4);
    if constexpr (has_qh<Block>) q |= ((w.qh[e / 8] >> (e % 8)) & 1) << 4;
    if constexpr (std::is_same_v<Block, block_q4_0>) q -= 8;
    if constexpr (std::is_same_v<Block, block_q5_0>) q -= 16;
    if constexpr (std::is_same_v<Block, block_iq4_nl>) {
        constexpr int table[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
        q = table[q];
    }
    return q;
}

template <class Block>
float reference(const Block* row, std::int64_t n_blocks, const test::q8_reference& x) {
    float lanes[16] = {};
    for (std::int64_t b = 0; b < n_blocks; ++b) {
        const Block& w = row[b];
        const float scale = test::half_to_float(bits_of(w.d)) * x.d[b];
        if constexpr (std::is_same_v<Block, block_q8_0>) {
            for (int q = 0; q < 4; ++q) {
                std::int32_t s = 0;
                for (int e = 4 * q; e < 4 * q + 4; ++e)
                    s += level(w, e) * x.q[32 * b + e] + level(w, e + 16) * x.q[32 * b + e + 16];
                lanes[4 * (b % 4) + q] = std::fma(static_cast<float>(s), scale, lanes[4 * (b % 4) + q]);
            }
            continue;
        }
        float* l = lanes + 2 * (b % 8);
        for (int h = 0; h < 2; ++h) {
            std::int32_t s = 0;
            for (int j : {4 * h, 4 * h + 1, 4 * h + 2, 4 * h + 3, 8 + 4 * h, 9 + 4 * h, 10 + 4 * h, 11 + 4 * h})
                s += level(w, j) * x.q[32 * b + j] + level(w, j + 16) * x.q[32 * b + j + 16];
            l[h] = std::fma(static_cast<float>(s), scale, l[h]);
        }
        if constexpr (has_min<Block>) l[0] = std::fma(test::half_to_float(bits_of(w.m)), x.dsum[b], l[0]);
    }
    return test::reduce16_tree(lanes);
}

template <class Block>
void check(std::int64_t rows, std::int64_t cols, std::int64_t n) {
    test::block_matrix<Block> w(rows, cols);
    test::fill_blocks(w.blocks, 21 + cols);
    const std::vector<float> x = test::activations(n, cols, 7 + cols);
    std::vector<test::q8_reference> xq;
    for (std::int64_t t = 0; t < n; ++t) xq.push_back(test::quantize_q8_reference(x.data() + t * cols, cols));
    test::expect_matmul_bitwise(w.view, x, n, [&](std::int64_t r, std::int64_t t) {
        return reference(w.row(r), cols / 32, xq[static_cast<std::size_t>(t)]);
    });
}

template <class Block>
class legacy_quant_paths : public ::testing::Test {};
using legacy_blocks = ::testing::Types<block_q4_0, block_q4_1, block_q5_0, block_q5_1, block_iq4_nl, block_q8_0>;
TYPED_TEST_SUITE(legacy_quant_paths, legacy_blocks);

// 37 rows: register tiles of 4 or 2 rows and single rows. 13 tokens: a prefill group of 12 and one.
TYPED_TEST(legacy_quant_paths, whole_octets_of_blocks) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    check<TypeParam>(37, 1024, 13);
}
TYPED_TEST(legacy_quant_paths, partial_octets_and_two_column_ranges) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    check<TypeParam>(37, 32 * 67, 13);  // ranges of 64 blocks and 3 (a partial octet)
    check<TypeParam>(9, 32 * 33, 10);   // a last octet of 1 block
    check<TypeParam>(9, 32 * 46, 10);   // a last octet of 6 blocks (window B)
}
TYPED_TEST(legacy_quant_paths, rows_shorter_than_an_octet) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    check<TypeParam>(5, 32, 3);
    check<TypeParam>(5, 96, 11);
    check<TypeParam>(5, 160, 4);
}

}  // namespace
}  // namespace nexttok

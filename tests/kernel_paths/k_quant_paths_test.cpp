// q2_k, q3_k, iq4_xs and q4_k weights (integer kernels against the per-256 activations,
// k_quant_qdot.hpp, quant_act.hpp) on this program's kernel path, bitwise against a scalar
// reference of the documented order written here from the definitions: the activations quantized
// per 256 elements (d = amax / 127, q = nearest-even(x * 127 / amax)), each block's 16 lane sums
// from ggml's layouts element by element, then per block, in ascending order, acc[k] =
// fma(float(L_k), d * dx, acc[k]) (q2_k: and then acc[k] = fma(float(M_k), -(dmin * dx), acc[k])
// for k < 8; q4_k: its minimum terms in 4 lanes of their own, subtracted from lanes 0-3 after every
// block whose index is 7 mod 8 and after the last), the lanes reduced by the fixed tree.
// Every path must give these bits, with 1 and 2 threads and any split of the tokens into calls
// (prefill = decode).
#include "kernel_path.hpp"

#include <nexttok/kernels/matmul.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

namespace nexttok {
namespace {

constexpr int levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};  // kvalues_iq4nl

// One activation row quantized per 256 elements.
struct q8_k_reference {
    std::vector<float> d;  // [n / 256]
    std::vector<int> q;    // [n], element order
};

q8_k_reference quantize_q8_k_reference(const float* x, std::int64_t n) {
    q8_k_reference r;
    for (std::int64_t b = 0; b < n / 256; ++b) {
        float amax = 0.0f;
        for (int i = 0; i < 256; ++i) amax = std::max(amax, std::fabs(x[256 * b + i]));
        const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (int i = 0; i < 256; ++i) r.q.push_back(static_cast<int>(std::nearbyint(x[256 * b + i] * id)));
        r.d.push_back(amax / 127.0f);
    }
    return r;
}

float half_to_float(packed_half h) {
    std::uint16_t bits;
    std::memcpy(&bits, h.bytes, 2);
    const int sign = bits >> 15, exponent = (bits >> 10) & 31, mantissa = bits & 1023;
    const float v = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                                  : std::ldexp(static_cast<float>(1024 + mantissa), exponent - 25);
    return sign ? -v : v;
}

// A block's integer weights (element order) and the scale of each element's sub-block.
struct levels_and_scales {
    int q[256];
    int scale[256];
    int min[256];  // q2_k only
};

levels_and_scales decode(const block_q2_k& b) {
    levels_and_scales r{};
    for (int e = 0; e < 256; ++e) {
        const int h = e / 128, j = e % 128 / 32, l = e % 32;
        r.q[e] = (b.qs[32 * h + l] >> (2 * j)) & 3;
        r.scale[e] = b.scales[e / 16] & 15;
        r.min[e] = b.scales[e / 16] >> 4;
    }
    return r;
}

levels_and_scales decode(const block_q3_k& b) {
    levels_and_scales r{};
    for (int e = 0; e < 256; ++e) {
        const int h = e / 128, j = e % 128 / 32, l = e % 32, i = e / 16;
        r.q[e] = ((b.qs[32 * h + l] >> (2 * j)) & 3) - ((b.hmask[l] >> (4 * h + j)) & 1 ? 0 : 4);
        const int low = i < 8 ? (b.scales[i] & 15) : (b.scales[i - 8] >> 4);
        r.scale[e] = (low | (((b.scales[8 + i % 4] >> (2 * (i / 4))) & 3) << 4)) - 32;
    }
    return r;
}

levels_and_scales decode(const block_q4_k& b) {
    levels_and_scales r{};
    for (int e = 0; e < 256; ++e) {
        const int j = e / 64, l = e % 32, sub = e / 32;  // ggml: qs[32 j + l], low nibble for even sub-blocks
        r.q[e] = e % 64 < 32 ? (b.qs[32 * j + l] & 15) : (b.qs[32 * j + l] >> 4);
        // get_scale_min_k4
        const int sc = sub < 4 ? (b.scales[sub] & 63) : ((b.scales[sub + 4] & 15) | ((b.scales[sub - 4] >> 6) << 4));
        const int m = sub < 4 ? (b.scales[sub + 4] & 63) : ((b.scales[sub + 4] >> 4) | ((b.scales[sub] >> 6) << 4));
        r.scale[e] = sc;
        r.min[e] = m;
    }
    return r;
}

levels_and_scales decode(const block_iq4_xs& b) {
    levels_and_scales r{};
    const int scales_h = b.scales_h[0] | (b.scales_h[1] << 8);
    for (int e = 0; e < 256; ++e) {
        const int ib = e / 32, k = e % 32;
        r.q[e] = levels[k < 16 ? (b.qs[16 * ib + k] & 15) : (b.qs[16 * ib + k - 16] >> 4)];
        r.scale[e] = ((((b.scales_l[ib / 2] >> (4 * (ib % 2))) & 15) | (((scales_h >> (2 * ib)) & 3) << 4))) - 32;
    }
    return r;
}

// The documented order for one weight row against one quantized activation row: 16 float lanes,
// lane k taking bytes 4k .. 4k + 3 of each 64-byte step of the block's activations in the q8_K
// order (element blocks 0, 2, 1, 3, 4, 6, 5, 7 of 32), reduced by the fixed tree at the end.
template <class Block>
float reference_dot(const Block* row, std::int64_t n_blocks, const q8_k_reference& x) {
    constexpr int order[8] = {0, 2, 1, 3, 4, 6, 5, 7};
    float acc[16] = {}, q4_k_mins[4] = {};
    for (std::int64_t b = 0; b < n_blocks; ++b) {
        const levels_and_scales w = decode(row[b]);
        const int* xq = x.q.data() + 256 * b;
        int bsum16[16] = {}, sub_scale[16], sub_min[16];
        for (int e = 0; e < 256; ++e) bsum16[e / 16] += xq[e];
        for (int i = 0; i < 16; ++i) sub_scale[i] = w.scale[16 * i], sub_min[i] = w.min[16 * i];
        const float dx = x.d[static_cast<std::size_t>(b)];
        const float scale = dx * half_to_float(row[b].d);
        for (int k = 0; k < 16; ++k) {
            std::int32_t lane = 0;
            for (int p = 0; p < 4; ++p)
                for (int c = 0; c < 4; ++c) {
                    const int pos = 64 * p + 4 * k + c, e = 32 * order[pos / 32] + pos % 32;
                    const int u = std::is_same_v<Block, block_q3_k> ? w.q[e] + 4 : w.q[e];  // q3_k: 0..7
                    lane += w.scale[e] * u * xq[e];
                }
            if (std::is_same_v<Block, block_q3_k> && k < 8)
                lane -= 4 * (sub_scale[2 * k] * bsum16[2 * k] + sub_scale[2 * k + 1] * bsum16[2 * k + 1]);
            acc[k] = std::fma(static_cast<float>(lane), scale, acc[k]);
        }
        if constexpr (std::is_same_v<Block, block_q2_k>) {
            const float min_scale = -(dx * half_to_float(row[b].dmin));
            for (int k = 0; k < 8; ++k) {
                const std::int32_t m = sub_min[2 * k] * bsum16[2 * k] + sub_min[2 * k + 1] * bsum16[2 * k + 1];
                acc[k] = std::fma(static_cast<float>(m), min_scale, acc[k]);
            }
        }
        if constexpr (std::is_same_v<Block, block_q4_k>) {
            int bsum32[8] = {};
            for (int e = 0; e < 256; ++e) bsum32[e / 32] += xq[e];
            const float min_scale = half_to_float(row[b].dmin) * dx;
            for (int j = 0; j < 4; ++j) {
                const std::int32_t m = w.min[64 * j] * bsum32[2 * j] + w.min[64 * j + 32] * bsum32[2 * j + 1];
                q4_k_mins[j] = std::fma(static_cast<float>(m), min_scale, q4_k_mins[j]);
            }
            if (b % 8 == 7 || b + 1 == n_blocks)
                for (int j = 0; j < 4; ++j) acc[j] -= std::exchange(q4_k_mins[j], 0.0f);
        }
    }
    return test::reduce16_tree(acc);
}

// Random blocks: random bytes, then d (and dmin) random halves of moderate magnitude.
template <class Block>
test::block_matrix<Block> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
    test::block_matrix<Block> m(rows, cols);
    std::mt19937_64 rng(seed);
    auto half = [&] {
        const auto exponent = static_cast<std::uint16_t>(8 + rng() % 8);
        const auto bits = static_cast<std::uint16_t>(((rng() & 1) << 15) | (exponent << 10) | (rng() & 1023));
        packed_half h;
        std::memcpy(h.bytes, &bits, 2);
        return h;
    };
    for (Block& b : m.blocks) {
        std::uint8_t raw[sizeof(Block)];
        for (auto& v : raw) v = static_cast<std::uint8_t>(rng());
        std::memcpy(&b, raw, sizeof(Block));
        b.d = half();
        if constexpr (std::is_same_v<Block, block_q2_k> || std::is_same_v<Block, block_q4_k>) b.dmin = half();
    }
    return m;
}

template <class Block>
void expect_paths_agree(std::int64_t rows, std::int64_t cols, std::int64_t n, std::uint64_t seed) {
    test::block_matrix<Block> w = random_matrix<Block>(rows, cols, seed);
    std::vector<float> x = test::activations(n, cols, seed + 1);
    if (n > 1) std::fill(x.begin() + cols, x.begin() + cols + 256, 0.0f);  // a block with amax 0
    // Extremes: token 0's first 256 elements all at the largest value (q = 127 each), against
    // row 0's first block at the smallest quants (iq4_xs: -127 with scale -32, the largest products).
    std::fill(x.begin(), x.begin() + 256, 3.0f);
    std::memset(w.blocks[0].qs, 0, sizeof(w.blocks[0].qs));
    if constexpr (std::is_same_v<Block, block_iq4_xs>) {
        std::memset(w.blocks[0].scales_l, 0, 4);
        std::memset(w.blocks[0].scales_h, 0, 2);
    }
    std::vector<q8_k_reference> xq;
    for (std::int64_t t = 0; t < n; ++t) xq.push_back(quantize_q8_k_reference(x.data() + t * cols, cols));
    test::expect_matmul_bitwise(w.view, x, n, [&](std::int64_t r, std::int64_t t) {
        return reference_dot(w.row(r), cols / 256, xq[static_cast<std::size_t>(t)]);
    });
}

TEST(k_quant_paths, q2_k_matches_the_documented_order) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    expect_paths_agree<block_q2_k>(21, 768, 13, 11);
    expect_paths_agree<block_q2_k>(6, 2560, 9, 12);  // 10 blocks: prefill splits the columns at 8
}

TEST(k_quant_paths, q3_k_matches_the_documented_order) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    expect_paths_agree<block_q3_k>(21, 768, 13, 21);
    expect_paths_agree<block_q3_k>(6, 2560, 9, 22);
}

TEST(k_quant_paths, iq4_xs_matches_the_documented_order) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    expect_paths_agree<block_iq4_xs>(21, 768, 13, 31);
    expect_paths_agree<block_iq4_xs>(6, 2560, 9, 32);
}

TEST(k_quant_paths, q4_k_matches_the_documented_order) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    expect_paths_agree<block_q4_k>(21, 768, 13, 51);
    expect_paths_agree<block_q4_k>(6, 2560, 9, 52);      // 10 blocks: a chunk of 8 and one of 2
    expect_paths_agree<block_q4_k>(5, 256 * 17, 3, 53);  // 17 blocks: two whole chunks
}

// The per-256 activation values the kernels read (q8_act_row::q8k_qs, q8k_scales, q8k_sums16, q8k_block_sums) are the formula's
// on every path.
TEST(k_quant_paths, per_256_activations_are_their_formula) {
    NEXTTOK_REQUIRE_KERNEL_PATH();
    constexpr std::int64_t n = 2, cols = 1024;
    const std::vector<float> x = test::activations(n, cols, 41);
    q8_activations act;
    act.resize(n, cols);
    constexpr int order[8] = {0, 2, 1, 3, 4, 6, 5, 7};
    for (std::int64_t t = 0; t < n; ++t) {
        act.quantize(t, x.data() + t * cols);
        const q8_k_reference ref = quantize_q8_k_reference(x.data() + t * cols, cols);
        const q8_act_row& row = act.row(t);
        for (std::int64_t b = 0; b < cols / 256; ++b) {
            ASSERT_EQ(row.q8k_scales[b], ref.d[static_cast<std::size_t>(b)]) << "token " << t << " block " << b;
            for (int e = 0; e < 256; ++e)
                ASSERT_EQ(row.q8k_qs[256 * b + 32 * order[e / 32] + e % 32],
                          ref.q[static_cast<std::size_t>(256 * b + e)])
                    << "token " << t << " element " << 256 * b + e;
            for (int i = 0; i < 16; ++i) {
                int sum = 0;
                for (int e = 16 * i; e < 16 * i + 16; ++e) sum += ref.q[static_cast<std::size_t>(256 * b + e)];
                ASSERT_EQ(row.q8k_sums16[16 * b + i], sum) << "token " << t << " block " << b << " sum " << i;
            }
            for (int j = 0; j < 8; ++j) {
                int sum = 0;
                for (int e = 32 * j; e < 32 * j + 32; ++e) sum += ref.q[static_cast<std::size_t>(256 * b + e)];
                ASSERT_EQ(row.q8k_block_sums[8 * b + j], sum) << "token " << t << " block " << b << " sum32 " << j;
            }
        }
    }
}

}  // namespace
}  // namespace nexttok

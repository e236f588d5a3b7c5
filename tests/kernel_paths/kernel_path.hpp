// Support for the kernel-path tests (tests/kernel_paths): the same sources are compiled into four
// programs, nexttok_kernel_paths_{avx512,avx512bf16,avx2,portable}_tests, whose ISA flags choose the kernels
// (NEXTTOK_KERNEL_PATH names the program's path). Each test compares a kernel's outputs bitwise
// with a scalar reference of the kernel's documented float order, written in the test; so the
// programs agree bitwise with each other.
//
// Here: the skip for a CPU without the program's instructions, the 8-bit activation quantization
// written from its formula (quant_act.hpp), the fixed 16-lane reduction tree, a weight matrix of
// raw blocks with its tensor_view, and a driver that runs matmul in every way that must give the
// same bits (1 and 2 threads; all tokens in one call, in calls of 1..3 tokens) against a reference.
#pragma once

#include <nexttok/kernels/matmul.hpp>
#include <nexttok/kernels/thread_pool.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <gtest/gtest.h>

#include <cpuid.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace nexttok::test {

inline std::string kernel_path() { return NEXTTOK_KERNEL_PATH; }

// True when this CPU can run this program's instructions.
inline bool kernel_path_runs_here() {
    if (kernel_path().rfind("avx512", 0) != 0) return true;  // AVX2 is the x86-64 floor of the other programs' users
    __builtin_cpu_init();
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                        __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vbmi");
    unsigned int a = 0, b = 0, c = 0, d = 0;
    const bool bf16 = __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5)) != 0;
    return avx512 && (kernel_path() == "avx512" || bf16);
}

}  // namespace nexttok::test

// First statement of every kernel-path test: skips it where the CPU lacks the program's features.
#define NEXTTOK_REQUIRE_KERNEL_PATH()                                                                   \
    do {                                                                                                \
        if (!::nexttok::test::kernel_path_runs_here())                                                  \
            GTEST_SKIP() << "this CPU lacks the instructions of the " << ::nexttok::test::kernel_path() \
                         << " kernel path";                                                             \
    } while (0)

namespace nexttok::test {

// One activation row quantized per block of 32 as q8_activations::quantize defines it: amax the
// largest magnitude, d = amax / 127, q = nearest-even(x * (127 / amax)) (0 where amax is 0), and
// dsum = d * (sum of the block's q).
struct q8_reference {
    std::vector<float> d;     // [n / 32]
    std::vector<int> q;       // [n]
    std::vector<float> dsum;  // [n / 32]
};

inline q8_reference quantize_q8_reference(const float* x, std::int64_t n) {
    q8_reference r;
    for (std::int64_t b = 0; b < n / 32; ++b) {
        float amax = 0.0f;
        for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[32 * b + i]));
        const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
        int sum = 0;
        for (int i = 0; i < 32; ++i) {
            const float scaled = x[32 * b + i] * id;
            const int q = static_cast<int>(std::nearbyint(scaled));
            r.q.push_back(q);
            sum += q;
        }
        r.d.push_back(amax / 127.0f);
        r.dsum.push_back(r.d.back() * static_cast<float>(sum));
    }
    return r;
}

// IEEE binary16 bits -> float, from the bit fields (exact).
inline float half_to_float(std::uint16_t bits) {
    const int sign = bits >> 15, exponent = (bits >> 10) & 31, mantissa = bits & 1023;
    const float v = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                                  : std::ldexp(static_cast<float>(1024 + mantissa), exponent - 25);
    return sign ? -v : v;
}

// The fixed reduction of 16 lanes: lane j + lane j + 8, then + 4, + 2, + 1.
inline float reduce16_tree(const float (&a)[16]) {
    float h8[8], h4[4], h2[2];
    for (int j = 0; j < 8; ++j) h8[j] = a[j] + a[j + 8];
    for (int j = 0; j < 4; ++j) h4[j] = h8[j] + h8[j + 4];
    for (int j = 0; j < 2; ++j) h2[j] = h4[j] + h4[j + 2];
    return h2[0] + h2[1];
}

// A rows x cols weight matrix of Block, from raw bytes, with its view.
template <class Block>
struct block_matrix {
    block_matrix(std::int64_t rows, std::int64_t cols)
            : blocks(static_cast<std::size_t>(rows * cols / Block::block_size)) {
        view.name = std::string("w");
        view.type = Block::type;
        view.n_dims = 2;
        view.ne = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows), 1, 1};
        view.data = reinterpret_cast<const std::byte*>(blocks.data());
        view.n_bytes = blocks.size() * sizeof(Block);
    }
    const Block* row(std::int64_t r) const {
        return blocks.data() + r * static_cast<std::int64_t>(view.cols()) / Block::block_size;
    }
    std::vector<Block> blocks;
    tensor_view view;
};

// Random blocks of a 32-element legacy type: every quant byte random (q8_0's -128 included), the
// fifth bits too, scales of both signs over a few binades, minimums negative (as the quantizer
// writes them), some blocks with d = 0.
template <class Block>
void fill_blocks(std::vector<Block>& blocks, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> mag(0.5f, 4.0f);
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        Block& b = blocks[i];
        for (auto& q : b.qs) q = static_cast<std::remove_reference_t<decltype(q)>>(byte(rng));
        if constexpr (requires { b.qh; })
            for (auto& q : b.qh) q = static_cast<std::uint8_t>(byte(rng));
        const float d = i % 11 == 5 ? 0.0f : (byte(rng) % 2 ? -1.0f : 1.0f) * 1e-3f * mag(rng);
        b.d = packed_half::from_float(d);
        if constexpr (requires { b.m; }) b.m = packed_half::from_float(-0.01f * mag(rng));
    }
}

// n activation rows of cols floats, normal(0, 1), with some blocks scaled up or down (so block
// scales differ) and one all-zero block.
inline std::vector<float> activations(std::int64_t n, std::int64_t cols, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> x(static_cast<std::size_t>(n * cols));
    for (auto& v : x) v = dist(rng);
    for (std::int64_t b = 0; b < n * cols / 32; ++b) {
        const float s = b % 7 == 3 ? 40.0f : b % 5 == 1 ? 0.01f : 1.0f;
        for (int i = 0; i < 32; ++i) x[static_cast<std::size_t>(32 * b + i)] *= s;
    }
    if (n * cols >= 96) std::fill(x.begin() + 64, x.begin() + 96, 0.0f);
    return x;
}

// Runs y = x W^T (n tokens of w.cols()) with 1 and 2 threads, all tokens in one call and in calls of
// 1, 2, 3, 7, 8 and 16 tokens (the in-place tiles: narrow, wide, two wide), and asserts every output
// bitwise equal to reference(r, t).
inline void expect_matmul_bitwise(const tensor_view& w, const std::vector<float>& x, std::int64_t n,
                                  const std::function<float(std::int64_t r, std::int64_t t)>& reference) {
    const auto rows = static_cast<std::int64_t>(w.rows()), cols = static_cast<std::int64_t>(w.cols());
    std::vector<float> want(static_cast<std::size_t>(n * rows));
    for (std::int64_t t = 0; t < n; ++t)
        for (std::int64_t r = 0; r < rows; ++r) want[static_cast<std::size_t>(t * rows + r)] = reference(r, t);
    thread_pool one(1), two(2);
    for (thread_pool* pool : {&one, &two}) {
        for (std::int64_t step : {n, std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{7},
                                  std::int64_t{8}, std::int64_t{16}}) {
            std::vector<float> y(static_cast<std::size_t>(n * rows), -1.0f);
            for (std::int64_t t = 0; t < n; t += step) {
                const std::int64_t m = std::min(step, n - t);
                matmul(w, x.data() + t * cols, cols, m, y.data() + t * rows, rows, *pool);
            }
            for (std::int64_t t = 0; t < n; ++t)
                for (std::int64_t r = 0; r < rows; ++r) {
                    const auto i = static_cast<std::size_t>(t * rows + r);
                    ASSERT_EQ(std::bit_cast<std::uint32_t>(y[i]), std::bit_cast<std::uint32_t>(want[i]))
                        << kernel_path() << " path, " << pool->size() << " threads, calls of " << step
                        << " tokens: token " << t << " row " << r << ": " << y[i] << " vs the reference " << want[i];
                }
        }
    }
}

}  // namespace nexttok::test

// quantize_row_q8_0 / quantize_row_q4_0 against ggml's reference scheme: blocks whose quants are
// worked out by hand (rounding of halves, choice of the scale's sign, the clamped top step of
// q4_0, nibble order), then round-trip error bounds on seeded random data.
#include <nexttok/error.hpp>
#include <nexttok/kernels/dequantize.hpp>
#include <nexttok/tensor/quantize.hpp>

#include "quant_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace nexttok {
namespace {

TEST(quantize_q8_0, rounds_half_away_from_zero_by_hand) {
    std::vector<float> x(32);
    for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16);
    const float head[8] = {127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 0.49f, -126.5f, 63.5f};
    std::copy(head, head + 8, x.begin());
    block_q8_0 b;
    quantize_row_q8_0(x.data(), &b, 32);
    EXPECT_EQ(test::bits_of(b.d), 0x3C00);  // d = 127 / 127 = 1
    const int expected[8] = {127, 3, -3, 1, -1, 0, -127, 64};
    for (int j = 0; j < 8; ++j) EXPECT_EQ(b.qs[j], expected[j]) << "x = " << x[j];
    for (int j = 8; j < 32; ++j) EXPECT_EQ(b.qs[j], j - 16);

    std::fill(x.begin(), x.end(), 0.0f);
    x[5] = -1.0f;  // d = 1/127, nearest half 2^-7 * (1 + 8/1024)
    quantize_row_q8_0(x.data(), &b, 32);
    EXPECT_EQ(test::bits_of(b.d), 0x2008);
    EXPECT_EQ(b.qs[5], -127);
}

TEST(quantize_q4_0, scale_sign_half_up_rounding_and_clamp_by_hand) {
    std::vector<float> x(32, 0.0f);
    // The first element of largest magnitude (-8) sets d = -8 / -8 = 1; the later +8 does not.
    const float low[8] = {-8.0f, 0.5f, -0.5f, 7.4f, 7.5f, -7.6f, 1.49f, 0.49999997f};
    const float high[4] = {8.0f, -3.0f, 2.5f, -2.5f};
    std::copy(low, low + 8, x.begin());
    std::copy(high, high + 4, x.begin() + 16);
    block_q4_0 b;
    quantize_row_q4_0(x.data(), &b, 32);
    EXPECT_EQ(test::bits_of(b.d), 0x3C00);
    // Nibble = trunc(x + 8.5) clamped to 15: low nibbles from x[0..15], high from x[16..31].
    // 0.49999997 + 8.5 rounds to 9 in float, so it goes up like 0.5; -2.5 goes up to -2.
    const std::uint8_t expected[16] = {0xF0, 0x59, 0xB8, 0x6F, 0x8F, 0x80, 0x89, 0x89,
                                       0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88};
    for (int j = 0; j < 16; ++j) EXPECT_EQ(b.qs[j], expected[j]) << "byte " << j;

    // A positive max makes d negative: 4 -> d = -0.5; -4 is clamped to 7 * -0.5.
    std::fill(x.begin(), x.end(), 0.0f);
    x[0] = 4.0f;
    x[1] = -4.0f;
    x[2] = 3.0f;
    quantize_row_q4_0(x.data(), &b, 32);
    EXPECT_EQ(test::bits_of(b.d), 0xB800);
    float y[32];
    dequantize_block(b, y);
    EXPECT_EQ(y[0], 4.0f);
    EXPECT_EQ(y[1], -3.5f);
    EXPECT_EQ(y[2], 3.0f);
    EXPECT_EQ(y[3], 0.0f);
}

// ggml rounds x * (1 / d) to float and then adds 8.5 in float. Find x whose product rounds up to
// 0.5 - 2^-21 exactly: 9 - 2^-21 is a tie that rounds to even (9, nibble 9), where a single
// rounding of the exact x / d + 8.5, just below the tie, would give 9 - 2^-20 (nibble 8).
TEST(quantize_q4_0, rounds_the_scaled_value_to_float_before_adding_8_5) {
    const double target = 0.5 - std::ldexp(1.0, -21);
    for (float c : {1.1f, 1.3f, 1.7f, 1.9f, 1.15f, 1.35f, 1.55f, 1.85f}) {
        const float id = 1.0f / c;  // d = -8c / -8 = c exactly
        float v = static_cast<float>(target / id);
        for (int k = 0; k < 400; ++k, v = std::nextafter(v, 0.0f)) {
            const double exact = static_cast<double>(v) * id;
            if (static_cast<float>(exact) != target || exact >= target) continue;
            std::vector<float> x(32, 0.0f);
            x[0] = -8.0f * c;
            x[1] = v;
            block_q4_0 b;
            quantize_row_q4_0(x.data(), &b, 32);
            EXPECT_EQ(b.qs[1] & 15, 9) << "x = " << v << ", d = " << c;
            return;
        }
    }
    FAIL() << "no test value found";
}

TEST(quantize, zero_blocks_and_bad_lengths) {
    std::vector<float> x(64, 0.0f);
    block_q8_0 a[2];
    block_q4_0 b[2];
    quantize_row_q8_0(x.data(), a, 64);
    quantize_row_q4_0(x.data(), b, 64);
    std::vector<float> y(64, 1.0f);
    dequantize_row(a, y.data(), 64);
    for (float v : y) EXPECT_EQ(v, 0.0f);
    std::fill(y.begin(), y.end(), 1.0f);
    dequantize_row(b, y.data(), 64);
    for (float v : y) EXPECT_EQ(v, 0.0f);
    EXPECT_THROW(quantize_row_q8_0(x.data(), a, 48), invalid_argument_error);
    EXPECT_THROW(quantize_row_q4_0(x.data(), b, 33), invalid_argument_error);
}

// Rounding a float scale to half precision: half an ulp, 2^-11 relative for normal halves and
// 2^-25 absolute for subnormal ones (plus the float rounding of d itself).
double half_rounding_bound(double d) {
    return std::max(std::fabs(d) * (std::ldexp(1.0, -11) + 1e-7), std::ldexp(1.0, -25));
}

// Seeded test rows: blocks of uniform, normal and outlier-heavy values at scales 1e-3 .. 1e2.
std::vector<float> random_row(std::uint64_t seed, int n_blocks) {
    std::mt19937_64 rng(seed);
    std::vector<float> x(static_cast<std::size_t>(n_blocks) * 32);
    for (int b = 0; b < n_blocks; ++b) {
        const float scale = std::pow(10.0f, std::uniform_real_distribution<float>(-3.0f, 2.0f)(rng));
        for (int j = 0; j < 32; ++j) {
            float v = 0.0f;
            switch (b % 3) {
                case 0:
                    v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
                    break;
                case 1:
                    v = std::normal_distribution<float>(0.0f, 1.0f)(rng);
                    break;
                default:
                    v = (rng() % 16 == 0 ? 20.0f : 1.0f) * std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
            }
            x[static_cast<std::size_t>(b) * 32 + j] = v * scale;
        }
    }
    return x;
}

// With d exactly representable in half precision (max |x| = 127 * 2^-6, so d = 2^-6), every
// element is within d / 2 of its dequantized value.
TEST(quantize_q8_0, round_trip_error_is_at_most_half_a_step) {
    auto x = random_row(11, 96);
    std::mt19937_64 rng(12);
    const float d = std::ldexp(1.0f, -6);
    for (std::size_t b = 0; b < x.size() / 32; ++b) {
        float* blk = x.data() + b * 32;
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(blk[j]));
        for (int j = 0; j < 32; ++j) blk[j] *= 126.0f * d / amax;  // below 127 d even after rounding
        blk[rng() % 32] = (rng() & 1 ? 127.0f : -127.0f) * d;
    }
    std::vector<block_q8_0> q(x.size() / 32);
    quantize_row_q8_0(x.data(), q.data(), static_cast<std::int64_t>(x.size()));
    std::vector<float> y(x.size());
    dequantize_row(q.data(), y.data(), static_cast<std::int64_t>(y.size()));
    for (std::size_t i = 0; i < x.size(); ++i) {
        ASSERT_EQ(test::half_value(test::bits_of(q[i / 32].d)), d) << "block " << i / 32;
        ASSERT_LE(std::fabs(static_cast<double>(x[i]) - y[i]), d / 2.0) << "element " << i;
    }
}

// Any scale: d is rounded to half precision, which adds at most |q| |d16 - d| <= 127 |d16 - d|
// to the half step; 1 / d and x / d in float add about 1e-5 steps.
TEST(quantize_q8_0, round_trip_error_bound_at_any_scale) {
    const auto x = random_row(21, 300);
    std::vector<block_q8_0> q(x.size() / 32);
    quantize_row_q8_0(x.data(), q.data(), static_cast<std::int64_t>(x.size()));
    std::vector<float> y(x.size());
    dequantize_row(q.data(), y.data(), static_cast<std::int64_t>(y.size()));
    for (std::size_t b = 0; b < q.size(); ++b) {
        double amax = 0.0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(static_cast<double>(x[b * 32 + j])));
        const double d = amax / 127.0, d16 = test::half_value(test::bits_of(q[b].d));
        ASSERT_LE(std::fabs(d16 - d), half_rounding_bound(d)) << "block " << b;
        const double bound = 0.5 * d + 127.0 * std::fabs(d16 - d) + 1e-4 * d;
        for (int j = 0; j < 32; ++j)
            ASSERT_LE(std::fabs(static_cast<double>(x[b * 32 + j]) - y[b * 32 + j]), bound)
                << "block " << b << " element " << j;
    }
}

// ggml's q4_0 maps the element of largest magnitude to -8 exactly and rounds the rest half up
// to -8..7 steps of d: within d / 2, except x / d in (7.5, 8] (the opposite extreme), which is
// clamped to 7 and so within (x / d - 7) d <= d. d = 2^-5 exactly here; the second test adds
// half-precision rounding of d (at most 8 |d16 - d|).
double q4_0_bound(double u, double d) { return (u > 7.5 ? u - 7.0 : 0.5) * std::fabs(d); }

TEST(quantize_q4_0, round_trip_error_is_at_most_half_a_step_below_the_clamp) {
    auto x = random_row(31, 96);
    std::mt19937_64 rng(32);
    const float step = std::ldexp(1.0f, -5);
    int clamped = 0;
    for (std::size_t b = 0; b < x.size() / 32; ++b) {
        float* blk = x.data() + b * 32;
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(blk[j]));
        for (int j = 0; j < 32; ++j) blk[j] *= 7.9f * step / amax;
        blk[rng() % 32] = (b % 2 ? 8.0f : -8.0f) * step;  // the max: d = -+step
    }
    std::vector<block_q4_0> q(x.size() / 32);
    quantize_row_q4_0(x.data(), q.data(), static_cast<std::int64_t>(x.size()));
    std::vector<float> y(x.size());
    dequantize_row(q.data(), y.data(), static_cast<std::int64_t>(y.size()));
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double d = (i / 32) % 2 ? -step : step;
        ASSERT_EQ(test::half_value(test::bits_of(q[i / 32].d)), d) << "block " << i / 32;
        const double u = x[i] / d;
        clamped += u > 7.5;
        ASSERT_LE(std::fabs(static_cast<double>(x[i]) - y[i]), q4_0_bound(u, d) + 1e-5 * step)
            << "element " << i << ", x / d = " << u;
    }
    EXPECT_GT(clamped, 0);  // the clamped region was exercised
}

TEST(quantize_q4_0, round_trip_error_bound_at_any_scale) {
    const auto x = random_row(41, 300);
    std::vector<block_q4_0> q(x.size() / 32);
    quantize_row_q4_0(x.data(), q.data(), static_cast<std::int64_t>(x.size()));
    std::vector<float> y(x.size());
    dequantize_row(q.data(), y.data(), static_cast<std::int64_t>(y.size()));
    for (std::size_t b = 0; b < q.size(); ++b) {
        double max = 0.0;  // the first element of largest magnitude, with its sign
        for (int j = 0; j < 32; ++j)
            if (std::fabs(x[b * 32 + j]) > std::fabs(max)) max = x[b * 32 + j];
        const double d = max / -8.0, d16 = test::half_value(test::bits_of(q[b].d));
        ASSERT_LE(std::fabs(d16 - d), half_rounding_bound(d)) << "block " << b;
        for (int j = 0; j < 32; ++j) {
            const double u = x[b * 32 + j] / d;
            const double bound = q4_0_bound(u, d) + 8.0 * std::fabs(d16 - d) + 1e-4 * std::fabs(d);
            ASSERT_LE(std::fabs(static_cast<double>(x[b * 32 + j]) - y[b * 32 + j]), bound)
                << "block " << b << " element " << j;
        }
    }
}

}  // namespace
}  // namespace nexttok

// RMSNorm, the SIMD exponential and the operations built on it (softmax, SwiGLU, GELU) against
// their closed forms computed in double: the exponential within 2 ulp over its whole range, with
// its overflow, underflow and NaN; the others within a few float roundings, for lengths that end
// in a partial vector, and with the same value for an element whatever its position or length.
#include <nexttok/kernels/ops.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace nexttok {
namespace {

namespace s = kernel_detail::simd;

// e^x for each x, by the SIMD function (one vector per width values).
std::vector<float> simd_exp(const std::vector<float>& x) {
    std::vector<float> in(x), out(x.size() + s::width);
    in.resize((x.size() + s::width - 1) / s::width * s::width, 0.0f);
    for (std::size_t i = 0; i < in.size(); i += s::width) s::store(out.data() + i, s::exp(s::load(in.data() + i)));
    out.resize(x.size());
    return out;
}

TEST(simd_exp, within_two_ulp_over_the_float_range) {
    std::vector<float> x;
    for (double v = -103.0; v < 88.7; v += 0.00731) x.push_back(static_cast<float>(v));
    for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 0.34657359f, -0.34657359f, 88.0f, -87.0f}) x.push_back(v);
    const std::vector<float> got = simd_exp(x);
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double want = std::exp(static_cast<double>(x[i]));
        // One ulp of the float nearest to want (subnormals: the spacing 2^-149).
        const double ulp = std::max(std::ldexp(1.0, std::ilogb(want) - 23), std::ldexp(1.0, -149));
        ASSERT_LE(std::fabs(got[i] - want), 2.0 * ulp) << "x = " << x[i];
    }
}

TEST(simd_exp, overflows_underflows_and_keeps_nan) {
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> got = simd_exp({89.0f, 100.0f, inf, -104.5f, -200.0f, -inf, std::nanf("")});
    EXPECT_EQ(got[0], inf);
    EXPECT_EQ(got[1], inf);
    EXPECT_EQ(got[2], inf);
    EXPECT_EQ(got[3], 0.0f);
    EXPECT_EQ(got[4], 0.0f);
    EXPECT_EQ(got[5], 0.0f);
    EXPECT_TRUE(std::isnan(got[6]));
}

std::vector<float> random_values(std::size_t n, float sigma, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> dist(0.0f, sigma);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

TEST(softmax, matches_the_closed_form_and_sums_to_one) {
    for (std::int64_t n : {1, 5, 16, 37, 128, 1000}) {
        std::vector<float> x = random_values(static_cast<std::size_t>(n), 3.0f, static_cast<std::uint64_t>(n));
        std::vector<double> want(x.begin(), x.end());
        double max = want[0], sum = 0.0;
        for (double v : want) max = std::max(max, v);
        for (double& v : want) sum += (v = std::exp(v - max));
        softmax(x.data(), n);
        double total = 0.0;
        for (std::int64_t i = 0; i < n; ++i) {
            ASSERT_NEAR(x[i], want[i] / sum, 1e-6 * want[i] / sum + 1e-12) << "n " << n << " i " << i;
            total += x[i];
        }
        EXPECT_NEAR(total, 1.0, 1e-6) << "n " << n;
    }
}

TEST(swiglu, matches_the_closed_form_in_float_and_half) {
    const std::int64_t n = 5632 + 7;  // ends in a partial vector
    const std::vector<float> gate = random_values(n, 4.0f, 1), up = random_values(n, 1.0f, 2);
    std::vector<float> out(n);
    std::vector<Eigen::half> out_half(n);
    swiglu(gate.data(), up.data(), n, out.data());
    swiglu(gate.data(), up.data(), n, out_half.data());
    for (std::int64_t i = 0; i < n; ++i) {
        const double g = gate[i], want = g / (1.0 + std::exp(-g)) * up[i];
        ASSERT_NEAR(out[i], want, 4e-7 * std::fabs(want) + 1e-30) << "element " << i;
        ASSERT_EQ(static_cast<float>(out_half[i]), static_cast<float>(Eigen::half(out[i]))) << "element " << i;
    }
    // An element's value does not depend on its position or on n.
    std::vector<float> tail(3);
    swiglu(gate.data() + 5, up.data() + 5, 3, tail.data());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(tail[i], out[5 + i]);
}

TEST(rms_norm, matches_the_closed_form) {
    for (std::int64_t n : {7, 64, 2048 + 5}) {
        const std::vector<float> x = random_values(static_cast<std::size_t>(n), 2.0f, 7),
                                 w = random_values(static_cast<std::size_t>(n), 1.0f, 8);
        std::vector<float> out(static_cast<std::size_t>(n));
        rms_norm(x.data(), w.data(), n, 1e-5f, out.data());
        double ss = 0.0;
        for (float v : x) ss += static_cast<double>(v) * v;
        const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + 1e-5);
        for (std::int64_t i = 0; i < n; ++i) {
            const double want = x[i] * inv * w[i];
            ASSERT_NEAR(out[i], want, 3e-7 * std::fabs(want) + 1e-30) << "n " << n << " i " << i;
        }
    }
}

TEST(gelu_tanh, matches_the_closed_form) {
    const std::int64_t n = 1000 + 3;
    const std::vector<float> x = random_values(n, 3.0f, 3);
    std::vector<float> out(n);
    gelu_tanh(x.data(), n, out.data());
    for (std::int64_t i = 0; i < n; ++i) {
        const double v = x[i];
        const double want = 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        ASSERT_NEAR(out[i], want, 1e-6 * std::fabs(v) + 1e-30) << "x = " << x[i];
    }
}

}  // namespace
}  // namespace nexttok

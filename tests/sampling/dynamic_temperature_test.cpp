// Dynamic temperature (llama.cpp's temp_ext) against an oracle: t = t_min + (t_max - t_min) *
// (H / ln n)^exponent, then logits / t; range 0 is plain temperature.
#include <nexttok/sampling/dynamic_temperature.hpp>
#include <nexttok/sampling/temperature.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace nexttok {
namespace {

double oracle_temperature(const std::vector<float>& logits, double t, double range, double exponent) {
    const auto p = test::oracle_softmax(logits);
    double h = 0.0;
    for (double q : p) h -= q > 0 ? q * std::log(q) : 0.0;
    const double t_min = std::max(0.0, t - range), t_max = t + range;
    return t_min + (t_max - t_min) * std::pow(h / std::log(double(logits.size())), exponent);
}

TEST(sampling_dynamic_temperature, temperature_follows_the_normalized_entropy) {
    test::logit_source src(701);
    for (int round = 0; round < 100; ++round) {
        const auto logits = src.logits(30, -3.0f, 3.0f);
        const float t = src.uniform(0.2f, 1.5f), range = src.uniform(0.1f, 1.0f), exponent = src.uniform(0.5f, 2.0f);
        dynamic_temperature d(t, range, exponent);
        candidates c;
        c.assign(logits);
        d.apply(c);
        const double want = oracle_temperature(logits, t, range, exponent);
        EXPECT_NEAR(d.last_temperature(), want, 1e-4 * want) << "round " << round;
        for (std::size_t i = 0; i < c.size(); ++i)
            EXPECT_FLOAT_EQ(c.logits[i], logits[static_cast<std::size_t>(c.ids[i])] / d.last_temperature());
    }
}

TEST(sampling_dynamic_temperature, flat_is_hottest_and_peaked_is_coldest) {
    dynamic_temperature d(1.0f, 0.5f, 1.0f);
    candidates c;
    c.assign(std::vector<float>(16, 0.0f));  // H = ln 16: normalized entropy 1
    d.apply(c);
    EXPECT_NEAR(d.last_temperature(), 1.5f, 1e-5f);
    c.assign(std::vector<float>{100.0f, 0.0f, 0.0f, 0.0f});  // H ~ 0
    d.apply(c);
    EXPECT_NEAR(d.last_temperature(), 0.5f, 1e-5f);
}

TEST(sampling_dynamic_temperature, range_zero_is_plain_temperature) {
    const std::vector<float> logits{1.0f, -2.0f, 0.5f, 3.0f};
    for (float t : {0.0f, 0.7f, 1.3f}) {
        candidates a, b;
        a.assign(logits);
        b.assign(logits);
        dynamic_temperature(t, 0.0f).apply(a);
        temperature(t).apply(b);
        EXPECT_EQ(a.ids, b.ids);
        EXPECT_EQ(a.logits, b.logits);
    }
}

}  // namespace
}  // namespace nexttok

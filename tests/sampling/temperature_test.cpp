// temperature against llama.cpp's definition: logits / t; t <= 0 keeps only the maximum.
#include <nexttok/sampling/temperature.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace nexttok {
namespace {

TEST(sampling_temperature, divides_every_logit) {
    candidates c;
    c.assign(std::vector<float>{1.0f, -3.0f, 0.5f});
    c.softmax();
    temperature(0.5f).apply(c);
    EXPECT_EQ(c.logits, (std::vector<float>{2.0f, -6.0f, 1.0f}));
    EXPECT_FALSE(c.probs_valid);
    EXPECT_EQ(c.size(), 3u);
}

TEST(sampling_temperature, scaled_softmax_matches_closed_form) {
    test::logit_source src(41);
    const auto logits = src.logits(100);
    for (float t : {0.3f, 1.0f, 2.5f}) {
        candidates c;
        c.assign(logits);
        temperature(t).apply(c);
        c.softmax();
        std::vector<float> scaled(logits);
        for (float& l : scaled) l = float(double(l) / t);
        const auto expected = test::oracle_softmax(scaled);
        for (std::size_t i = 0; i < logits.size(); ++i) EXPECT_NEAR(c.probs[i], expected[i], 1e-6);
    }
}

TEST(sampling_temperature, zero_or_negative_keeps_only_the_argmax_lowest_id_on_ties) {
    for (float t : {0.0f, -0.0f, -1.0f}) {
        candidates c;
        c.assign(std::vector<float>{1.0f, 9.0f, -2.0f, 9.0f, 3.0f});
        temperature(t).apply(c);
        EXPECT_EQ(c.ids, (std::vector<token_id>{1})) << "t = " << t;
        EXPECT_EQ(c.logits, (std::vector<float>{9.0f}));
        EXPECT_TRUE(c.sorted);
    }
}

TEST(sampling_temperature, keeps_a_sorted_set_sorted_when_order_survives) {
    candidates c;
    c.assign(std::vector<float>{1.0f, 3.0f, 2.0f});
    c.sort();
    temperature(0.7f).apply(c);
    EXPECT_TRUE(c.sorted);
    EXPECT_EQ(c.ids, (std::vector<token_id>{1, 2, 0}));
}

TEST(sampling_temperature, clears_sorted_when_division_creates_a_tie_against_the_id_order) {
    // Two logits that overflow to +inf under a tiny temperature: id 1 then id 0 becomes a tie in
    // which id 0 should come first.
    candidates c;
    c.assign(std::vector<float>{3.0e38f, 3.1e38f});
    c.sort();
    ASSERT_EQ(c.ids, (std::vector<token_id>{1, 0}));
    temperature(0.5f).apply(c);
    EXPECT_FALSE(c.sorted);
}

TEST(sampling_temperature, na_n_is_rejected) { EXPECT_THROW(temperature(std::nanf("")), invalid_argument_error); }

}  // namespace
}  // namespace nexttok

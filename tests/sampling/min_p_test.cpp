// min-p against llama.cpp's definition: keep logit >= max_logit + log(min_p) (p_i >= min_p * p_max);
// min_p <= 0 is a no-op; min_keep.
#include <nexttok/sampling/min_p.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace nexttok {
namespace {

constexpr float inf = std::numeric_limits<float>::infinity();

// id 0: the maximum (3); id 1 exactly at the threshold 3 + log(0.25); id 2 one float below it;
// id 3 far below; id 4 well above.
std::vector<float> boundary_logits() {
    const float at = 3.0f + std::log(0.25f);
    return {3.0f, at, std::nextafter(at, -inf), -10.0f, 2.5f};
}

TEST(sampling_min_p, a_token_exactly_at_the_threshold_is_kept_one_below_is_not) {
    candidates c;
    c.assign(boundary_logits());
    min_p(0.25f).apply(c);
    EXPECT_EQ(c.ids, (std::vector<token_id>{0, 1, 4}));  // unsorted input: order preserved
    EXPECT_FALSE(c.sorted);
}

TEST(sampling_min_p, sorted_input_gives_the_same_set_sorted) {
    candidates c;
    c.assign(boundary_logits());
    c.sort();
    min_p(0.25f).apply(c);
    EXPECT_EQ(c.ids, (std::vector<token_id>{0, 4, 1}));
    EXPECT_TRUE(c.sorted);
}

TEST(sampling_min_p, probability_ratio_boundary_with_zero_maximum) {
    // max logit 0: the threshold is log(min_p) itself, so logit log(0.5) is p = 0.5 * p_max exactly.
    candidates c;
    c.assign(std::vector<float>{std::log(0.5f), 0.0f, std::nextafter(std::log(0.5f), -inf)});
    min_p(0.5f).apply(c);
    EXPECT_EQ(c.ids, (std::vector<token_id>{0, 1}));
}

TEST(sampling_min_p, non_positive_min_p_is_a_no_op) {
    for (float p : {0.0f, -0.5f}) {
        candidates c;
        c.assign(boundary_logits());
        min_p(p).apply(c);
        EXPECT_EQ(c.size(), 5u);
        EXPECT_FALSE(c.sorted);
    }
}

TEST(sampling_min_p, min_keep_larger_than_the_passing_set_keeps_the_top_min_keep_sorted) {
    candidates c;
    c.assign(boundary_logits());
    min_p(0.25f, 4).apply(c);
    EXPECT_EQ(c.ids, (std::vector<token_id>{0, 4, 1, 2}));
    EXPECT_TRUE(c.sorted);
    c.assign(boundary_logits());
    min_p(0.25f, 100).apply(c);
    EXPECT_EQ(c.size(), 5u);
}

TEST(sampling_min_p, min_p_one_keeps_all_tied_maxima) {
    candidates c;
    c.assign(std::vector<float>{1.0f, 4.0f, 4.0f, 3.9f});
    min_p(1.0f).apply(c);
    EXPECT_EQ(c.ids, (std::vector<token_id>{1, 2}));
}

TEST(sampling_min_p, min_p_above_one_keeps_only_the_maximum) {
    candidates c;
    c.assign(std::vector<float>{1.0f, 4.0f, 4.0f, 3.9f});
    min_p(2.0f).apply(c);
    EXPECT_EQ(c.ids, (std::vector<token_id>{1}));
}

TEST(sampling_min_p, na_n_is_rejected) { EXPECT_THROW(min_p(std::nanf("")), invalid_argument_error); }

// Oracle on the probability ratio, in double; tokens within 1e-4 (relative) of the threshold are
// skipped as ambiguous between the two formulations (the exact boundary is tested above).
TEST(sampling_min_p, matches_probability_ratio_oracle_on_random_logits) {
    test::logit_source src(31);
    int n_checked = 0;
    for (float mp : {0.01f, 0.05f, 0.1f, 0.5f, 0.9f}) {
        for (int round = 0; round < 5; ++round) {
            const auto logits = src.logits(500, -6.0f, 6.0f);
            const auto probs = test::oracle_softmax(logits);
            const double p_max = *std::max_element(probs.begin(), probs.end());
            std::vector<token_id> expected;
            bool ambiguous = false;
            for (std::size_t i = 0; i < probs.size(); ++i) {
                const double ratio = probs[i] / (mp * p_max);
                if (std::abs(ratio - 1.0) < 1e-4) ambiguous = true;
                if (ratio >= 1.0) expected.push_back(static_cast<token_id>(i));
            }
            if (ambiguous) continue;
            candidates c;
            c.assign(logits);
            min_p(mp).apply(c);
            EXPECT_EQ(test::id_set(c), expected) << "min_p " << mp;
            ++n_checked;
        }
    }
    EXPECT_GE(n_checked, 20);
}

}  // namespace
}  // namespace nexttok

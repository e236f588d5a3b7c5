// top-p against llama.cpp's definition: softmax over the current set, sort descending, keep the
// prefix up to the first i with cum_sum >= p and i + 1 >= min_keep; p >= 1 is a no-op.
#include <nexttok/sampling/top_p.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace nexttok {
namespace {

// Probabilities 0.5, 0.25, 0.125, 0.125 (all exact in float, and so are their partial sums 0.5,
// 0.75, 0.875, 1), given to the ids in a shuffled order: id 2 -> 0.5, id 0 -> 0.25, id 3 -> 0.125,
// id 1 -> 0.125 (a tie, lower id first).
std::vector<float> dyadic_logits() { return {std::log(0.25f), std::log(0.125f), std::log(0.5f), std::log(0.125f)}; }

std::vector<token_id> kept_by_top_p(float p, std::size_t min_keep = 1) {
    candidates c;
    c.assign(dyadic_logits());
    top_p(p, min_keep).apply(c);
    EXPECT_TRUE(c.sorted);
    return c.ids;
}

TEST(sampling_top_p, dyadic_probabilities_are_exact_so_the_boundary_is_exact) {
    // Precondition of the boundary tests below: the float softmax gives exactly these values.
    candidates c;
    c.assign(dyadic_logits());
    c.softmax();
    EXPECT_EQ(c.probs, (std::vector<float>{0.25f, 0.125f, 0.5f, 0.125f}));
}

TEST(sampling_top_p, cumulative_sum_exactly_equal_to_p_stops_there) {
    EXPECT_EQ(kept_by_top_p(0.75f), (std::vector<token_id>{2, 0}));      // 0.5 + 0.25 == 0.75
    EXPECT_EQ(kept_by_top_p(0.5f), (std::vector<token_id>{2}));          // 0.5 == 0.5
    EXPECT_EQ(kept_by_top_p(0.875f), (std::vector<token_id>{2, 0, 1}));  // tie: id 1 before id 3
}

TEST(sampling_top_p, just_above_the_boundary_takes_one_more) {
    EXPECT_EQ(kept_by_top_p(std::nextafter(0.75f, 1.0f)), (std::vector<token_id>{2, 0, 1}));
    EXPECT_EQ(kept_by_top_p(std::nextafter(0.5f, 1.0f)), (std::vector<token_id>{2, 0}));
    EXPECT_EQ(kept_by_top_p(std::nextafter(0.5f, 0.0f)), (std::vector<token_id>{2}));
}

TEST(sampling_top_p, p_at_least_one_is_a_no_op) {
    for (float p : {1.0f, 1.5f}) {
        candidates c;
        c.assign(dyadic_logits());
        top_p(p).apply(c);
        EXPECT_EQ(c.ids, (std::vector<token_id>{0, 1, 2, 3}));
        EXPECT_FALSE(c.sorted);
        EXPECT_FALSE(c.probs_valid);
    }
}

TEST(sampling_top_p, min_keep_overrides_the_cut) {
    EXPECT_EQ(kept_by_top_p(0.5f, 3), (std::vector<token_id>{2, 0, 1}));
    EXPECT_EQ(kept_by_top_p(0.5f, 0), (std::vector<token_id>{2}));  // 0 behaves as 1
    EXPECT_EQ(kept_by_top_p(0.5f, 10), (std::vector<token_id>{2, 0, 1, 3}));
}

TEST(sampling_top_p, na_n_is_rejected) { EXPECT_THROW(top_p(std::nanf("")), invalid_argument_error); }

// Oracle in double: the kept set must be a prefix of the stable order whose length m is the first
// where the cumulative probability reaches p. Float and double sums may differ by rounding (the float
// running sum of thousands of terms drifts by ~1e-6), so m is accepted when the double sum at m is
// >= p - tol and the sum at m - 1 is < p + tol; away from the boundary only one m qualifies. The
// exact boundary is covered by the dyadic tests above.
void expect_top_p_matches_oracle(const std::vector<float>& logits, float p, const candidates& c) {
    constexpr double tol = 1e-5;
    const auto order = test::oracle_order(logits);
    const auto probs = test::oracle_softmax(logits);
    const std::size_t m = c.size();
    ASSERT_GE(m, 1u);
    ASSERT_LE(m, order.size());
    EXPECT_EQ(c.ids, std::vector<token_id>(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(m)));
    double cum_before = 0.0;
    for (std::size_t i = 0; i + 1 < m; ++i) cum_before += probs[order[i]];
    const double cum_at = cum_before + probs[order[m - 1]];
    EXPECT_GE(cum_at, p - tol) << "kept " << m << ": mass below p";
    EXPECT_LT(cum_before, p + tol) << "kept " << m << ": one fewer already reaches p";
}

TEST(sampling_top_p, matches_oracle_on_random_logits_small_and_large_sets) {
    test::logit_source src(21);
    // 3000 candidates take the adaptive path (top 256 sorted first); with a flat distribution the 256
    // are not enough and the full sort must follow.
    for (std::size_t n : {50u, 3000u}) {
        for (float spread : {2.0f, 8.0f, 0.01f}) {
            for (float p : {0.3f, 0.9f, 0.95f, 0.99f}) {
                const auto logits = src.logits(n, -spread, spread);
                candidates c;
                c.assign(logits);
                top_p(p).apply(c);
                SCOPED_TRACE("n " + std::to_string(n) + " spread " + std::to_string(spread) + " p " +
                             std::to_string(p));
                expect_top_p_matches_oracle(logits, p, c);
                EXPECT_TRUE(c.sorted);
            }
        }
    }
}

TEST(sampling_top_p, large_flat_set_needs_more_than_the_first_prefix_and_stays_sorted) {
    test::logit_source src(22);
    const auto logits = src.logits(2048, -0.01f, 0.01f);  // nearly uniform: ~1843 tokens for p = 0.9
    candidates c;
    c.assign(logits);
    top_p(0.9f).apply(c);
    EXPECT_GT(c.size(), 1500u);
    auto expected = test::oracle_order(logits);
    expected.resize(c.size());
    EXPECT_EQ(c.ids, expected);  // the kept prefix is in sorted order
}

}  // namespace
}  // namespace nexttok

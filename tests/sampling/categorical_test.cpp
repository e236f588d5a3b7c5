// The categorical ("dist") selector: distribution (chi-square), determinism, edge cases.
#include <nexttok/sampling/categorical.hpp>
#include <nexttok/sampling/sampler_chain.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace nexttok {
namespace {

// 0.999 quantile of the chi-square distribution with 7 degrees of freedom (8 categories): a correct
// sampler exceeds it with probability 0.001 for a random seed; the seed here is fixed.
constexpr double chi2_999_df7 = 24.32;

const std::vector<double> eight_probs{0.30, 0.20, 0.15, 0.10, 0.10, 0.08, 0.05, 0.02};

std::vector<float> log_of(const std::vector<double>& probs) {
    std::vector<float> logits;
    for (double p : probs) logits.push_back(static_cast<float>(std::log(p)));
    return logits;
}

std::vector<int> draw_counts(const std::vector<float>& logits, std::uint64_t seed, int n) {
    auto chain = make_sampler_chain(categorical(seed));
    std::vector<int> counts(logits.size(), 0);
    for (int i = 0; i < n; ++i) ++counts.at(static_cast<std::size_t>(chain.sample(logits)));
    return counts;
}

TEST(sampling_categorical, chi_square_of_eight_token_distribution_is_below_the999_quantile) {
    const int n = 20000;
    const auto logits = log_of(eight_probs);
    const auto expected = test::oracle_softmax(logits);  // = eight_probs up to float rounding
    const auto counts = draw_counts(logits, 12345, n);
    const double stat = test::chi_square(counts, expected, n);
    EXPECT_LT(stat, chi2_999_df7) << "chi-square " << stat;

    // The test has power: the same counts against a distribution with two probabilities swapped
    // (0.30 <-> 0.20) are rejected by far.
    auto wrong = expected;
    std::swap(wrong[0], wrong[1]);
    EXPECT_GT(test::chi_square(counts, wrong, n), 10 * chi2_999_df7);
}

TEST(sampling_categorical, same_seed_same_tokens_different_seed_different_tokens) {
    test::logit_source src(61);
    const auto logits = src.logits(64, -2.0f, 2.0f);
    auto a = make_sampler_chain(categorical(7));
    auto b = make_sampler_chain(categorical(7));
    auto c = make_sampler_chain(categorical(8));
    std::vector<token_id> ta, tb, tc;
    for (int i = 0; i < 200; ++i) {
        ta.push_back(a.sample(logits));
        tb.push_back(b.sample(logits));
        tc.push_back(c.sample(logits));
    }
    EXPECT_EQ(ta, tb);
    EXPECT_NE(ta, tc);
}

TEST(sampling_categorical, reset_restarts_the_stream) {
    test::logit_source src(62);
    const auto logits = src.logits(64, -2.0f, 2.0f);
    auto chain = make_sampler_chain(categorical(99));
    std::vector<token_id> first, second;
    for (int i = 0; i < 100; ++i) first.push_back(chain.sample(logits));
    chain.reset();
    for (int i = 0; i < 100; ++i) second.push_back(chain.sample(logits));
    EXPECT_EQ(first, second);
}

TEST(sampling_categorical, single_candidate_is_returned_without_drawing) {
    categorical sel(5);
    const xoshiro256ss before = sel.rng();
    candidates c;
    c.assign(std::vector<float>{-3.0f});
    EXPECT_EQ(sel.select(c), 0);
    EXPECT_EQ(sel.rng(), before);
    EXPECT_TRUE(c.probs_valid);
    EXPECT_EQ(c.probs[0], 1.0f);
}

TEST(sampling_categorical, empty_set_gives_no_token) {
    categorical sel(5);
    candidates c;
    EXPECT_EQ(sel.select(c), no_token);
}

TEST(sampling_categorical, never_draws_a_zero_probability_candidate) {
    constexpr float ninf = -std::numeric_limits<float>::infinity();
    const std::vector<float> logits{ninf, 0.0f, ninf, 0.0f, ninf};
    const auto counts = draw_counts(logits, 3, 5000);
    EXPECT_EQ(counts[0] + counts[2] + counts[4], 0);
    EXPECT_EQ(counts[1] + counts[3], 5000);
}

}  // namespace
}  // namespace nexttok

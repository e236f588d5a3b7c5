// top-n-sigma, epsilon and eta cutoffs on hand-built logits, each against an oracle written here
// (statistics and softmax in double), with the equality boundaries, min_keep, ties and -inf.
#include <nexttok/sampling/epsilon_cutoff.hpp>
#include <nexttok/sampling/eta_cutoff.hpp>
#include <nexttok/sampling/top_n_sigma.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace nexttok {
namespace {

template <class Stage>
std::vector<token_id> kept(Stage stage, const std::vector<float>& logits) {
    candidates c;
    c.assign(logits);
    stage.apply(c);
    return test::id_set(c);
}

std::vector<token_id> ids_where(const std::vector<float>& logits, auto keep) {
    std::vector<token_id> out;
    for (std::size_t i = 0; i < logits.size(); ++i)
        if (keep(i)) out.push_back(static_cast<token_id>(i));
    return out;
}

TEST(sampling_top_n_sigma, threshold_is_max_minus_n_sigma_inclusive) {
    // {0, 0, 2, 2}: mean 1, sigma 1 exactly; threshold 2 - n.
    const std::vector<float> logits{0.0f, 2.0f, 0.0f, 2.0f};
    EXPECT_EQ(kept(top_n_sigma(2.0f), logits), (std::vector<token_id>{0, 1, 2, 3}));  // 0 == threshold: kept
    EXPECT_EQ(kept(top_n_sigma(std::nextafter(2.0f, 0.0f)), logits), (std::vector<token_id>{1, 3}));
    EXPECT_EQ(kept(top_n_sigma(0.5f), logits), (std::vector<token_id>{1, 3}));
}

TEST(sampling_top_n_sigma, negative_infinity_is_left_out_of_the_statistics) {
    // The same four finite logits and a -inf: sigma stays 1, the -inf is removed.
    const std::vector<float> logits{0.0f, 2.0f, -INFINITY, 0.0f, 2.0f};
    EXPECT_EQ(kept(top_n_sigma(2.0f), logits), (std::vector<token_id>{0, 1, 3, 4}));
}

TEST(sampling_top_n_sigma, matches_the_oracle_and_keeps_the_maximum) {
    test::logit_source src(601);
    for (int round = 0; round < 200; ++round) {
        const auto logits = src.logits(64, -6.0f, 6.0f);
        const float n = src.uniform(0.0f, 3.0f);
        double mean = 0.0, var = 0.0, max = -INFINITY;
        for (float l : logits) mean += l, max = std::max(max, double(l));
        mean /= logits.size();
        for (float l : logits) var += (l - mean) * (l - mean);
        const double threshold = max - n * std::sqrt(var / logits.size());
        // Skip draws within float rounding of the threshold (the library accumulates in float).
        bool near = false;
        for (float l : logits) near = near || std::fabs(l - threshold) < 1e-4;
        if (near) continue;
        const auto want = ids_where(logits, [&](std::size_t i) { return logits[i] >= threshold; });
        EXPECT_EQ(kept(top_n_sigma(n), logits), want) << "round " << round;
        EXPECT_FALSE(want.empty());
    }
    EXPECT_EQ(kept(top_n_sigma(0.0f), std::vector<float>{1.0f, 5.0f}).size(), 2u);  // n <= 0: off
    EXPECT_EQ(kept(top_n_sigma(-1.0f), std::vector<float>{1.0f, 5.0f}).size(), 2u);
}

TEST(sampling_epsilon_cutoff, probability_equal_to_epsilon_is_kept) {
    // Four equal logits: p = 0.25 exactly.
    const std::vector<float> flat{0.0f, 0.0f, 0.0f, 0.0f};
    EXPECT_EQ(kept(epsilon_cutoff(0.25f), flat).size(), 4u);
    // Above every p: only the min_keep most likely survive, with every tie of the min_keep-th (HF's
    // topk threshold): all four are tied here.
    EXPECT_EQ(kept(epsilon_cutoff(std::nextafter(0.25f, 1.0f)), flat).size(), 4u);
}

TEST(sampling_epsilon_cutoff, min_keep_keeps_the_most_likely_with_their_ties) {
    const std::vector<float> logits{0.0f, 3.0f, 1.0f, 1.0f, -2.0f};
    EXPECT_EQ(kept(epsilon_cutoff(0.9f, 1), logits), (std::vector<token_id>{1}));
    EXPECT_EQ(kept(epsilon_cutoff(0.9f, 2), logits), (std::vector<token_id>{1, 2, 3}));  // tie at rank 2
    EXPECT_EQ(kept(epsilon_cutoff(0.9f, 4), logits), (std::vector<token_id>{0, 1, 2, 3}));
}

TEST(sampling_epsilon_cutoff, matches_the_oracle) {
    test::logit_source src(602);
    for (int round = 0; round < 200; ++round) {
        const auto logits = src.logits(40, -5.0f, 5.0f);
        const float eps = src.uniform(1e-4f, 0.2f);
        const auto p = test::oracle_softmax(logits);
        bool near = false;
        for (double q : p) near = near || std::fabs(q - eps) < 1e-6;
        if (near) continue;
        const float max = *std::max_element(logits.begin(), logits.end());
        const auto want = ids_where(logits, [&](std::size_t i) { return p[i] >= eps || logits[i] >= max; });
        EXPECT_EQ(kept(epsilon_cutoff(eps), logits), want) << "round " << round;
    }
    EXPECT_EQ(kept(epsilon_cutoff(0.0f), std::vector<float>{0.0f, -20.0f}).size(), 2u);  // off
}

TEST(sampling_eta_cutoff, cutoff_is_the_smaller_of_epsilon_and_its_entropy_scaled_root) {
    test::logit_source src(603);
    for (int round = 0; round < 200; ++round) {
        const auto logits = src.logits(40, -6.0f, 6.0f);
        const float eps = src.uniform(1e-4f, 0.3f);
        const auto p = test::oracle_softmax(logits);
        double h = 0.0;
        for (double q : p) h -= q * std::log(q);
        const double eta = std::min(double(eps), std::sqrt(double(eps)) * std::exp(-h));
        bool near = false;
        for (double q : p) near = near || std::fabs(q - eta) < 1e-6;
        if (near) continue;
        candidates c;
        c.assign(logits);
        EXPECT_NEAR(eta_cutoff(eps).eta(c), eta, 1e-6 * eta + 1e-9);
        const float max = *std::max_element(logits.begin(), logits.end());
        const auto want = ids_where(logits, [&](std::size_t i) { return p[i] >= eta || logits[i] >= max; });
        EXPECT_EQ(kept(eta_cutoff(eps), logits), want) << "round " << round;
    }
}

TEST(sampling_eta_cutoff, a_high_entropy_lowers_the_cutoff_below_epsilon) {
    // 100 equal logits: H = ln 100, so eta = min(0.01, sqrt(0.01) / 100) = 0.001 and every token
    // (p = 0.01) survives on its probability.
    const std::vector<float> flat(100, 0.0f);
    candidates c;
    c.assign(flat);
    EXPECT_NEAR(eta_cutoff(0.01f).eta(c), 0.001, 1e-6);
    EXPECT_EQ(kept(eta_cutoff(0.01f), flat).size(), 100u);
    // A peaked distribution: low entropy, so eta = epsilon and the tail goes.
    const std::vector<float> peaked{10.0f, 0.0f, 0.0f, 0.0f};
    EXPECT_EQ(kept(eta_cutoff(0.01f), peaked), (std::vector<token_id>{0}));
    EXPECT_THROW(eta_cutoff(NAN), invalid_argument_error);
}

}  // namespace
}  // namespace nexttok

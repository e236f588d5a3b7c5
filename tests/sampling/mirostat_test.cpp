// Mirostat v1 and v2 against oracles of their update rules (Basu et al. 2021 / llama.cpp): the
// truncation each step, the mu update from the observed surprise, and the feedback loop that drives
// the average surprise to the target tau.
#include <nexttok/sampling/mirostat.hpp>
#include <nexttok/sampling/mirostat_v2.hpp>
#include <nexttok/sampling/sampler_chain.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace nexttok {
namespace {

// Zipf-like logits: logit_i = -s * ln(i + 1), so p_i ~ (i + 1)^-s (ids shuffled by a fixed stride).
std::vector<float> zipf_logits(std::size_t n, float s) {
    std::vector<float> logits(n);
    for (std::size_t i = 0; i < n; ++i) logits[(i * 7) % n] = -s * std::log(static_cast<float>(i + 1));
    return logits;
}

TEST(sampling_mirostat_v2, truncates_at_mu_and_updates_mu_from_the_observed_surprise) {
    const auto logits = zipf_logits(101, 1.1f);
    const auto p = test::oracle_softmax(logits);
    const float tau = 3.0f, eta = 0.1f;
    mirostat_v2 m(tau, eta, 5);
    for (int step = 0; step < 50; ++step) {
        const float mu = m.mu();
        // Oracle: survivors are the tokens with -log2 p <= mu (at least the most likely).
        double mass = 0.0;
        std::size_t n_keep = 0;
        for (token_id id : test::oracle_order(logits))
            if (-std::log2(p[id]) <= mu) mass += p[id], ++n_keep;
        if (n_keep == 0) n_keep = 1, mass = p[test::oracle_order(logits)[0]];
        candidates c;
        c.assign(logits);
        const token_id t = m.select(c);
        ASSERT_EQ(c.size(), n_keep) << "step " << step;
        ASSERT_LE(-std::log2(p[t]), std::max<double>(mu, -std::log2(p[test::oracle_order(logits)[0]])) + 1e-5);
        const double surprise = -std::log2(p[t] / mass);  // under the truncated distribution
        EXPECT_NEAR(m.mu(), mu - eta * (surprise - tau), 1e-4) << "step " << step;
    }
}

TEST(sampling_mirostat_v1, k_follows_the_zipf_estimate_and_mu_the_surprise) {
    const std::size_t n = 200;
    const auto logits = zipf_logits(n, 1.2f);
    const float tau = 4.0f, eta = 0.2f;
    mirostat m(tau, eta, 9, 100, static_cast<std::int64_t>(n));
    for (int step = 0; step < 30; ++step) {
        const float mu = m.mu();
        // Oracle (double): s_hat from the 100 most likely (an exact Zipf: s_hat = 1.2), then k.
        const auto order = test::oracle_order(logits);
        const auto p = test::oracle_softmax(logits);
        double tb = 0.0, tt = 0.0;
        for (std::size_t i = 0; i + 1 < 100; ++i) {
            const double ti = std::log(double(i + 2) / double(i + 1));
            tb += ti * std::log(p[order[i]] / p[order[i + 1]]);
            tt += ti * ti;
        }
        const double s_hat = tb / tt;
        EXPECT_NEAR(s_hat, 1.2, 1e-4);
        const double eps = s_hat - 1.0;
        const double k = std::pow(eps * std::pow(2.0, mu) / (1.0 - std::pow(double(n), -eps)), 1.0 / s_hat);
        const auto want_k = std::min<std::size_t>(n, std::max<std::size_t>(1, static_cast<std::size_t>(k)));
        candidates c;
        c.assign(logits);
        const token_id t = m.select(c);
        // int(k) of a float k: allow one off where k is within rounding of an integer.
        EXPECT_NEAR(double(m.last_k()), double(want_k), std::fabs(k - std::round(k)) < 1e-3 ? 1.0 : 0.0)
            << "step " << step;
        double mass = 0.0;
        for (std::size_t i = 0; i < m.last_k(); ++i) mass += p[order[i]];
        EXPECT_NEAR(m.mu(), mu - eta * (-std::log2(p[t] / mass) - tau), 1e-3) << "step " << step;
    }
}

// The feedback loop: sum of errors = (mu_0 - mu_T) / eta, so a bounded mu means the mean surprise
// approaches tau. Over 4000 draws from a 1000-token Zipf distribution both versions must end with a
// mean observed surprise within 0.05 bits of tau (seeds 21 and 22).
template <class Selector>
double mean_surprise(Selector m, const std::vector<float>& logits) {
    const int n = 4000;
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
        candidates c;
        c.assign(logits);
        const token_id t = m.select(c);
        c.softmax();
        sum += -std::log2(c.probs[c.position_of(t)]);
    }
    return sum / n;
}

TEST(sampling_mirostat, both_versions_hold_the_average_surprise_at_tau) {
    const auto logits = zipf_logits(1000, 1.1f);
    EXPECT_NEAR(mean_surprise(mirostat_v2(5.0f, 0.1f, 21), logits), 5.0, 0.05);
    EXPECT_NEAR(mean_surprise(mirostat(5.0f, 0.1f, 22, 100, 1000), logits), 5.0, 0.05);
}

TEST(sampling_mirostat, reset_restores_mu_and_the_stream_and_one_candidate_is_returned) {
    const auto logits = zipf_logits(50, 1.0f);
    mirostat_v2 m(3.0f, 0.1f, 4);
    std::vector<token_id> first, second;
    for (int i = 0; i < 20; ++i) {
        candidates c;
        c.assign(logits);
        first.push_back(m.select(c));
    }
    m.reset();
    EXPECT_EQ(m.mu(), 6.0f);
    for (int i = 0; i < 20; ++i) {
        candidates c;
        c.assign(logits);
        second.push_back(m.select(c));
    }
    EXPECT_EQ(first, second);
    candidates one;
    one.assign(std::vector<float>{2.0f});
    mirostat v1(3.0f, 0.1f, 4);
    EXPECT_EQ(v1.select(one), 0);
    EXPECT_FLOAT_EQ(v1.mu(), 6.0f - 0.1f * (0.0f - 3.0f));
    // In a chain the reported log-probability is under the truncated distribution.
    auto chain = make_sampler_chain(mirostat_v2(1.0f, 0.1f, 3));
    chain.sample(logits);
    const auto& c = chain.last_candidates();
    EXPECT_LT(c.size(), logits.size());
    EXPECT_LE(chain.last_logprob(), 0.0f);
}

}  // namespace
}  // namespace nexttok

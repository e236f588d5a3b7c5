// sampling_options + make_sampler: llama.cpp's defaults and default order, validation, greedy at
// temperature 0, the truncated distribution after temperature/top-k/top-p, determinism.
#include <nexttok/sampling/make_sampler.hpp>
#include <nexttok/sampling/sampler_chain.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace nexttok {
namespace {

TEST(sampling_options, defaults_are_llama_cpps) {
    const sampling_options o;
    EXPECT_EQ(o.temperature, 0.8f);
    EXPECT_EQ(o.top_k, 40);
    EXPECT_EQ(o.top_p, 0.95f);
    EXPECT_EQ(o.min_p, 0.05f);
    EXPECT_NO_THROW(o.validate());
}

TEST(sampling_options, invalid_values_throw) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    auto with = [](auto change) {
        sampling_options o;
        change(o);
        return o;
    };
    const std::vector<sampling_options> bad{
        with([](auto& o) { o.temperature = -0.1f; }), with([&](auto& o) { o.temperature = nan; }),
        with([&](auto& o) { o.temperature = inf; }),  with([](auto& o) { o.top_k = -1; }),
        with([](auto& o) { o.top_p = 0.0f; }),        with([](auto& o) { o.top_p = 1.01f; }),
        with([&](auto& o) { o.top_p = nan; }),        with([](auto& o) { o.min_p = -0.01f; }),
        with([](auto& o) { o.min_p = 1.5f; }),        with([&](auto& o) { o.min_p = nan; }),
    };
    for (std::size_t i = 0; i < bad.size(); ++i) {
        EXPECT_THROW(bad[i].validate(), invalid_argument_error) << "case " << i;
        EXPECT_THROW(make_sampler(bad[i]), invalid_argument_error) << "case " << i;
    }
    // The boundaries that are allowed.
    const std::vector<sampling_options> good{
        with([](auto& o) { o.temperature = 0.0f; }), with([](auto& o) { o.top_k = 0; }),
        with([](auto& o) { o.top_p = 1.0f; }),       with([](auto& o) { o.min_p = 0.0f; }),
        with([](auto& o) { o.min_p = 1.0f; }),
    };
    for (const auto& o : good) EXPECT_NO_THROW(o.validate());
}

TEST(sampling_options, error_message_names_the_field) {
    sampling_options o;
    o.top_p = 2.0f;
    try {
        o.validate();
        FAIL() << "no exception";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("top_p"), std::string::npos) << e.what();
    }
}

TEST(sampling_make_sampler, temperature_zero_gives_exactly_the_argmax) {
    sampling_options o;
    o.temperature = 0.0f;
    auto s = make_sampler(o);
    test::logit_source src(81);
    for (int step = 0; step < 200; ++step) {
        // Half the steps with heavy ties at the maximum.
        const auto logits = step % 2 ? src.logits(1000) : src.tied_logits(1000, 5);
        const auto expected = std::max_element(logits.begin(), logits.end()) - logits.begin();
        EXPECT_EQ(s.sample(logits), expected) << "step " << step;
        EXPECT_EQ(s.last_logprob(), 0.0f);
    }
}

TEST(sampling_make_sampler, matches_the_static_default_chain_token_for_token) {
    sampling_options o;
    o.seed = 77;
    auto dyn = make_sampler(o);
    auto stat = make_sampler_chain(top_k(o.top_k), top_p(o.top_p, o.min_keep), min_p(o.min_p, o.min_keep),
                                   temperature(o.temperature), categorical(o.seed));
    test::logit_source src(82);
    for (int step = 0; step < 300; ++step) {
        const auto logits = src.logits(2000, -3.0f, 9.0f);
        EXPECT_EQ(dyn.sample(logits), stat.sample(logits)) << "step " << step;
        EXPECT_EQ(dyn.last_logprob(), stat.last_logprob());
    }
}

TEST(sampling_make_sampler, same_seed_same_sequence_different_seed_different_sequence) {
    auto run = [](std::uint64_t seed) {
        sampling_options o;
        o.seed = seed;
        o.temperature = 1.5f;
        auto s = make_sampler(o);
        test::logit_source src(83);  // same logits for every run
        std::vector<token_id> out;
        for (int step = 0; step < 200; ++step) out.push_back(s.sample(src.logits(256, -1.0f, 1.0f)));
        return out;
    };
    EXPECT_EQ(run(1), run(1));
    EXPECT_NE(run(1), run(2));
}

// 0.999 quantile of chi-square with 4 degrees of freedom (5 surviving categories).
constexpr double chi2_999_df4 = 18.47;

// The default chain with top_k = 6, top_p = 0.9, min_p = 0.05, temperature = 0.7 on 8 tokens, against
// the closed-form truncated distribution: keep the 6 most likely; renormalize (T = 1, llama.cpp's
// order applies temperature last); keep the shortest prefix with mass >= 0.9 (5 tokens here, with
// margins: 0.851 before, 0.936 at the cut); min-p removes nothing (smallest ratio 0.2); then
// q_i proportional to exp(logit_i / 0.7) over the 5 survivors.
TEST(sampling_make_sampler, after_top_k_top_p_and_temperature_draws_follow_the_truncated_distribution) {
    const std::vector<double> p{0.30, 0.22, 0.16, 0.12, 0.08, 0.06, 0.04, 0.02};
    std::vector<float> logits;
    for (double x : p) logits.push_back(static_cast<float>(std::log(x)));
    // Shuffle the ids so that token id order is not probability order.
    const std::vector<token_id> perm{5, 2, 7, 0, 3, 6, 1, 4};  // probability rank r -> token perm[r]
    std::vector<float> vocab_logits(8);
    for (std::size_t r = 0; r < 8; ++r) vocab_logits[static_cast<std::size_t>(perm[r])] = logits[r];

    // Oracle.
    std::vector<double> top6(p.begin(), p.begin() + 6);
    double mass6 = 0.0;
    for (double x : top6) mass6 += x;
    double cum = 0.0;
    std::size_t n_keep = 0;
    while (cum < 0.9) cum += top6[n_keep++] / mass6;
    ASSERT_EQ(n_keep, 5u);
    ASSERT_GT(cum - 0.9, 1e-2);
    ASSERT_GT(0.9 - (cum - top6[4] / mass6), 1e-2);
    std::vector<double> q(n_keep);
    double z = 0.0;
    for (std::size_t r = 0; r < n_keep; ++r) z += q[r] = std::exp(double(logits[r]) / 0.7);
    for (double& x : q) x /= z;

    sampling_options o;
    o.top_k = 6;
    o.top_p = 0.9f;
    o.min_p = 0.05f;
    o.temperature = 0.7f;
    o.seed = 4242;
    auto s = make_sampler(o);
    const int n = 20000;
    std::vector<int> counts_by_token(8, 0);
    for (int i = 0; i < n; ++i) ++counts_by_token.at(static_cast<std::size_t>(s.sample(vocab_logits)));

    std::vector<int> counts(n_keep);
    for (std::size_t r = 0; r < n_keep; ++r) counts[r] = counts_by_token[static_cast<std::size_t>(perm[r])];
    for (std::size_t r = n_keep; r < 8; ++r)
        EXPECT_EQ(counts_by_token[static_cast<std::size_t>(perm[r])], 0) << "filtered token drawn, rank " << r;
    const double stat = test::chi_square(counts, q, n);
    EXPECT_LT(stat, chi2_999_df4) << "chi-square " << stat;

    // Power: the untruncated, untempered distribution is rejected.
    std::vector<double> untruncated(p.begin(), p.begin() + 5);
    EXPECT_GT(test::chi_square(counts, untruncated, n), 10 * chi2_999_df4);
}

TEST(sampling_make_sampler, reset_restarts_the_sequence) {
    auto s = make_sampler(sampling_options{});
    test::logit_source src(84);
    const auto logits = src.logits(300, -2.0f, 2.0f);
    std::vector<token_id> first, second;
    for (int i = 0; i < 100; ++i) first.push_back(s.sample(logits));
    s.reset();
    for (int i = 0; i < 100; ++i) second.push_back(s.sample(logits));
    EXPECT_EQ(first, second);
}

}  // namespace
}  // namespace nexttok

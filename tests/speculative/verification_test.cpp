// The pieces of speculative decoding without a model: the modified rejection sampling against its
// closed form (the kept token is distributed as p, the acceptance rate is sum(min(p, q))), the
// samplers' distribution()/choose() against sample(), and n-gram lookup against hand-made sequences.
#include <nexttok/sampling.hpp>
#include <nexttok/speculative/detail/rejection_sampler.hpp>
#include <nexttok/speculative/drafter.hpp>
#include <nexttok/speculative/ngram_drafter.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

namespace nexttok {
namespace {

// Chi-square statistic of `counts` against probabilities `p` (all cells with p > 0 have expected >= 5
// in these tests) and its degrees of freedom. A count in a cell of probability 0 is a failure.
std::pair<double, int> chi_square(const std::vector<long>& counts, const std::vector<double>& p, long n) {
    double stat = 0.0;
    int cells = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (p[i] == 0.0) {
            EXPECT_EQ(counts[i], 0) << "token " << i << " has probability 0";
            continue;
        }
        const double e = p[i] * static_cast<double>(n);
        stat += (static_cast<double>(counts[i]) - e) * (static_cast<double>(counts[i]) - e) / e;
        ++cells;
    }
    return {stat, cells - 1};
}

// The 1 - 1e-4 quantile of chi-square with df degrees of freedom (Wilson-Hilferty; z = 3.719).
double chi_square_bound(int df) {
    const double a = 2.0 / (9.0 * df);
    return df * std::pow(1.0 - a + 3.719 * std::sqrt(a), 3.0);
}

token_distribution view(const std::vector<token_id>& ids, const std::vector<float>& probs) { return {ids, probs}; }

// Draws x from q with its own stream, verifies it, and counts the token kept: n = 400000 draws,
// seed 1 (verification) and 2 (draft); df = 5 (six tokens of positive probability); bound 1 - 1e-4.
TEST(rejection_sampler, keeps_tokens_distributed_as_p_and_accepts_sum_min_p_q) {
    const std::vector<token_id> ids{0, 1, 2, 3, 4, 5, 6};
    const std::vector<float> p{0.40f, 0.25f, 0.15f, 0.10f, 0.06f, 0.04f, 0.0f};
    const std::vector<float> q{0.05f, 0.10f, 0.30f, 0.05f, 0.20f, 0.10f, 0.20f};  // mass where p has none
    detail::rejection_sampler verify(7, 1);
    xoshiro256ss draft_rng(2);
    const long n = 400000;
    std::vector<long> counts(7, 0);
    long accepted_count = 0;
    for (long i = 0; i < n; ++i) {
        const auto x = static_cast<token_id>(detail::draw_weighted(q, draft_rng));
        bool accepted = false;
        const token_id t = verify.verify(view(ids, p), x, q, accepted);
        if (accepted) {
            EXPECT_EQ(t, x);
            ++accepted_count;
        }
        ++counts[static_cast<std::size_t>(t)];
    }
    const std::vector<double> pd(p.begin(), p.end());
    const auto [stat, df] = chi_square(counts, pd, n);
    EXPECT_EQ(df, 5);
    EXPECT_LT(stat, chi_square_bound(df)) << "kept tokens are not distributed as p";
    // Acceptance rate sum(min(p, q)) = 0.05 + 0.10 + 0.15 + 0.05 + 0.06 + 0.04 = 0.45; binomial sd ~ 0.0008.
    EXPECT_NEAR(static_cast<double>(accepted_count) / n, 0.45, 0.004);
}

// A deterministic drafter (q one-hot on x): accepted with probability p(x), else drawn from p without x.
TEST(rejection_sampler, one_hot_drafts_keep_tokens_distributed_as_p) {
    const std::vector<token_id> ids{3, 1, 0, 2};  // any order
    const std::vector<float> p{0.1f, 0.2f, 0.3f, 0.4f};
    detail::rejection_sampler verify(4, 9);
    const long n = 200000;
    for (token_id x : {0, 2, 3}) {
        std::vector<long> counts(4, 0);
        long accepted_count = 0;
        for (long i = 0; i < n; ++i) {
            bool accepted = false;
            ++counts[static_cast<std::size_t>(verify.verify(view(ids, p), x, {}, accepted))];
            accepted_count += accepted;
        }
        const std::vector<double> pd{0.3, 0.2, 0.4, 0.1};  // by id
        const auto [stat, df] = chi_square(counts, pd, n);
        EXPECT_LT(stat, chi_square_bound(df)) << "draft " << x;
        EXPECT_NEAR(static_cast<double>(accepted_count) / n, pd[static_cast<std::size_t>(x)], 0.005) << "draft " << x;
    }
}

TEST(rejection_sampler, one_hot_target_keeps_its_token_without_drawing) {
    const std::vector<token_id> ids{7};
    const std::vector<float> one{1.0f};
    detail::rejection_sampler verify(10, 0);
    const std::vector<float> q(10, 0.1f);
    bool accepted = false;
    EXPECT_EQ(verify.verify(view(ids, one), 7, q, accepted), 7);
    EXPECT_TRUE(accepted);
    EXPECT_EQ(verify.verify(view(ids, one), 3, q, accepted), 7);
    EXPECT_FALSE(accepted);
    EXPECT_EQ(verify.draw(view(ids, one)), 7);
}

TEST(rejection_sampler, identical_p_and_q_accept_every_draft) {
    const std::vector<token_id> ids{0, 1, 2};
    const std::vector<float> p{0.5f, 0.3f, 0.2f};
    detail::rejection_sampler verify(3, 4);
    for (int i = 0; i < 10000; ++i) {
        bool accepted = false;
        const auto x = static_cast<token_id>(i % 3);
        verify.verify(view(ids, p), x, p, accepted);
        ASSERT_TRUE(accepted);
    }
}

// distribution() then choose() leaves the chain as sample() does: same processed log-probability,
// same history for the next step (penalties), and the distribution is the selector's.
TEST(distribution_sampler, distribution_then_choose_equals_sample) {
    const std::vector<float> logits{1.0f, 3.0f, 2.5f, -1.0f, 0.5f};
    auto a = make_sampler_chain(penalties(64, 1.3f, 0.0f, 0.0f, true), top_k{3}, temperature{0.7f}, categorical{5});
    auto b = a;
    sampling_options so;
    so.top_k = 3;
    so.temperature = 0.7f;
    so.repeat_penalty = 1.3f;
    so.top_p = 1.0f;
    so.min_p = 0.0f;
    dynamic_chain c = make_dynamic_chain(so);
    for (int step = 0; step < 6; ++step) {
        const token_id t = a.sample(logits);
        const token_distribution d = b.distribution(logits);
        ASSERT_EQ(d.size(), 3u);
        EXPECT_NEAR(std::accumulate(d.probs.begin(), d.probs.end(), 0.0), 1.0, 1e-6);
        b.choose(t);
        EXPECT_EQ(b.last_logprob(), a.last_logprob());
        const token_distribution dc = c.distribution(logits);
        ASSERT_EQ(dc.size(), 3u);
        for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(dc.probs[i], d.probs[i], 1e-6);
        c.choose(t);
        EXPECT_FLOAT_EQ(c.last_logprob(), a.last_logprob());
    }
}

TEST(distribution_sampler, greedy_states_its_argmax_and_keeps_the_logprob_of_sample) {
    const std::vector<float> logits{1.0f, 3.0f, 3.0f, -1.0f};
    auto a = make_sampler_chain(greedy{});
    auto b = a;
    const token_id t = a.sample(logits);
    const token_distribution d = b.distribution(logits);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d.ids[0], 1);  // ties to the lower id
    EXPECT_EQ(d.probs[0], 1.0f);
    b.choose(t);
    EXPECT_EQ(b.last_logprob(), a.last_logprob());
    sampling_options so;
    so.temperature = 0.0f;
    any_sampler erased = make_sampler(so);
    EXPECT_TRUE(erased.has_distribution());
    EXPECT_EQ(erased.distribution(logits).ids[0], 1);
}

TEST(distribution_sampler, chains_that_cannot_state_it_throw_unsupported) {
    sampling_options so;
    so.mirostat = 2;
    dynamic_chain m = make_dynamic_chain(so);
    EXPECT_FALSE(m.has_distribution());
    const std::vector<float> logits{1.0f, 2.0f};
    EXPECT_THROW(m.distribution(logits), unsupported_error);
    so.mirostat = 0;
    so.xtc_probability = 0.5f;
    dynamic_chain x = make_dynamic_chain(so);
    EXPECT_FALSE(x.has_distribution());
    EXPECT_THROW(x.distribution(logits), unsupported_error);
    EXPECT_TRUE(make_dynamic_chain(sampling_options{}).has_distribution());
}

// --- n-gram lookup -----------------------------------------------------------------------------

std::vector<token_id> propose(const ngram_drafter& d, const std::vector<token_id>& seq, std::int64_t k) {
    std::vector<token_id> out;
    detail::draft_pick_archetype never_called;  // a deterministic drafter does not pick
    d.propose(seq, k, never_called, out);
    return out;
}

TEST(ngram_drafter, proposes_what_followed_the_latest_earlier_occurrence) {
    const ngram_drafter d(2);
    const std::vector<token_id> s{1, 5, 6, 7, 8, 5, 6, 9, 4, 5, 6};
    // The last bigram (5, 6) occurred at positions 5 (latest) and 1: after the latest came 9, 4, 5, 6.
    EXPECT_EQ(propose(d, s, 3), (std::vector<token_id>{9, 4, 5}));
    // Past the end of the sequence the match goes on over what was just proposed: 9, 4, 5, 6 repeat.
    EXPECT_EQ(propose(d, s, 10), (std::vector<token_id>{9, 4, 5, 6, 9, 4, 5, 6, 9, 4}));
}

TEST(ngram_drafter, falls_back_to_shorter_ngrams_down_to_n_min) {
    const std::vector<token_id> s{3, 1, 2, 9, 8, 4, 2};  // (4, 2) never occurred before; 2 did, at 2
    EXPECT_EQ(propose(ngram_drafter(2, 1), s, 2), (std::vector<token_id>{9, 8}));
    EXPECT_TRUE(propose(ngram_drafter(2, 2), s, 2).empty());
    EXPECT_TRUE(propose(ngram_drafter(3), std::vector<token_id>{1, 2, 3}, 4).empty());
    EXPECT_TRUE(propose(ngram_drafter(3), std::vector<token_id>{1}, 4).empty());
}

TEST(ngram_drafter, a_repeated_token_proposes_its_continuation) {
    // (7, 7) at the end matches (7, 7) at positions 1..2 (the latest earlier one): 5, 7 followed.
    const std::vector<token_id> s{7, 7, 7, 5, 7, 7};
    EXPECT_EQ(propose(ngram_drafter(2), s, 2), (std::vector<token_id>{5, 7}));
    EXPECT_EQ(propose(ngram_drafter(2), std::vector<token_id>{4, 8, 8}, 3), (std::vector<token_id>{8, 8, 8}))
        << "a loop of period 1";
}

}  // namespace
}  // namespace nexttok

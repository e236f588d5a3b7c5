// Speculative sampling is exact: the joint distribution of the first two generated tokens matches the
// target's own, p(t1) * p(t2 | t1), computed in closed form from stories260K's logits (the decoder run
// on every t1, the processors applied by hand in double), not taken from another sampler. Chi-square
// goodness of fit, per configuration: a stated number of draws, one seed per draw (1..n), cells with
// an expected count below 5 pooled into one, df = cells - 1, and the bound the 1 - 1e-4 quantile.
// Drafts: a random model of the same vocabulary (which rarely agrees with the target, so rejections
// and residual draws dominate), sampled after the same processors; and a q8_0 copy drafting greedily
// (q one-hot: accepted with probability p(x), so an error in the acceptance rule skews the result).
// The same draws are also tested against a wrong distribution (temperature 0.8), which must fail:
// the test has the power to see a modest error. Also: same seed, same tokens with 1 and 2 threads.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/sampling.hpp>
#include <nexttok/speculative.hpp>
#include <nexttok/stopping.hpp>

#include "speculative_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <vector>

namespace nexttok {
namespace {

constexpr std::int64_t vocab = 512;

struct processing {
    int top_k = 0;       // 0: off
    double top_p = 1.0;  // 1: off
    double temperature = 1.0;
};

// The distribution the sampler draws from, in llama.cpp's order (top-k, top-p, then temperature),
// over the whole vocabulary: 0 outside the kept set. Ties rank the lower id first.
std::vector<double> processed(std::span<const float> logits, const processing& pr) {
    const auto n = logits.size();
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return logits[a] > logits[b]; });
    std::size_t keep = pr.top_k > 0 ? std::min<std::size_t>(static_cast<std::size_t>(pr.top_k), n) : n;
    auto softmax_of_first = [&](std::size_t m, double t) {
        std::vector<double> p(m);
        double sum = 0.0;
        for (std::size_t i = 0; i < m; ++i) sum += p[i] = std::exp((logits[order[i]] - logits[order[0]]) / t);
        for (double& x : p) x /= sum;
        return p;
    };
    if (pr.top_p < 1.0) {
        const std::vector<double> p = softmax_of_first(keep, 1.0);
        double cum = 0.0;
        for (std::size_t i = 0; i < keep; ++i)
            if ((cum += p[i]) >= pr.top_p) {
                keep = i + 1;
                break;
            }
    }
    const std::vector<double> p = softmax_of_first(keep, pr.temperature);
    std::vector<double> dense(n, 0.0);
    for (std::size_t i = 0; i < keep; ++i) dense[order[i]] = p[i];
    return dense;
}

// p(t1) p(t2 | t1) over vocab x vocab cells (index t1 * vocab + t2), after `prompt`.
std::vector<double> exact_joint(const std::shared_ptr<const model>& m, const std::vector<token_id>& prompt,
                                const processing& pr) {
    decoder<float> dec(m);
    kv_cache<float> cache(m->config(), 64);
    std::vector<float> logits(vocab);
    dec.forward(prompt, 0, cache, logits);
    const std::vector<double> p1 = processed(logits, pr);
    std::vector<double> joint(vocab * vocab, 0.0);
    const auto n = static_cast<std::int64_t>(prompt.size());
    for (token_id t1 = 0; t1 < vocab; ++t1) {
        if (p1[static_cast<std::size_t>(t1)] == 0.0) continue;
        dec.forward(std::span<const token_id>(&t1, 1), n, cache, logits);
        const std::vector<double> p2 = processed(logits, pr);
        for (std::int64_t t2 = 0; t2 < vocab; ++t2)
            joint[static_cast<std::size_t>(t1 * vocab + t2)] =
                p1[static_cast<std::size_t>(t1)] * p2[static_cast<std::size_t>(t2)];
    }
    return joint;
}

struct pooled_fit {
    double stat = 0.0;
    int df = 0;
    double bound = 0.0;
    long impossible = 0;  // draws in cells of probability 0
};

// Chi-square with pooling: cells of expected count < 5 form one cell. Bound: the 1 - 1e-4 quantile
// of chi-square(df), Wilson-Hilferty with z = 3.719.
pooled_fit pooled_chi_square(const std::vector<long>& counts, const std::vector<double>& p, long n) {
    pooled_fit f;
    double pooled_e = 0.0, pooled_o = 0.0;
    int cells = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const double e = p[i] * static_cast<double>(n);
        if (p[i] == 0.0) {
            f.impossible += counts[i];
            continue;
        }
        if (e < 5.0) {
            pooled_e += e;
            pooled_o += static_cast<double>(counts[i]);
            continue;
        }
        f.stat += (static_cast<double>(counts[i]) - e) * (static_cast<double>(counts[i]) - e) / e;
        ++cells;
    }
    if (pooled_e > 0.0) {
        f.stat += (pooled_o - pooled_e) * (pooled_o - pooled_e) / pooled_e;
        ++cells;
    }
    f.df = cells - 1;
    const double a = 2.0 / (9.0 * f.df);
    f.bound = f.df * std::pow(1.0 - a + 3.719 * std::sqrt(a), 3.0);
    return f;
}

sampling_options options_for(const processing& pr) {
    sampling_options so;
    so.top_k = pr.top_k;
    so.top_p = static_cast<float>(pr.top_p);
    so.min_p = 0.0f;
    so.temperature = static_cast<float>(pr.temperature);
    return so;
}

class speculative_sampling : public ::testing::Test {
protected:
    void SetUp() override {
        NEXTTOK_REQUIRE_DATA(test::stories_gguf);
        s_ = std::make_unique<test::stories>(test::load_stories());
    }

    // n_draws speculative generations of two tokens after BOS (draw i with seed i + 1, k = 3 fixed so
    // that both tokens go through verification), tested against the closed form.
    // min_acceptance: the acceptance rate the draft must reach for the acceptance path to be tested.
    void expect_exact(const std::shared_ptr<const model>& draft_model, const processing& pr, bool greedy_draft,
                      long n_draws, double min_acceptance) {
        const std::vector<token_id> prompt{s_->tok.bos()};
        decoder<float> dec(s_->m), draft_dec(draft_model);
        kv_cache<float> cache(s_->m->config(), 16), draft_cache(draft_model->config(), 16);
        model_drafter draft(draft_dec, draft_cache);
        any_sampler sample = make_sampler(options_for(pr));
        max_new_tokens stop(2);
        speculative_options spec{.draft_max = 3, .adaptive = false, .greedy_draft = greedy_draft};
        std::vector<long> counts(vocab * vocab, 0);
        speculative_stats total;
        for (long i = 0; i < n_draws; ++i) {
            sample.reset();
            spec.seed = static_cast<std::uint64_t>(i + 1);
            const speculative_result r = generate_speculative(dec, cache, draft, prompt, sample, stop, spec);
            ASSERT_EQ(r.tokens.size(), 2u);
            ++counts[static_cast<std::size_t>(r.tokens[0] * vocab + r.tokens[1])];
            total.n_drafted += r.speculation.n_drafted;
            total.n_accepted += r.speculation.n_accepted;
        }
        EXPECT_GE(total.acceptance_rate(), min_acceptance);
        EXPECT_GT(total.n_drafted - total.n_accepted, n_draws / 20) << "the residual draw is hardly tested";

        const pooled_fit f = pooled_chi_square(counts, exact_joint(s_->m, prompt, pr), n_draws);
        EXPECT_EQ(f.impossible, 0);
        EXPECT_GE(f.df, 8) << "too few cells for a meaningful test";
        EXPECT_LT(f.stat, f.bound) << "df " << f.df << ", acceptance " << total.acceptance_rate();
        processing wrong = pr;
        wrong.temperature = 0.8;
        const pooled_fit w = pooled_chi_square(counts, exact_joint(s_->m, prompt, wrong), n_draws);
        EXPECT_GT(w.stat, w.bound) << "the test cannot tell temperature 0.8 from 1: df " << w.df;
        std::printf(
            "[ chi-square ] top_k %d top_p %.2f greedy_draft %d: %ld draws, df %d, stat %.1f < bound %.1f "
            "(temperature 0.8: %.1f), acceptance %.3f\n",
            pr.top_k, pr.top_p, greedy_draft ? 1 : 0, n_draws, f.df, f.stat, f.bound, w.stat, total.acceptance_rate());
    }

    std::unique_ptr<test::stories> s_;
};

// About 3 s per configuration on one core (stories260K, one forward call of 4 tokens per draw, and
// a second one after most rejections). The sanitizer builds (about 10x slower) check the same code
// for memory and undefined behaviour on a third of the draws: the bound's false-alarm rate is the
// same at any count, and the wrong temperature's statistic, which grows with the count, still lies
// far above it (at 12000 draws it is 10 to 35 times the bound).
constexpr long all_draws = 12000;
#ifdef NEXTTOK_SANITIZED
constexpr long n_draws = all_draws / 3;
#else
constexpr long n_draws = all_draws;
#endif

// The random draft's q is nearly uniform: tokens with p > 1/512 are accepted, the rest mostly not.
TEST_F(speculative_sampling, random_draft_at_temperature_1_matches_the_target) {
    expect_exact(test::random_draft(), {}, false, n_draws, 0.01);
}

// The draft's top 10 are nearly disjoint from the target's: almost every draft is rejected and the
// tokens come from the residual max(0, p - q).
TEST_F(speculative_sampling, random_draft_with_top_k_matches_the_target) {
    expect_exact(test::random_draft(), {.top_k = 10}, false, n_draws, 0.0);
}

// Top-p 0.95 leaves few cells with an expected count of 5: every build takes all the draws (a third
// gives df 4, below the test's minimum of 8).
TEST_F(speculative_sampling, random_draft_with_top_p_matches_the_target) {
    expect_exact(test::random_draft(), {.top_p = 0.95}, false, all_draws, 0.0);
}

// A draft close to the target, sampled: most drafts accepted, a fair share rejected.
TEST_F(speculative_sampling, sampled_q4_0_draft_matches_the_target) {
    expect_exact(test::q4_0_copy(*s_->m), {}, false, n_draws, 0.5);
}

// One-hot q: x is kept with probability p(x); always keeping it would favour the draft's argmax.
TEST_F(speculative_sampling, greedy_q8_0_draft_matches_the_target) {
    expect_exact(test::q8_0_copy(*s_->m), {}, true, n_draws, 0.5);
}

// Same seed, same tokens, with 1 and 2 threads in both decoders.
TEST_F(speculative_sampling, same_seed_same_tokens_whatever_the_thread_count) {
    const auto prompt = s_->tok.encode("Once upon a time", true);
    const auto draft_model = test::q8_0_copy(*s_->m);
    std::vector<std::vector<token_id>> runs;
    for (int threads : {1, 2, 1}) {
        decoder<float> dec(s_->m, threads), draft_dec(draft_model, threads);
        kv_cache<float> cache(s_->m->config(), 256), draft_cache(draft_model->config(), 256);
        model_drafter draft(draft_dec, draft_cache);
        generation_options o;
        o.max_new_tokens = 80;
        o.sampling.temperature = 1.0f;
        o.sampling.seed = 42;
        runs.push_back(generate_speculative(dec, cache, draft, s_->tok, prompt, o, {.draft_max = 5}).tokens);
    }
    EXPECT_EQ(runs[0].size(), 80u);
    EXPECT_EQ(runs[0], runs[1]);
    EXPECT_EQ(runs[0], runs[2]);
}

}  // namespace
}  // namespace nexttok

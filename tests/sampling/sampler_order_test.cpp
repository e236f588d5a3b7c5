// sampler_order (the text forms of llama.cpp's --samplers and --sampling-seq) and make_sampler with
// the full option set: the chain it builds equals the same stages composed by hand, in llama.cpp's
// order and in Hugging Face's; the HF order passes a chi-square test against its closed form.
#include <nexttok/sampling.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace nexttok {
namespace {

using s = sampler_stage;

TEST(sampling_order, parses_llama_cpp_names_aliases_and_characters) {
    EXPECT_EQ(parse_sampler_order("penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature"),
              (std::vector<sampler_stage>{s::penalties, s::dry, s::top_n_sigma, s::top_k, s::typical_p, s::top_p,
                                          s::min_p, s::xtc, s::temperature}));
    EXPECT_EQ(parse_sampler_order(" top-k , temp ;nucleus; typical ;min-p"),
              (std::vector<sampler_stage>{s::top_k, s::temperature, s::top_p, s::typical_p, s::min_p}));
    EXPECT_EQ(parse_sampler_chars("edskypmxt"),
              parse_sampler_order("penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature"));
    EXPECT_EQ(parse_sampler_chars("can"), (std::vector<sampler_stage>{s::epsilon, s::eta, s::no_repeat_ngram}));
    EXPECT_EQ(parse_sampler_order("llama"), llama_cpp_order());
    EXPECT_EQ(parse_sampler_order("hf"), hf_order());
    EXPECT_EQ(parse_sampler_order(format_sampler_order(hf_order())), hf_order());
}

TEST(sampling_order, rejects_unknown_duplicate_and_empty) {
    for (const char* bad : {"top_k;bogus", "top_k;top-k", "", ";;"})
        EXPECT_THROW(parse_sampler_order(bad), invalid_argument_error) << bad;
    for (const char* bad : {"kz", "kk", ""}) EXPECT_THROW(parse_sampler_chars(bad), invalid_argument_error) << bad;
    try {
        parse_sampler_order("top_k;bogus");
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("bogus"), std::string::npos);
    }
}

TEST(sampling_order, the_default_order_is_llama_cpps_and_hf_puts_temperature_before_the_filters) {
    const auto& llama = llama_cpp_order();
    const auto pos = [](const std::vector<sampler_stage>& o, sampler_stage x) {
        return std::find(o.begin(), o.end(), x) - o.begin();
    };
    EXPECT_EQ(sampling_options{}.sampler_order, llama);
    for (sampler_stage f : {s::top_k, s::typical_p, s::top_p, s::min_p, s::xtc}) {
        EXPECT_LT(pos(llama, s::penalties), pos(llama, f));
        EXPECT_LT(pos(llama, f), pos(llama, s::temperature));
        EXPECT_LT(pos(hf_order(), s::temperature), pos(hf_order(), f));
    }
    EXPECT_LT(pos(llama, s::top_k), pos(llama, s::typical_p));
    EXPECT_LT(pos(llama, s::typical_p), pos(llama, s::top_p));
    EXPECT_LT(pos(llama, s::top_p), pos(llama, s::min_p));
    EXPECT_LT(pos(llama, s::min_p), pos(llama, s::xtc));
}

sampling_options everything_on() {
    sampling_options o;
    o.temperature = 0.9f;
    o.top_k = 50;
    o.top_p = 0.9f;
    o.min_p = 0.02f;
    o.typical_p = 0.95f;
    o.repeat_penalty = 1.2f;
    o.frequency_penalty = 0.1f;
    o.presence_penalty = 0.05f;
    o.repeat_last_n = 32;
    o.dry_multiplier = 0.8f;
    o.xtc_probability = 0.3f;
    o.xtc_threshold = 0.05f;
    o.logit_bias = {{3, 1.5f}, {7, -INFINITY}};
    o.seed = 99;
    return o;
}

TEST(sampling_make_sampler_full, llama_order_equals_the_hand_composed_chain) {
    const sampling_options o = everything_on();
    auto dyn = make_sampler(o);
    auto stat = make_sampler_chain(logit_bias(o.logit_bias), penalties(32, 1.2f, 0.1f, 0.05f), dry(0.8f, 1.75f, 2, -1),
                                   top_k(50), typical_p(0.95f), top_p(0.9f), min_p(0.02f),
                                   xtc(0.3f, 0.05f, 1, detail::xtc_seed(99)), temperature(0.9f), categorical(99));
    test::logit_source src(901);
    for (int step = 0; step < 300; ++step) {
        auto logits = src.logits(200, -2.0f, 6.0f);
        const token_id a = dyn.sample(logits);
        ASSERT_EQ(a, stat.sample(logits)) << "step " << step;
        EXPECT_NE(a, 7) << "banned by a -inf bias";
        EXPECT_EQ(dyn.last_logprob(), stat.last_logprob());
    }
}

TEST(sampling_make_sampler_full, hf_order_equals_the_hand_composed_chain) {
    sampling_options o;
    o.sampler_order = hf_order();
    o.temperature = 0.7f;
    o.top_k = 20;
    o.top_p = 0.8f;
    o.min_p = 0.0f;
    o.epsilon_cutoff = 3e-4f;
    o.eta_cutoff = 1e-3f;
    o.no_repeat_ngram_size = 3;
    o.repeat_penalty = 1.1f;
    o.repeat_last_n = -1;
    o.seed = 5;
    auto dyn = make_sampler(o);
    auto stat = make_sampler_chain(penalties(-1, 1.1f, 0.0f, 0.0f), no_repeat_ngram(3), temperature(0.7f), top_k(20),
                                   top_p(0.8f), epsilon_cutoff(3e-4f), eta_cutoff(1e-3f), categorical(5));
    test::logit_source src(902);
    for (int step = 0; step < 300; ++step) {
        auto logits = src.logits(100, -3.0f, 3.0f);
        ASSERT_EQ(dyn.sample(logits), stat.sample(logits)) << "step " << step;
    }
}

TEST(sampling_make_sampler_full, greedy_still_applies_the_penalties) {
    sampling_options o;
    o.temperature = 0.0f;
    o.repeat_penalty = 1.6f;
    auto g = make_sampler(o);
    const std::vector<float> logits{0.0f, -1.5f, 2.0f, 3.0f};
    EXPECT_EQ(g.sample(logits), 3);
    EXPECT_EQ(g.sample(logits), 2);  // 3 / 1.6 < 2
    EXPECT_EQ(g.last_logprob(), 0.0f);
}

TEST(sampling_make_sampler_full, mirostat_replaces_the_filters) {
    sampling_options o;
    o.mirostat = 2;
    o.mirostat_tau = 2.0f;
    o.top_k = 1;  // would leave one candidate; mirostat chains do not run top-k (as llama.cpp)
    auto chain = make_dynamic_chain(o);
    EXPECT_EQ(chain.n_processors(), 1u);  // temperature only
    std::vector<float> logits(64);
    for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = -0.1f * static_cast<float>(i);
    chain.sample(logits);
    EXPECT_GT(chain.last_candidates().size(), 1u);
}

TEST(sampling_make_sampler_full, invalid_new_fields_name_the_field) {
    auto with = [](auto change) {
        sampling_options o;
        change(o);
        return o;
    };
    const std::vector<std::pair<sampling_options, std::string>> bad{
        {with([](auto& o) { o.typical_p = 0.0f; }), "typical_p"},
        {with([](auto& o) { o.repeat_penalty = 0.0f; }), "repeat_penalty"},
        {with([](auto& o) { o.repeat_last_n = -2; }), "repeat_last_n"},
        {with([](auto& o) { o.frequency_penalty = NAN; }), "frequency_penalty"},
        {with([](auto& o) { o.xtc_probability = 1.5f; }), "xtc_probability"},
        {with([](auto& o) { o.epsilon_cutoff = 1.0f; }), "epsilon_cutoff"},
        {with([](auto& o) { o.eta_cutoff = -0.1f; }), "eta_cutoff"},
        {with([](auto& o) { o.dry_allowed_length = 0; }), "dry_allowed_length"},
        {with([](auto& o) { o.mirostat = 3; }), "mirostat"},
        {with([](auto& o) {
             o.logit_bias = {{-4, 1.0f}};
         }),
         "logit_bias"},
        {with([](auto& o) { o.dynatemp_range = -1.0f; }), "dynatemp_range"},
        {with([](auto& o) { o.no_repeat_ngram_size = -1; }), "no_repeat_ngram_size"},
    };
    for (const auto& [o, field] : bad) {
        try {
            o.validate();
            ADD_FAILURE() << field << ": no exception";
        } catch (const invalid_argument_error& e) {
            EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
        }
    }
}

// 0.999 quantile of chi-square with 3 degrees of freedom (4 surviving categories).
constexpr double chi2_999_df3 = 16.27;

// Hugging Face's order on the 8-token distribution of make_sampler_test: temperature 0.5 first, then
// top-k 6, then top-p 0.9 on the tempered distribution: q_i ~ p_i^2, so the mass concentrates and
// top-p keeps 4 tokens (llama.cpp's order, truncating before the temperature, keeps 5). 20000 draws,
// seed 777, bound: the 0.999 quantile.
TEST(sampling_make_sampler_full, hf_order_draws_follow_the_tempered_then_truncated_distribution) {
    const std::vector<double> p{0.30, 0.22, 0.16, 0.12, 0.08, 0.06, 0.04, 0.02};
    const std::vector<token_id> perm{5, 2, 7, 0, 3, 6, 1, 4};  // rank r -> token perm[r]
    std::vector<float> vocab_logits(8);
    for (std::size_t r = 0; r < 8; ++r)
        vocab_logits[static_cast<std::size_t>(perm[r])] = static_cast<float>(std::log(p[r]));

    // Oracle: tempered probabilities, top 6, renormalized, shortest prefix with mass >= 0.9.
    std::vector<double> q(6);
    double z = 0.0;
    for (std::size_t r = 0; r < 6; ++r) z += q[r] = std::pow(p[r], 2.0);
    for (double& x : q) x /= z;
    double cum = 0.0;
    std::size_t n_keep = 0;
    while (cum < 0.9) cum += q[n_keep++];
    ASSERT_EQ(n_keep, 4u);
    ASSERT_GT(cum - 0.9, 1e-2);
    std::vector<double> expected(q.begin(), q.begin() + 4);
    double z4 = 0.0;
    for (double x : expected) z4 += x;
    for (double& x : expected) x /= z4;

    sampling_options o;
    o.sampler_order = hf_order();
    o.temperature = 0.5f;
    o.top_k = 6;
    o.top_p = 0.9f;
    o.min_p = 0.0f;
    o.seed = 777;
    auto sampler = make_sampler(o);
    const int n = 20000;
    std::vector<int> by_token(8, 0);
    for (int i = 0; i < n; ++i) ++by_token.at(static_cast<std::size_t>(sampler.sample(vocab_logits)));
    std::vector<int> counts(4);
    for (std::size_t r = 0; r < 4; ++r) counts[r] = by_token[static_cast<std::size_t>(perm[r])];
    for (std::size_t r = 4; r < 8; ++r) EXPECT_EQ(by_token[static_cast<std::size_t>(perm[r])], 0) << "rank " << r;
    EXPECT_LT(test::chi_square(counts, expected, n), chi2_999_df3);
}

}  // namespace
}  // namespace nexttok

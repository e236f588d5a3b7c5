// Cache rollback, round by round (speculative_generator): after every round, and in particular after
// a rejection, the target's cache holds exactly the kept positions but the newest token's, the draft's
// cache at most those, and running the rest of the sequence on either gives bitwise the logits of
// plain token-by-token decoding. Then the refusals: drafts of another vocabulary, stages that cannot
// be verified exactly (mirostat, XTC), bad speculative_options and n-gram sizes, with messages naming
// the field.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/q8_0_kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/sampling.hpp>
#include <nexttok/speculative.hpp>
#include <nexttok/stopping.hpp>

#include "speculative_test_util.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace nexttok {
namespace {

// The last position's logits of `tokens` decoded one token at a time on a fresh cache.
template <template <class> class Cache = kv_cache>
std::vector<float> plain_last_logits(decoder<float>& dec, std::span<const token_id> tokens) {
    Cache<float> cache(dec.config(), 256);
    std::vector<float> logits(static_cast<std::size_t>(dec.config().vocab_size));
    for (std::size_t i = 0; i < tokens.size(); ++i)
        dec.forward(tokens.subspan(i, 1), static_cast<std::int64_t>(i), cache, logits);
    return logits;
}

// Runs tokens[from..) at position `from` on `cache` (which must hold [0, from)), returns the last
// logits, and truncates the cache back to `from` positions.
template <class Cache>
std::vector<float> continue_on(decoder<float>& dec, Cache& cache, std::span<const token_id> tokens, std::int64_t from) {
    std::vector<float> logits(static_cast<std::size_t>(dec.config().vocab_size));
    dec.forward(tokens.subspan(static_cast<std::size_t>(from)), from, cache, logits);
    cache.truncate(from);
    return logits;
}

struct rollback_counts {
    int rounds = 0;
    int rejections = 0;             // rounds that ended with a rejected draft
    int rejections_after_kept = 0;  // ... after at least one kept draft
};

// Drives a generation round by round and checks both caches after each round.
template <template <class> class Cache, class Sampler>
rollback_counts check_rollback(const test::stories& s, std::shared_ptr<const model> draft_model, Sampler sample,
                               speculative_options spec, std::int64_t n_new) {
    rollback_counts counts;
    decoder<float> dec(s.m), draft_dec(draft_model), plain(s.m), plain_draft(draft_model);
    Cache<float> cache(s.m->config(), 256), draft_cache(draft_model->config(), 256);
    model_drafter draft(draft_dec, draft_cache);
    max_new_tokens stop(n_new);
    token_callback none;
    const auto prompt = s.tok.encode("Once upon a time", true);
    speculative_generator g(dec, cache, draft, &s.tok, prompt, sample, stop, none, spec);
    bool more = g.start();
    while (more) {
        const speculative_stats before = g.stats();
        more = g.step();
        const speculative_stats& after = g.stats();
        const std::int64_t drafted = after.n_drafted - before.n_drafted, kept = after.n_accepted - before.n_accepted;
        ++counts.rounds;
        if (kept < drafted) {
            ++counts.rejections;
            if (kept > 0) ++counts.rejections_after_kept;
        }
        const std::vector<token_id> seq = g.sequence();
        const auto n = static_cast<std::int64_t>(seq.size());
        EXPECT_EQ(cache.size(), n - 1) << "round " << counts.rounds;
        EXPECT_LE(draft_cache.size(), n - 1) << "round " << counts.rounds;
        EXPECT_EQ(continue_on(dec, cache, seq, n - 1), plain_last_logits<Cache>(plain, seq))
            << "target, round " << counts.rounds;
        EXPECT_EQ(continue_on(draft_dec, draft_cache, seq, draft_cache.size()),
                  plain_last_logits<Cache>(plain_draft, seq))
            << "draft, round " << counts.rounds;
    }
    const speculative_result r = g.finish();
    EXPECT_EQ(static_cast<std::int64_t>(r.tokens.size()), n_new);
    std::printf("[ rollback   ] %d rounds, %d with a rejection, %d of them after kept drafts\n", counts.rounds,
                counts.rejections, counts.rejections_after_kept);
    return counts;
}

class speculative_rollback : public ::testing::Test {
protected:
    void SetUp() override { NEXTTOK_REQUIRE_DATA(test::stories_gguf); }
};

TEST_F(speculative_rollback, greedy_with_a_q4_0_draft_keeps_exactly_the_kept_positions) {
    const auto s = test::load_stories();
    const auto c = check_rollback<kv_cache>(s, test::q4_0_copy(*s.m), make_sampler_chain(greedy{}),
                                            {.draft_max = 6, .adaptive = false}, 120);
    EXPECT_GT(c.rounds, 1);
    EXPECT_GT(c.rejections_after_kept, 0) << "the test needs rejections after kept drafts";
}

TEST_F(speculative_rollback, sampling_with_a_random_draft_keeps_exactly_the_kept_positions) {
    const auto s = test::load_stories();
    const auto c = check_rollback<kv_cache>(s, test::random_draft(), make_sampler_chain(categorical{0}),
                                            {.draft_max = 3, .adaptive = false, .seed = 11}, 60);
    EXPECT_GT(c.rejections, 0);
    EXPECT_GT(c.rejections_after_kept, 0) << "the test needs rejections after kept drafts";
}

TEST_F(speculative_rollback, sampling_in_a_q8_0_cache_keeps_exactly_the_kept_positions) {
    const auto s = test::load_stories();
    const auto c = check_rollback<q8_0_kv_cache>(s, s.m, make_sampler_chain(temperature{1.5f}, categorical{0}),
                                                 {.draft_max = 4, .greedy_draft = true, .seed = 5}, 40);
    EXPECT_GT(c.rejections_after_kept, 0) << "the test needs rejections after kept drafts";
}

// Adaptive k: +2 (up to draft_max) after a round whose drafts were all kept, -1 (down to draft_min)
// after a rejection, round by round.
TEST_F(speculative_rollback, adaptive_k_grows_after_full_acceptance_and_shrinks_after_a_rejection) {
    const auto s = test::load_stories();
    decoder<float> dec(s.m), draft_dec(test::q4_0_copy(*s.m));
    kv_cache<float> cache(s.m->config(), 256), draft_cache(s.m->config(), 256);
    model_drafter draft(draft_dec, draft_cache);
    auto sample = make_sampler_chain(greedy{});
    max_new_tokens stop(150);
    token_callback none;
    const auto prompt = s.tok.encode("Once upon a time", true);
    const speculative_options spec{.draft_max = 7, .draft_min = 2};
    speculative_generator g(dec, cache, draft, &s.tok, prompt, sample, stop, none, spec);
    EXPECT_EQ(g.draft_length(), 7);
    int grown = 0, shrunk = 0;
    for (bool more = g.start(); more;) {
        const std::int64_t k = g.draft_length();
        const speculative_stats before = g.stats();
        more = g.step();
        if (!more) break;
        const std::int64_t drafted = g.stats().n_drafted - before.n_drafted,
                           kept = g.stats().n_accepted - before.n_accepted;
        if (drafted == 0) continue;
        const std::int64_t expected =
            kept == drafted ? std::min<std::int64_t>(k + 2, 7) : std::max<std::int64_t>(k - 1, 2);
        EXPECT_EQ(g.draft_length(), expected) << "k " << k << ", " << kept << " of " << drafted << " kept";
        grown += expected > k;
        shrunk += expected < k;
    }
    EXPECT_GT(grown, 0);
    EXPECT_GT(shrunk, 0);
}

// --- refusals ------------------------------------------------------------------------------------

static_assert(!distribution_sampler<sampler_chain<xtc, categorical>>, "XTC draws in apply(): refused at compile time");
static_assert(!distribution_sampler<sampler_chain<temperature, mirostat>>, "mirostat has no distribution");
static_assert(!distribution_sampler<sampler_chain<temperature, mirostat_v2>>);
static_assert(distribution_sampler<sampler_chain<penalties, top_k, top_p, min_p, temperature, categorical>>);
static_assert(distribution_sampler<any_sampler> && distribution_sampler<dynamic_chain>);
static_assert(drafter<ngram_drafter> && drafter<model_drafter<decoder<float>, kv_cache<float>>>);

// The message of the invalid_argument_error `f` throws (fails the test when it throws none).
template <class F>
std::string refusal(F&& f) {
    try {
        f();
    } catch (const invalid_argument_error& e) {
        return e.what();
    }
    ADD_FAILURE() << "no invalid_argument_error";
    return {};
}

class speculative_refusals : public ::testing::Test {
protected:
    void SetUp() override {
        NEXTTOK_REQUIRE_DATA(test::stories_gguf);
        s_ = std::make_unique<test::stories>(test::load_stories());
        prompt_ = s_->tok.encode("Once upon a time", true);
    }
    std::string refusal_for(const generation_options& o, const speculative_options& spec = {}) {
        decoder<float> dec(s_->m);
        kv_cache<float> cache(s_->m->config(), 256);
        ngram_drafter draft;
        return refusal([&] { generate_speculative(dec, cache, draft, s_->tok, prompt_, o, spec); });
    }
    std::unique_ptr<test::stories> s_;
    std::vector<token_id> prompt_;
};

TEST_F(speculative_refusals, a_draft_of_another_vocabulary_names_both_models) {
    model_config c = test::random_draft()->config();
    c.vocab_size = 256;
    decoder<float> dec(s_->m), draft_dec(make_random_model(c, 3));
    kv_cache<float> cache(s_->m->config(), 256), draft_cache(c, 256);
    model_drafter draft(draft_dec, draft_cache);
    const std::string what =
        refusal([&] { generate_speculative(dec, cache, draft, s_->tok, prompt_, generation_options{}); });
    EXPECT_NE(what.find("vocab_size 256"), std::string::npos) << what;
    EXPECT_NE(what.find("vocab_size 512"), std::string::npos) << what;
    EXPECT_NE(what.find("stories260K.gguf"), std::string::npos) << what;
    EXPECT_NE(what.find(draft_dec.get_model()->file_name()), std::string::npos) << what;
}

TEST_F(speculative_refusals, mirostat_and_xtc_name_their_field) {
    generation_options o;
    o.sampling.mirostat = 2;
    std::string what = refusal_for(o);
    EXPECT_NE(what.find("sampling.mirostat = 2"), std::string::npos) << what;
    o.sampling.mirostat = 0;
    o.sampling.xtc_probability = 0.5f;
    what = refusal_for(o);
    EXPECT_NE(what.find("sampling.xtc_probability"), std::string::npos) << what;
    o.sampling.xtc_threshold = 0.6f;  // disables XTC: nothing to refuse
    EXPECT_NO_THROW({
        decoder<float> dec(s_->m);
        kv_cache<float> cache(s_->m->config(), 256);
        ngram_drafter draft;
        o.max_new_tokens = 3;
        generate_speculative(dec, cache, draft, s_->tok, prompt_, o);
    });
}

TEST_F(speculative_refusals, a_type_erased_sampler_without_a_distribution_is_refused) {
    decoder<float> dec(s_->m);
    kv_cache<float> cache(s_->m->config(), 256);
    ngram_drafter draft;
    max_new_tokens stop(4);
    for (int which = 0; which < 2; ++which) {
        sampling_options so;
        if (which == 0)
            so.mirostat = 1;
        else
            so.xtc_probability = 1.0f;
        any_sampler sample = make_sampler(so);
        EXPECT_FALSE(sample.has_distribution());
        const std::string what =
            refusal([&] { generate_speculative(dec, cache, draft, s_->tok, prompt_, sample, stop); });
        EXPECT_NE(what.find("cannot state the distribution"), std::string::npos) << what;
    }
}

TEST_F(speculative_refusals, bad_speculative_options_name_the_field) {
    std::string what = refusal_for({}, {.draft_max = 2, .draft_min = 3});
    EXPECT_NE(what.find("speculative_options: draft_min = 3"), std::string::npos) << what;
    EXPECT_NE(what.find("draft_max = 2"), std::string::npos) << what;
    what = refusal_for({}, {.draft_max = 0, .draft_min = 1});
    EXPECT_NE(what.find("speculative_options: draft_max = 0"), std::string::npos) << what;
    what = refusal_for({}, {.draft_max = 4, .draft_min = 0});
    EXPECT_NE(what.find("speculative_options: draft_min = 0"), std::string::npos) << what;
    generation_options o;
    o.n_samples = 2;
    what = refusal_for(o);
    EXPECT_NE(what.find("n_samples = 2"), std::string::npos) << what;
    o.n_samples = 1;
    o.sampling.top_p = 2.0f;  // the options' own validation
    what = refusal_for(o);
    EXPECT_NE(what.find("top_p"), std::string::npos) << what;
}

TEST_F(speculative_refusals, bad_prompts_and_ngram_sizes) {
    decoder<float> dec(s_->m);
    kv_cache<float> cache(s_->m->config(), 256);
    ngram_drafter draft;
    std::string what = refusal([&] { generate_speculative(dec, cache, draft, s_->tok, {}, generation_options{}); });
    EXPECT_NE(what.find("generate_speculative: the prompt is empty"), std::string::npos) << what;
    kv_cache<float> small(s_->m->config(), 3);
    what = refusal([&] { generate_speculative(dec, small, draft, s_->tok, prompt_, generation_options{}); });
    EXPECT_NE(what.find("more than the context of 3"), std::string::npos) << what;
    what = refusal([] { ngram_drafter bad(3, 0); });
    EXPECT_NE(what.find("n_min = 0"), std::string::npos) << what;
    what = refusal([] { ngram_drafter bad(2, 3); });
    EXPECT_NE(what.find("n_max = 2"), std::string::npos) << what;
    what = refusal([&] { quantized_copy(*s_->m, tensor_type::q4_k); });
    EXPECT_NE(what.find("quantized_copy: type q4_k (expected q8_0 or q4_0)"), std::string::npos) << what;
}

}  // namespace
}  // namespace nexttok

// A model that computes NaN (non_finite_model.hpp: token T's embedding holds a NaN, and greedy
// generation feeds T at position n_prompt + k): generate(), generate_n() and score() end with an
// error naming that position instead of sampling from NaN logits, and everything before it is the
// healthy model's.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/generation/generate_n.hpp>
#include <nexttok/generation/score.hpp>
#include <nexttok/tokenizer.hpp>

#include <non_finite_model.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nexttok {
namespace {

class non_finite_logits : public ::testing::Test {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(test::data_path(test::non_finite_source)))
            GTEST_SKIP() << "shared test data not found";
        c_ = test::make_non_finite_case(dir_);
        if (c_.k < 0) GTEST_SKIP();
    }
    std::int64_t nan_position() const { return static_cast<std::int64_t>(c_.prompt.size()) + c_.k; }

    test::temp_dir dir_;
    test::non_finite_case c_;
};

TEST_F(non_finite_logits, generate_throws_naming_the_position) {
    decoder<float> dec(c_.broken);
    kv_cache<float> cache(c_.broken->config(), 128);
    auto sampler = make_sampler_chain(greedy{});
    max_new_tokens stop(16);
    std::vector<token_id> streamed;
    try {
        (void)generate(dec, cache, c_.prompt, sampler, stop, [&](const token_event& e) {
            streamed.push_back(e.id);
            return true;
        });
        FAIL() << "generated from NaN logits";
    } catch (const error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("generation: " + test::nan_position_message(nan_position())), std::string::npos) << m;
        EXPECT_NE(m.find("--check-tensors"), std::string::npos) << m;
    }
    // Up to and including the poisoned token, the healthy model's tokens; nothing after.
    const std::vector<token_id> expected(c_.healthy_tokens.begin(), c_.healthy_tokens.begin() + c_.k + 1);
    EXPECT_EQ(streamed, expected);
}

TEST_F(non_finite_logits, generate_n_throws_naming_the_position) {
    const tokenizer tok = load_tokenizer(*c_.broken->gguf());
    decoder<float> dec(c_.broken);
    kv_cache<float> cache(c_.broken->config(), 128);
    generation_options o;
    o.sampling.temperature = 0.0f;  // greedy
    o.ignore_eos = true;
    o.max_new_tokens = 16;
    o.n_samples = 2;
    try {
        (void)generate_n(dec, cache, tok, c_.prompt, o);
        FAIL() << "generated from NaN logits";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find(test::nan_position_message(nan_position())), std::string::npos)
            << e.what();
    }
}

TEST_F(non_finite_logits, score_throws_for_a_nan_row_it_reads_only) {
    decoder<float> dec(c_.broken);
    kv_cache<float> cache(c_.broken->config(), 128);
    const auto& g = c_.healthy_tokens;
    // The continuation up to T: its rows are at positions before T's, healthy, so the score is the
    // healthy model's, bit for bit.
    const std::vector<token_id> up_to_t(g.begin(), g.begin() + c_.k + 1);
    decoder<float> healthy_dec(c_.healthy);
    kv_cache<float> healthy_cache(c_.healthy->config(), 128);
    const score_result healthy = score(healthy_dec, healthy_cache, c_.prompt, up_to_t);
    EXPECT_EQ(score(dec, cache, c_.prompt, up_to_t).logprob, healthy.logprob);
    // One token more is predicted by the row at T's position: NaN.
    const std::vector<token_id> past_t(g.begin(), g.begin() + c_.k + 2);
    try {
        (void)score(dec, cache, c_.prompt, past_t);
        FAIL() << "scored with NaN logits";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("score: " + test::nan_position_message(nan_position())), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace nexttok

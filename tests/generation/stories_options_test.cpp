// The acceptance tests on the real stories260K model: score() against generate()'s per-token
// log-probabilities (the chain rule), the repetition penalty's effect on repeated 4-grams, n samples
// on one shared prefill (counted by a decoder wrapper), and the top-n log-probabilities.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/no_cache.hpp>
#include <nexttok/cache/paged_kv_cache.hpp>
#include <nexttok/generation.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/sampling.hpp>
#include <nexttok/stopping.hpp>
#include <nexttok/tokenizer.hpp>

#include "generation_test_util.hpp"
#include <test_data.hpp>

#include "stories_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace nexttok {
namespace {

using test::stories_gguf;
using stories = test::stories_model;
using test::greedy_options;

// The setup these tests share: stories260K (loaded once for the program), a decoder of it, the
// prompt "Once upon a time" and a float cache of the positions a test asks for.
class stories_run : public ::testing::Test {
protected:
    void SetUp() override {
        NEXTTOK_REQUIRE_DATA(stories_gguf);
        s_ = &test::shared_stories();
        dec_.emplace(s_->m);
        prompt_ = s_->tok.encode("Once upon a time", true);
    }
    const test::stories_model& model() const { return *s_; }
    decoder<float>& dec() { return *dec_; }
    const std::vector<token_id>& prompt() const { return prompt_; }
    kv_cache<float> cache(std::int64_t positions) const { return kv_cache<float>(s_->m->config(), positions); }

private:
    const test::stories_model* s_ = nullptr;
    std::optional<decoder<float>> dec_;
    std::vector<token_id> prompt_;
};

TEST_F(stories_run, score_log_probability_of_the_greedy_continuation_is_the_sum_of_generates_logprobs) {
    const auto& s = model();
    decoder<float>& dec = this->dec();
    kv_cache<float> cache = this->cache(256);
    const auto& prompt = this->prompt();
    generation_options o = greedy_options(80);
    o.ignore_eos = true;  // exactly 80 tokens
    const auto gen = generate(dec, cache, s.tok, prompt, o);
    ASSERT_EQ(gen.tokens.size(), 80u);
    double sum = 0.0;
    for (float lp : gen.logprobs) sum += lp;

    const score_result sc = score(dec, cache, prompt, gen.tokens);
    ASSERT_EQ(sc.n_tokens(), 80);
    EXPECT_NEAR(sc.logprob, sum, 1e-4);
    for (std::size_t i = 0; i < gen.tokens.size(); ++i)
        EXPECT_NEAR(sc.token_logprobs[i], gen.logprobs[i], 1e-5) << "token " << i;
    EXPECT_NEAR(sc.perplexity(), std::exp(-sum / 80.0), 1e-6 * sc.perplexity());
    std::cout << "[stories260K] greedy continuation of 80 tokens: log-probability " << sc.logprob << ", perplexity "
              << sc.perplexity() << "\n";
    // The uncached baseline computes the same one pass.
    no_cache<float> scratch(s.m->config(), 256);
    EXPECT_NEAR(score(dec, scratch, prompt, gen.tokens).logprob, sc.logprob, 1e-4);
    // A sampled continuation is less likely than the greedy one, token by token on average.
    generation_options hot;
    hot.sampling.temperature = 1.5f;
    hot.sampling.top_k = 0;
    hot.sampling.top_p = 1.0f;
    hot.sampling.min_p = 0.0f;
    hot.max_new_tokens = 80;
    hot.ignore_eos = true;
    const auto sampled = generate(dec, cache, s.tok, prompt, hot);
    EXPECT_GT(score(dec, cache, prompt, sampled.tokens).perplexity(), sc.perplexity());
    EXPECT_THROW(score(dec, cache, std::vector<token_id>{}, gen.tokens), invalid_argument_error);
    EXPECT_THROW(score(dec, cache, prompt, std::vector<token_id>{}), invalid_argument_error);
}

// Repeated 4-grams: positions i >= 1 whose 4-gram tokens[i..i+4) occurred at an earlier position.
int repeated_4grams(const std::vector<token_id>& t) {
    std::set<std::vector<token_id>> seen;
    int repeats = 0;
    for (std::size_t i = 0; i + 4 <= t.size(); ++i) {
        std::vector<token_id> g(t.begin() + static_cast<long>(i), t.begin() + static_cast<long>(i) + 4);
        if (!seen.insert(g).second) ++repeats;
    }
    return repeats;
}

TEST_F(stories_run, repetition_penalty_penalty_one_point_three_reduces_repeated4_grams) {
    const auto& s = model();
    decoder<float>& dec = this->dec();
    kv_cache<float> cache = this->cache(512);
    const auto& prompt = this->prompt();
    auto run = [&](float penalty) {
        generation_options o = greedy_options(200);
        o.ignore_eos = true;
        o.sampling.repeat_penalty = penalty;  // over the last 64 tokens (llama.cpp's default window)
        return generate(dec, cache, s.tok, prompt, o);
    };
    const auto plain = run(1.0f);
    const auto penalized = run(1.3f);
    ASSERT_EQ(plain.tokens.size(), 200u);
    ASSERT_EQ(penalized.tokens.size(), 200u);
    const int n_plain = repeated_4grams(plain.tokens);
    const int n_penalized = repeated_4grams(penalized.tokens);
    std::cout << "[stories260K] repeated 4-grams in 200 greedy tokens: " << n_plain << " at repeat_penalty 1.0, "
              << n_penalized << " at 1.3\n";
    RecordProperty("repeated_4grams_penalty_1_0", n_plain);
    RecordProperty("repeated_4grams_penalty_1_3", n_penalized);
    EXPECT_GT(n_plain, 20) << "greedy stories260K repeats itself: the baseline must show it";
    EXPECT_LT(n_penalized * 2, n_plain) << "the penalty must at least halve the repeated 4-grams";
}

TEST(stories_generate_n, four_samples_share_one_prefill) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto& s = test::shared_stories();
    decoder<float> inner(s.m);
    const auto prompt = s.tok.encode("Once upon a time there was a little girl", true);
    const auto n_prompt = static_cast<std::int64_t>(prompt.size());
    test::counting_decoder<float> dec(inner, n_prompt);
    kv_cache<float> cache(s.m->config(), 256);
    generation_options o;
    o.sampling.temperature = 0.9f;
    o.sampling.seed = 1234;
    o.max_new_tokens = 30;
    o.n_samples = 4;
    const auto results = generate_n(dec, cache, s.tok, prompt, o);
    ASSERT_EQ(results.size(), 4u);

    // The prompt's positions were run exactly once, in one call; every other call decodes one token.
    EXPECT_EQ(dec.n_prompt_position_tokens, n_prompt);
    std::int64_t decode_steps = 0;
    for (const auto& r : results) decode_steps += r.timings.n_decode_steps;
    EXPECT_EQ(dec.n_calls, 1 + decode_steps);
    EXPECT_EQ(dec.n_tokens, n_prompt + decode_steps);
    std::cout << "[stories260K] 4 samples: " << dec.n_calls << " forward calls, " << dec.n_tokens
              << " tokens, of which " << dec.n_prompt_position_tokens << " at prompt positions (" << n_prompt
              << " prompt tokens; 4 separate "
              << "generations would run " << 4 * n_prompt << ")\n";

    // The samples are independent draws (different seeds) ...
    std::set<std::vector<token_id>> distinct;
    for (const auto& r : results) distinct.insert(r.tokens);
    EXPECT_EQ(distinct.size(), 4u);
    // ... and sample i is exactly what generate() gives with seed + i, each from its own prefill.
    for (std::int64_t i = 0; i < 4; ++i) {
        generation_options one = o;
        one.n_samples = 1;
        one.sampling.seed = o.sampling.seed + static_cast<std::uint64_t>(i);
        decoder<float> fresh(s.m);
        kv_cache<float> own(s.m->config(), 256);
        const auto r = generate(fresh, own, s.tok, prompt, one);
        EXPECT_EQ(r.tokens, results[static_cast<std::size_t>(i)].tokens) << "sample " << i;
        EXPECT_EQ(r.text, results[static_cast<std::size_t>(i)].text) << "sample " << i;
    }
}

// On a paged pool the samples fork the prompt's sequence: its blocks are shared, not copied (a
// sample copies only the partly filled last one), and the samples equal those on a kv_cache.
TEST(stories_generate_n, on_a_paged_pool_samples_share_the_prompts_blocks) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto& s = test::shared_stories();
    const auto prompt =
        s.tok.encode("Once upon a time there was a little girl named Lily. She loved to play outside", true);
    const auto n_prompt = static_cast<std::int64_t>(prompt.size());
    generation_options o;
    o.sampling.temperature = 0.9f;
    o.sampling.seed = 77;
    o.max_new_tokens = 10;
    o.ignore_eos = true;
    o.n_samples = 3;
    decoder<float> dec(s.m);
    kv_cache<float> cache(s.m->config(), 128);
    const auto want = generate_n(dec, cache, s.tok, prompt, o);

    constexpr std::int64_t block = 4;
    paged_kv_cache<float> pool(s.m->config(), {.n_blocks = 64, .block_size = block, .max_seq_len = 128});
    const auto got = generate_n(dec, pool, s.tok, prompt, o);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].tokens, want[i].tokens) << "sample " << i;
        EXPECT_EQ(got[i].logprobs, want[i].logprobs) << "sample " << i;
        EXPECT_EQ(got[i].text, want[i].text) << "sample " << i;
    }
    // The prompt's blocks, plus one sample's: its own blocks past the prompt's full ones (the
    // prompt's last block copied if partly filled). A copy of the prompt per sample would need
    // ceil(n_prompt / block) more.
    const std::int64_t prompt_blocks = (n_prompt + block - 1) / block;
    const std::int64_t sample_blocks = (n_prompt + o.max_new_tokens + block - 1) / block - n_prompt / block;
    EXPECT_LE(pool.peak_used_blocks(), prompt_blocks + sample_blocks);
    EXPECT_EQ(pool.n_used_blocks(), 0) << "nothing is held afterwards";
}

TEST_F(stories_run, logprobs_top_alternatives_are_the_most_likely_tokens_with_their_log_probabilities) {
    const auto& s = model();
    decoder<float>& dec = this->dec();
    kv_cache<float> cache = this->cache(128);
    const auto& prompt = this->prompt();
    generation_options o = greedy_options(20);
    o.n_logprobs = 5;
    std::vector<std::vector<token_logprob>> streamed;
    const auto r = generate(dec, cache, s.tok, prompt, o, [&](const token_event& e) {
        if (e.id != no_token) streamed.emplace_back(e.top_logprobs.begin(), e.top_logprobs.end());
        return true;
    });
    ASSERT_EQ(r.top_logprobs.size(), r.tokens.size());
    // Oracle: run the model step by step and sort the whole softmax here.
    kv_cache<float> kv(s.m->config(), 128);
    decoder<float> ref(s.m);
    std::vector<token_id> seq = prompt;
    const auto v = static_cast<std::size_t>(s.m->config().vocab_size);
    std::vector<float> logits(v);
    ref.forward(seq, 0, kv, logits);
    for (std::size_t i = 0; i < r.tokens.size(); ++i) {
        double z = 0.0;
        for (float l : logits) z += std::exp(double(l));
        std::vector<std::pair<double, token_id>> all;
        for (std::size_t j = 0; j < v; ++j)
            all.push_back({std::log(std::exp(double(logits[j])) / z), static_cast<token_id>(j)});
        std::sort(all.begin(), all.end(),
                  [](auto a, auto b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
        ASSERT_EQ(r.top_logprobs[i].size(), 5u);
        for (std::size_t k = 0; k < 5; ++k) {
            EXPECT_EQ(r.top_logprobs[i][k].id, all[k].second) << "step " << i << " rank " << k;
            EXPECT_NEAR(r.top_logprobs[i][k].logprob, all[k].first, 1e-4) << "step " << i << " rank " << k;
        }
        EXPECT_EQ(r.top_logprobs[i][0].id, r.tokens[i]);  // greedy: the chosen token is the most likely
        EXPECT_FLOAT_EQ(r.top_logprobs[i][0].logprob, r.logprobs[i]);
        seq.push_back(r.tokens[i]);
        ref.forward(std::span<const token_id>(&seq.back(), 1), static_cast<std::int64_t>(seq.size()) - 1, kv, logits);
    }
    ASSERT_EQ(streamed.size(), r.tokens.size());
    for (std::size_t i = 0; i < streamed.size(); ++i) EXPECT_EQ(streamed[i].front().id, r.top_logprobs[i].front().id);
}

TEST_F(stories_run, options_build_the_same_policies_as_the_hand_made_ones) {
    const auto& s = model();
    decoder<float>& dec = this->dec();
    kv_cache<float> cache = this->cache(256);
    const auto& prompt = this->prompt();
    generation_options o;
    o.sampling.seed = 8;
    o.sampling.repeat_penalty = 1.1f;
    o.sampling.dry_multiplier = 0.8f;
    o.max_new_tokens = 60;
    o.stop = {"."};
    const auto a = generate(dec, cache, s.tok, prompt, o);
    auto sampler = make_sampler(o, s.tok);
    auto stop = make_stopping(o, s.tok);
    const auto b = generate(dec, cache, s.tok, prompt, sampler, stop);
    EXPECT_EQ(a.tokens, b.tokens);
    EXPECT_EQ(a.text, b.text);
    EXPECT_EQ(a.reason, finish_reason::stop_string);
    EXPECT_EQ(a.text.find('.'), std::string::npos);
}

}  // namespace
}  // namespace nexttok

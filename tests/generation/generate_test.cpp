// generate() end to end on the real stories260K model: llama2.c's documented greedy text is the
// oracle; cached and uncached generation agree; seeds replay; callbacks, cache capacity and bad
// prompts end generation as documented.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/no_cache.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/sampling.hpp>
#include <nexttok/stopping.hpp>
#include <nexttok/tokenizer.hpp>

#include <reference_logits.hpp>
#include <test_data.hpp>

#include "stories_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

namespace nexttok {
namespace {

const char* const stories_bin = "models/stories260K/stories260K.bin";

std::string read_text(const std::string& relative) {
    std::ifstream in(test::data_path(relative));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

using test::stories_gguf;
using stories = test::stories_model;

stories load_stories(bool gguf) {
    if (gguf) {
        auto m = load_model(test::data_path(stories_gguf));
        return {m, load_tokenizer(*m->gguf())};
    }
    return {load_model(test::data_path(stories_bin)),
            load_llama2c_tokenizer(test::data_path("models/stories260K/tok512.bin"))};
}

template <class Cache = kv_cache<float>>
generation_result greedy_text(const stories& s, const std::string& prompt, std::int64_t n, int n_threads = 1) {
    decoder<float> dec(s.m, n_threads);
    Cache cache(s.m->config(), 256);  // the GGUF says 128 positions; the model was trained on 512
    auto sampler = make_sampler_chain(greedy{});
    max_new_tokens stop(n);
    const auto ids = s.tok.encode(prompt, true);
    return generate(dec, cache, s.tok, ids, sampler, stop);
}

class stories_greedy : public ::testing::TestWithParam<bool> {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(test::data_path(stories_gguf)))
            GTEST_SKIP() << "shared test data not found: " << test::data_dir();
    }
};

TEST_P(stories_greedy, from_bos_matches_llama2c_for_200_steps) {
    const auto s = load_stories(GetParam());
    const auto r = greedy_text(s, "", 200);
    const std::string expected = read_text("models/stories260K/expected_greedy_from_bos.txt");
    EXPECT_EQ(r.tokens.size(), 200u);
    EXPECT_EQ(r.reason, finish_reason::max_new_tokens);
    ASSERT_GT(r.text.size(), 400u);
    ASSERT_LE(r.text.size(), expected.size());
    EXPECT_EQ(r.text, expected.substr(0, r.text.size()));
}

TEST_P(stories_greedy, once_upon_a_time_matches_llama2c_n60) {
    const auto s = load_stories(GetParam());
    // llama2.c's -n 60 counts forward passes, one per position 0..59, each printing the token it
    // leads to: 4 prompt tokens after BOS, then 56 generated.
    const auto r = greedy_text(s, "Once upon a time", 56);
    std::string expected = read_text("models/stories260K/expected_greedy_prompt_once_upon_a_time_n60.txt");
    while (!expected.empty() && expected.back() == '\n') expected.pop_back();
    EXPECT_EQ("Once upon a time" + r.text, expected);
}

INSTANTIATE_TEST_SUITE_P(formats, stories_greedy, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "gguf" : "llama2c"; });

TEST(generate, cached_and_uncached_agree_for_100_steps) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto s = load_stories(true);
    const auto cached = greedy_text<kv_cache<float>>(s, "Once upon a time", 100);
    const auto uncached = greedy_text<no_cache<float>>(s, "Once upon a time", 100);
    EXPECT_EQ(cached.tokens, uncached.tokens);
    ASSERT_EQ(cached.logprobs.size(), 100u);
    for (std::size_t i = 0; i < cached.logprobs.size(); ++i)
        EXPECT_NEAR(cached.logprobs[i], uncached.logprobs[i], 1e-5) << "step " << i;

    // The logits themselves: the cached step vs recomputing the whole prefix, along the same tokens.
    decoder<float> dec(s.m);
    kv_cache<float> kv(s.m->config(), 256);
    no_cache<float> scratch(s.m->config(), 256);
    std::vector<token_id> seq = s.tok.encode("Once upon a time", true);
    const std::int64_t V = s.m->config().vocab_size;
    std::vector<float> a(V), b(V);
    dec.forward(seq, 0, kv, a);
    for (token_id t : cached.tokens) {
        dec.forward(seq, 0, scratch, b);
        for (std::int64_t j = 0; j < V; ++j)
            ASSERT_NEAR(a[j], b[j], 1e-5) << "position " << seq.size() << " logit " << j;
        seq.push_back(t);
        dec.forward(std::span<const token_id>(&seq.back(), 1), static_cast<std::int64_t>(seq.size()) - 1, kv, a);
    }
}

TEST(generate, logprobs_are_log_softmax_of_the_logits) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto s = load_stories(true);
    const auto r = greedy_text(s, "Once upon a time", 20);
    decoder<float> dec(s.m);
    kv_cache<float> kv(s.m->config(), 64);
    std::vector<token_id> seq = s.tok.encode("Once upon a time", true);
    const std::int64_t V = s.m->config().vocab_size;
    std::vector<float> logits(static_cast<std::size_t>(seq.size() * V));
    dec.forward(seq, 0, kv, logits);
    for (std::size_t i = 0; i < r.tokens.size(); ++i) {
        double sum = 0.0;
        for (std::int64_t j = 0; j < V; ++j) sum += std::exp(static_cast<double>(logits[j]));
        const double expected = logits[r.tokens[i]] - std::log(sum);
        EXPECT_NEAR(r.logprobs[i], expected, 1e-4) << "step " << i;
        EXPECT_NEAR(r.processed_logprobs[i], expected, 1e-4) << "greedy alone does not change the distribution";
        seq.push_back(r.tokens[i]);
        dec.forward(std::span<const token_id>(&seq.back(), 1), static_cast<std::int64_t>(seq.size()) - 1, kv, logits);
    }
}

generation_result sample_08(const stories& s, int n_threads, std::uint64_t seed) {
    decoder<float> dec(s.m, n_threads);
    kv_cache<float> cache(s.m->config(), 256);
    sampling_options o;
    o.temperature = 0.8f;
    o.seed = seed;
    auto sampler = make_sampler(o);
    max_new_tokens stop(100);
    return generate(dec, cache, s.tok, s.tok.encode("Once upon a time", true), sampler, stop);
}

TEST(generate, same_seed_same_tokens_whatever_the_threads) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto s = load_stories(true);
    const auto a = sample_08(s, 1, 42);
    const auto b = sample_08(s, 1, 42);
    const auto c = sample_08(s, 2, 42);
    const auto d = sample_08(s, 1, 43);
    EXPECT_EQ(a.tokens, b.tokens);
    EXPECT_EQ(a.tokens, c.tokens);
    EXPECT_EQ(a.text, c.text);
    EXPECT_NE(a.tokens, d.tokens) << "a different seed should give a different sample";
    // Sampling at 0.8 is not greedy: the sample must differ from the greedy continuation.
    EXPECT_NE(a.tokens, greedy_text(s, "Once upon a time", 100).tokens);
}

TEST(generate, callback_streams_the_text_and_can_stop) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto s = load_stories(true);
    decoder<float> dec(s.m);
    kv_cache<float> cache(s.m->config());
    auto sampler = make_sampler_chain(greedy{});
    max_new_tokens stop(50);
    std::string streamed;
    int calls = 0;
    const auto r =
        generate(dec, cache, s.tok, s.tok.encode("Once upon a time", true), sampler, stop, [&](const token_event& e) {
            streamed += e.text;
            return ++calls < 7;
        });
    EXPECT_EQ(r.reason, finish_reason::callback);
    EXPECT_EQ(r.tokens.size(), 7u);
    EXPECT_EQ(streamed, r.text);
    EXPECT_EQ(r.text, greedy_text(s, "Once upon a time", 7).text);
}

TEST(generate, stops_at_capacity_and_rejects_long_prompts) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto s = load_stories(true);
    decoder<float> dec(s.m);
    kv_cache<float> cache(s.m->config(), 10);
    auto sampler = make_sampler_chain(greedy{});
    max_new_tokens stop(100);
    const auto prompt = s.tok.encode("Once upon a time", true);
    ASSERT_EQ(prompt.size(), 5u);
    const auto r = generate(dec, cache, s.tok, prompt, sampler, stop);
    EXPECT_EQ(r.reason, finish_reason::cache_full);
    EXPECT_EQ(r.tokens.size(), 6u);  // 10 positions: 5 prompt tokens, 5 generated run, and a 6th from the last logits
    EXPECT_EQ(r.tokens, greedy_text(s, "Once upon a time", 6).tokens);

    const auto long_prompt = s.tok.encode("Once upon a time there was a little girl named Lily", true);
    try {
        generate(dec, cache, s.tok, long_prompt, sampler, stop);
        FAIL() << "a prompt longer than the context must be rejected";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("more than the context of 10 positions"), std::string::npos) << e.what();
    }
    EXPECT_THROW(generate(dec, cache, s.tok, std::vector<token_id>{}, sampler, stop), invalid_argument_error);
}

TEST(generate, eos_ends_generation) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto s = load_stories(true);
    // Treat the first greedy token after the prompt as an end-of-sequence id: generation must end there.
    const auto first = greedy_text(s, "Once upon a time", 3).tokens;
    decoder<float> dec(s.m);
    kv_cache<float> cache(s.m->config());
    auto sampler = make_sampler_chain(greedy{});
    any_of stop(eos_criterion{first[1]}, max_new_tokens(50));
    const auto r = generate(dec, cache, s.tok, s.tok.encode("Once upon a time", true), sampler, stop);
    EXPECT_EQ(r.reason, finish_reason::eos);
    EXPECT_EQ(r.tokens, std::vector<token_id>(first.begin(), first.begin() + 2));
    EXPECT_GT(r.timings.prefill_tokens_per_second(), 0.0);
    EXPECT_EQ(r.timings.n_prompt_tokens, 5);
    EXPECT_EQ(r.timings.n_decode_steps, 1);
}

}  // namespace
}  // namespace nexttok

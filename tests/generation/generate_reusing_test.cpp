// generate_reusing: generation on a cache that already holds a prefix of the prompt.
// Oracle: generate() on the same prompt with a cleared cache. The decoder gives a token bitwise the
// same numbers however the sequence is chunked, so the reusing call must return bitwise the same
// tokens, log-probabilities and text, greedy and sampled with a seed; and the decoder must be asked
// to run exactly the prompt tokens past the kept prefix (counted by a wrapper around it), which the
// test computes from the turns themselves: turn 2 continues turn 1 (its prompt + every token turn 1
// ran + new text), diverges from it in the middle (the cache rewinds), or equals what the cache
// holds (the last token still runs, for its logits).
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/no_cache.hpp>
#include <nexttok/cache/q8_0_kv_cache.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/generation/generate_reusing.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/model/random_model.hpp>
#include <nexttok/tokenizer.hpp>

#include "generation_test_util.hpp"

#include <test_data.hpp>

#include "stories_model.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace nexttok {
namespace {

using test::greedy_options;
using test::stories_gguf;

// no_cache retains nothing: generate_reusing does not accept it.
static_assert(prefix_reusing_decoder<decoder<float>, kv_cache<float>>);
static_assert(prefix_reusing_decoder<decoder<float>, q8_0_kv_cache<float>>);
static_assert(!prefix_reusing_decoder<decoder<float>, no_cache<float>>);
template <class Cache>
constexpr bool callable_with = requires(decoder<float>& d, Cache& c, cached_tokens& h, const tokenizer& t,
                                        std::span<const token_id> p, const generation_options& o) {
    generate_reusing(d, c, h, t, p, o);
};
static_assert(callable_with<kv_cache<float>>);
static_assert(!callable_with<no_cache<float>>);

generation_options seeded(std::int64_t n) {
    generation_options o;
    o.max_new_tokens = n;
    o.sampling.temperature = 0.9f;
    o.sampling.top_k = 0;
    o.sampling.top_p = 1.0f;
    o.sampling.min_p = 0.0f;
    o.sampling.seed = 4242;
    return o;
}

void expect_bitwise_equal(const generation_result& got, const generation_result& want, const std::string& where) {
    EXPECT_EQ(got.tokens, want.tokens) << where;
    EXPECT_EQ(got.text, want.text) << where;
    EXPECT_EQ(got.reason, want.reason) << where;
    ASSERT_EQ(got.logprobs.size(), want.logprobs.size()) << where;
    EXPECT_EQ(std::memcmp(got.logprobs.data(), want.logprobs.data(), got.logprobs.size() * sizeof(float)), 0)
        << where << ": logprobs";
    ASSERT_EQ(got.processed_logprobs.size(), want.processed_logprobs.size()) << where;
    EXPECT_EQ(std::memcmp(got.processed_logprobs.data(), want.processed_logprobs.data(),
                          got.processed_logprobs.size() * sizeof(float)),
              0)
        << where << ": processed logprobs";
}

// The longest common prefix, computed here rather than by cached_tokens.
std::int64_t common_prefix(const std::vector<token_id>& a, const std::vector<token_id>& b) {
    std::size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    return static_cast<std::int64_t>(n);
}

// One turn on the shared cache, checked against generate() on a fresh cache; `expected_reused`
// is what the test computed. Returns the turn's result.
template <class Cache>
generation_result reusing_turn(decoder<float>& dec, const model_config& c, Cache& cache, cached_tokens& held,
                               const tokenizer& tok, const std::vector<token_id>& prompt, const generation_options& o,
                               std::int64_t expected_reused, const std::string& where) {
    test::counting_decoder<float> counted(dec, static_cast<std::int64_t>(prompt.size()));
    const generation_result r = generate_reusing(counted, cache, held, tok, prompt, o);
    Cache fresh(c, cache.capacity());
    const generation_result want = generate(dec, fresh, tok, prompt, o);
    expect_bitwise_equal(r, want, where);
    const auto n_prompt = static_cast<std::int64_t>(prompt.size());
    EXPECT_EQ(r.timings.n_reused_prompt_tokens, expected_reused) << where;
    EXPECT_EQ(r.timings.n_prompt_tokens, n_prompt - expected_reused) << where;
    EXPECT_EQ(counted.n_prompt_position_tokens, n_prompt - expected_reused)
        << where << ": prompt tokens the decoder ran";
    // Afterwards the record holds the prompt and every generated token but the last.
    std::vector<token_id> run = prompt;
    if (!r.tokens.empty()) run.insert(run.end(), r.tokens.begin(), r.tokens.end() - 1);
    EXPECT_EQ(held.tokens, run) << where;
    EXPECT_EQ(cache.size(), static_cast<std::int64_t>(run.size())) << where;
    return r;
}

// Turn 1, then turn 2 = turn 1's prompt + its tokens + new text (reuse everything turn 1 ran), then a
// prompt that diverges in the middle of what the cache holds, then one that equals it.
template <class Cache>
void check_conversation(const std::shared_ptr<const model>& m, const tokenizer& tok, const std::string& first,
                        const std::string& more, const generation_options& o, const std::string& where) {
    decoder<float> dec(m, 1);
    const model_config& c = m->config();
    Cache cache(c, c.max_seq_len);
    cached_tokens held;

    const std::vector<token_id> p1 = tok.encode(first, true);
    const generation_result r1 = reusing_turn(dec, c, cache, held, tok, p1, o, 0, where + ", turn 1");
    ASSERT_FALSE(r1.tokens.empty()) << where;

    std::vector<token_id> p2 = p1;
    p2.insert(p2.end(), r1.tokens.begin(), r1.tokens.end());
    const std::vector<token_id> tail = tok.encode(more, false);
    p2.insert(p2.end(), tail.begin(), tail.end());
    const auto reused2 =
        static_cast<std::int64_t>(p1.size() + r1.tokens.size() - 1);  // the last token of turn 1 never ran
    ASSERT_LT(reused2, static_cast<std::int64_t>(p2.size()));
    reusing_turn(dec, c, cache, held, tok, p2, o, reused2, where + ", turn 2 continues turn 1");

    // Diverges from the held tokens at position 3 (a token they do not hold there).
    std::vector<token_id> p3(held.tokens.begin(),
                             held.tokens.begin() + static_cast<std::ptrdiff_t>(held.tokens.size() / 2));
    p3[3] = p3[3] == tail.front() ? tail.back() : tail.front();
    p3.insert(p3.end(), tail.begin(), tail.end());
    const std::int64_t reused3 = common_prefix(held.tokens, p3);
    ASSERT_EQ(reused3, 3);
    reusing_turn(dec, c, cache, held, tok, p3, o, reused3, where + ", turn 3 diverges at position 3");

    // Exactly what the cache holds: everything but the last token is kept, the last one runs.
    const std::vector<token_id> p4 = held.tokens;
    reusing_turn(dec, c, cache, held, tok, p4, o, static_cast<std::int64_t>(p4.size()) - 1,
                 where + ", turn 4 equals the cache");
}

std::shared_ptr<const model> random_model(std::int64_t vocab_size) {
    model_config c;
    c.vocab_size = vocab_size;
    c.dim = 64;
    c.hidden_dim = 172;
    c.n_layers = 2;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.max_seq_len = 160;
    return make_random_model(c, 77);
}

TEST(generate_reusing, random_model_is_bitwise_a_fresh_generation) {
    const tokenizer tok = test::scripted_tokenizer();
    const auto m = random_model(static_cast<std::int64_t>(tok.vocab_size()));
    const std::string first = "Hello abc xyz. Hello", more = "aa bb cc. END";
    check_conversation<kv_cache<float>>(m, tok, first, more, greedy_options(12), "random, kv_cache, greedy");
    check_conversation<kv_cache<float>>(m, tok, first, more, seeded(12), "random, kv_cache, seeded");
    check_conversation<q8_0_kv_cache<float>>(m, tok, first, more, greedy_options(12), "random, q8_0_kv_cache, greedy");
    check_conversation<q8_0_kv_cache<float>>(m, tok, first, more, seeded(12), "random, q8_0_kv_cache, seeded");
}

TEST(generate_reusing, stories260_k_is_bitwise_a_fresh_generation) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto m = load_model(test::data_path(stories_gguf));
    const tokenizer tok = load_tokenizer(*m->gguf());
    const std::string first = "Once upon a time, there was a little girl", more = " Then her mom said:";
    check_conversation<kv_cache<float>>(m, tok, first, more, greedy_options(20), "stories260K, kv_cache, greedy");
    check_conversation<kv_cache<float>>(m, tok, first, more, seeded(20), "stories260K, kv_cache, seeded");
    check_conversation<q8_0_kv_cache<float>>(m, tok, first, more, seeded(20), "stories260K, q8_0_kv_cache, seeded");
}

// A record that claims more than the cache holds (the cache was cleared behind its back) is not
// trusted: the whole prompt is prefilled.
TEST(generate_reusing, a_stale_record_prefills_everything) {
    const tokenizer tok = test::scripted_tokenizer();
    const auto m = random_model(static_cast<std::int64_t>(tok.vocab_size()));
    decoder<float> dec(m, 1);
    kv_cache<float> cache(m->config(), 64);
    cached_tokens held;
    const auto prompt = tok.encode("Hello abc", true);
    generate_reusing(dec, cache, held, tok, prompt, greedy_options(4));
    cache.clear();
    reusing_turn(dec, m->config(), cache, held, tok, prompt, greedy_options(4), 0, "after cache.clear()");
}

TEST(generate_reusing, refuses_context_shift_and_bad_prompts) {
    const tokenizer tok = test::scripted_tokenizer();
    const auto m = random_model(static_cast<std::int64_t>(tok.vocab_size()));
    decoder<float> dec(m, 1);
    kv_cache<float> cache(m->config(), 16);
    cached_tokens held;
    const auto prompt = tok.encode("Hello", true);
    generation_options o = greedy_options(4);
    o.context_shift = true;
    try {
        generate_reusing(dec, cache, held, tok, prompt, o);
        ADD_FAILURE() << "context_shift was accepted";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("context_shift is not supported"), std::string::npos) << e.what();
    }
    EXPECT_THROW(generate_reusing(dec, cache, held, tok, std::vector<token_id>{}, greedy_options(4)),
                 invalid_argument_error);
    EXPECT_THROW(generate_reusing(dec, cache, held, tok, std::vector<token_id>(17, test::bos_id), greedy_options(4)),
                 invalid_argument_error);
    generation_options two = greedy_options(4);
    two.n_samples = 2;
    EXPECT_THROW(generate_reusing(dec, cache, held, tok, prompt, two), invalid_argument_error);
    EXPECT_TRUE(held.empty());
}

TEST(cached_tokens, reusable_prefix_keeps_at_least_one_token_to_run) {
    cached_tokens held{{1, 5, 6, 7}};
    EXPECT_EQ(held.reusable_prefix(std::vector<token_id>{1, 5, 6, 7, 8}), 4);
    EXPECT_EQ(held.reusable_prefix(std::vector<token_id>{1, 5, 6, 7}), 3);
    EXPECT_EQ(held.reusable_prefix(std::vector<token_id>{1, 5, 9, 7, 8}), 2);
    EXPECT_EQ(held.reusable_prefix(std::vector<token_id>{1, 5}), 1);
    EXPECT_EQ(held.reusable_prefix(std::vector<token_id>{2}), 0);
    EXPECT_EQ(held.reusable_prefix(std::vector<token_id>{}), 0);
}

}  // namespace
}  // namespace nexttok

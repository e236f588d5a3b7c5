// Generation at the end of the cache (issue 22, "long contexts").
//  - The last position's logits still give a token: a 128-position cache holds a 13-token prompt and
//    116 generated tokens, as llama2.c (oracle: the first 116 greedy tokens of a run with a bigger
//    cache), the same through every driver (generate with and without a cache, generate_n, the
//    scheduler, speculative decoding).
//  - Context shift: with a one-layer model the keys and values of a token depend only on the token
//    and its position, so after a shift the cache holds exactly what a fresh prefill of the tokens it
//    keeps would write (up to the rounding of the re-rotation). Oracle: at every step after a shift,
//    the logits of that fresh prefill (argmax and the chosen token's log-probability). With several
//    layers a moved entry keeps values computed while the dropped tokens were in view, so no exact
//    oracle exists there; stories260K checks the counts (tokens, shifts) instead.
#include <nexttok/batching/generate_batch.hpp>
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/no_cache.hpp>
#include <nexttok/cache/paged_kv_cache.hpp>
#include <nexttok/generation/detail/logprobs.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/generation/generate_n.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/model/random_model.hpp>
#include <nexttok/sampling.hpp>
#include <nexttok/speculative.hpp>
#include <nexttok/stopping.hpp>
#include <nexttok/tokenizer.hpp>

#include "generation_test_util.hpp"

#include <test_data.hpp>

#include "stories_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace nexttok {
namespace {

using test::stories_gguf;
using stories = test::stories_model;
using test::greedy_options;

stories load_stories() { return test::load_stories_gguf(); }

// With BOS: 13 tokens.
const char* const prompt_13 = "Once upon a time, there was a little girl";

TEST(long_context, the_last_position_gives_one_more_token_as_llama2c) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto s = load_stories();
    ASSERT_EQ(s.m->config().max_seq_len, 128);
    const auto prompt = s.tok.encode(prompt_13, true);
    ASSERT_EQ(prompt.size(), 13u);
    decoder<float> dec(s.m, 1);

    // The oracle: a cache with room to spare.
    kv_cache<float> big(s.m->config(), 256);
    const auto want = generate(dec, big, s.tok, prompt, greedy_options(116));
    ASSERT_EQ(want.tokens.size(), 116u);
    ASSERT_EQ(want.reason, finish_reason::max_new_tokens);

    kv_cache<float> cache(s.m->config());  // 128 positions
    const auto r = generate(dec, cache, s.tok, prompt, greedy_options(1000));
    EXPECT_EQ(r.reason, finish_reason::cache_full);
    EXPECT_EQ(r.tokens, want.tokens);
    EXPECT_EQ(r.timings.n_decode_steps, 115);  // the last token is never run
    EXPECT_EQ(cache.size(), 128);

    // The same end through every driver.
    no_cache<float> scratch(s.m->config());
    const auto uncached = generate(dec, scratch, s.tok, prompt, greedy_options(1000));
    EXPECT_EQ(uncached.reason, finish_reason::cache_full);
    EXPECT_EQ(uncached.tokens, want.tokens);

    kv_cache<float> shared(s.m->config());
    generation_options two = greedy_options(1000);
    two.n_samples = 2;
    for (const auto& sample : generate_n(dec, shared, s.tok, prompt, two)) {
        EXPECT_EQ(sample.reason, finish_reason::cache_full);
        EXPECT_EQ(sample.tokens, want.tokens);
    }

    paged_kv_cache<float> pool(s.m->config(), {.n_blocks = 64, .block_size = 16});  // max_seq_len 128
    const std::vector<std::vector<token_id>> prompts{prompt, prompt};
    for (const auto& b :
         generate_batch(dec, pool, s.tok, std::span<const std::vector<token_id>>(prompts), greedy_options(1000))) {
        EXPECT_EQ(b.reason, finish_reason::cache_full);
        EXPECT_EQ(b.tokens, want.tokens);
    }

    kv_cache<float> target(s.m->config());
    ngram_drafter lookup(3);
    const auto spec = generate_speculative(dec, target, lookup, s.tok, prompt, greedy_options(1000));
    EXPECT_EQ(spec.reason, finish_reason::cache_full);
    EXPECT_EQ(spec.tokens, want.tokens);
}

TEST(long_context, kept_positions_count_bos_as_llama_cpp) {
    const std::vector<token_id> with_bos{1, 7, 8, 9, 10};
    const std::vector<token_id> without{7, 8, 9, 10};
    EXPECT_EQ(detail::kept_positions(0, with_bos, 1), 1);  // BOS alone
    EXPECT_EQ(detail::kept_positions(2, with_bos, 1), 3);  // BOS + 2
    EXPECT_EQ(detail::kept_positions(4, with_bos, 1), 5);  // the whole prompt
    EXPECT_EQ(detail::kept_positions(5, with_bos, 1), 5);  // more than the prompt: the whole prompt
    EXPECT_EQ(detail::kept_positions(-1, with_bos, 1), 5);
    EXPECT_EQ(detail::kept_positions(0, without, 1), 0);
    EXPECT_EQ(detail::kept_positions(2, without, 1), 2);
    EXPECT_EQ(detail::kept_positions(-1, without, 1), 4);
    EXPECT_EQ(detail::kept_positions(2, with_bos, no_token), 2);  // a vocabulary without BOS
}

// A one-layer random model over the scripted vocabulary.
std::shared_ptr<const model> one_layer_model(std::int64_t vocab_size) {
    model_config c;
    c.vocab_size = vocab_size;
    c.dim = 64;
    c.hidden_dim = 128;
    c.n_layers = 1;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.max_seq_len = 64;
    c.tied_output = true;
    return make_random_model(c, 22);
}

// Replays a context-shifted generation: the cache's tokens after each step, shifting as generate()
// must (first n_keep kept, half of the rest dropped, when a token needs a position past capacity).
// Checks, at every step after the first shift, the token and its log-probability against a fresh
// prefill of the cache's tokens.
void expect_matches_fresh_prefill(decoder<float>& dec, const std::vector<token_id>& prompt, const generation_result& r,
                                  std::int64_t capacity, std::int64_t n_keep, std::int64_t& n_shifts_seen) {
    std::vector<token_id> window(prompt.begin(), prompt.end());  // the tokens whose rows the cache holds
    std::vector<float> logits(static_cast<std::size_t>(dec.config().vocab_size));
    n_shifts_seen = 0;
    for (std::size_t i = 0; i < r.tokens.size(); ++i) {
        // r.tokens[i] came from the logits after `window`.
        if (n_shifts_seen > 0) {
            kv_cache<float> fresh(dec.config(), capacity);
            dec.forward(window, 0, fresh, logits);
            const auto best = static_cast<token_id>(std::max_element(logits.begin(), logits.end()) - logits.begin());
            EXPECT_EQ(r.tokens[i], best) << "token " << i << " after " << n_shifts_seen << " shifts";
            const double lp =
                static_cast<double>(logits[static_cast<std::size_t>(r.tokens[i])]) - detail::log_sum_exp(logits);
            EXPECT_NEAR(r.logprobs[i], lp, 1e-4) << "token " << i;
        }
        if (i + 1 == r.tokens.size()) break;
        // r.tokens[i] runs next: make room first.
        if (static_cast<std::int64_t>(window.size()) == capacity) {
            const std::int64_t n_discard = (capacity - n_keep) / 2;
            window.erase(window.begin() + n_keep, window.begin() + n_keep + n_discard);
            ++n_shifts_seen;
        }
        window.push_back(r.tokens[i]);
    }
}

bool have_shift_context() { return detail::context_shifting<decoder<float>, kv_cache<float>>; }

TEST(context_shift, after_each_shift_the_cache_equals_a_fresh_prefill_of_what_it_keeps) {
    if (!have_shift_context()) GTEST_SKIP() << "decoder::shift_context is not there yet";
    const tokenizer tok = test::scripted_tokenizer();
    decoder<float> dec(one_layer_model(static_cast<std::int64_t>(tok.vocab_size())), 1);
    const std::vector<token_id> prompt{test::bos_id, test::piece(tok, "a"), test::piece(tok, "b"),
                                       test::piece(tok, "c"), test::piece(tok, "Hello")};
    constexpr std::int64_t capacity = 16;
    for (const std::int64_t keep : {0, 2, -1}) {
        generation_options o = greedy_options(60);
        o.ignore_eos = true;
        o.context_shift = true;
        o.keep = keep;
        kv_cache<float> cache(dec.config(), capacity);
        const auto r = generate(dec, cache, tok, prompt, o);
        EXPECT_EQ(r.reason, finish_reason::max_new_tokens) << "keep " << keep;
        ASSERT_EQ(r.tokens.size(), 60u);
        const std::int64_t n_keep = keep < 0 ? 5 : keep + 1;  // BOS counted
        std::int64_t n_shifts = 0;
        expect_matches_fresh_prefill(dec, prompt, r, capacity, n_keep, n_shifts);
        EXPECT_GE(n_shifts, 3);
        EXPECT_EQ(r.n_context_shifts, n_shifts) << "keep " << keep;
        EXPECT_LE(cache.size(), capacity);
    }
}

TEST(context_shift, is_refused_where_it_cannot_work) {
    const tokenizer tok = test::scripted_tokenizer();
    decoder<float> dec(one_layer_model(static_cast<std::int64_t>(tok.vocab_size())), 1);
    const std::vector<token_id> prompt{test::bos_id, test::piece(tok, "a"), test::piece(tok, "b"),
                                       test::piece(tok, "c")};
    generation_options o = greedy_options(40);
    o.context_shift = true;

    no_cache<float> scratch(dec.config(), 16);
    try {
        generate(dec, scratch, tok, prompt, o);
        FAIL() << "no_cache cannot shift";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("context_shift needs a KV cache that keeps history"), std::string::npos)
            << e.what();
    }
    if (!have_shift_context()) return;

    // The whole prompt kept in a 5-position cache leaves 1 position: nothing to drop by halves.
    kv_cache<float> tiny(dec.config(), 5);
    o.keep = -1;
    try {
        generate(dec, tiny, tok, prompt, o);
        FAIL() << "keeping 4 of 5 positions must be refused";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("context_shift keeps 4 positions of a cache of 5"), std::string::npos)
            << e.what();
    }
    o.keep = 2;  // 3 with BOS: fine
    const auto r = generate(dec, tiny, tok, prompt, o);
    EXPECT_EQ(r.tokens.size(), 40u);
    o.keep = -2;
    EXPECT_THROW(generate(dec, tiny, tok, prompt, o), invalid_argument_error);
}

TEST(context_shift, is_refused_for_learned_positions) {
    NEXTTOK_REQUIRE_DATA("models/random/tiny-gpt2-f32.gguf");
    if (!have_shift_context()) GTEST_SKIP() << "decoder::shift_context is not there yet";
    auto m = load_model(test::data_path("models/random/tiny-gpt2-f32.gguf"));
    const tokenizer tok = load_tokenizer(*m->gguf());
    decoder<float> dec(m, 1);
    kv_cache<float> cache(m->config(), 32);
    generation_options o = greedy_options(40);
    o.context_shift = true;
    try {
        generate(dec, cache, tok, tok.encode("Hello", false), o);
        FAIL() << "learned positions cannot be shifted";
    } catch (const unsupported_error& e) {
        EXPECT_NE(std::string(e.what()).find("learned position embeddings"), std::string::npos) << e.what();
    }
}

TEST(context_shift, scheduler_and_speculative_decoding_refuse_it) {
    const tokenizer tok = test::scripted_tokenizer();
    auto m = one_layer_model(static_cast<std::int64_t>(tok.vocab_size()));
    decoder<float> dec(m, 1);
    const std::vector<token_id> prompt{test::bos_id, test::piece(tok, "a")};
    generation_options o = greedy_options(8);
    o.context_shift = true;
    paged_kv_cache<float> pool(m->config(), {.n_blocks = 8, .block_size = 8});
    scheduler<float> batch(dec, pool, &tok);
    EXPECT_THROW(batch.submit(prompt, o), invalid_argument_error);
    kv_cache<float> cache(m->config(), 16);
    ngram_drafter lookup(2);
    EXPECT_THROW(generate_speculative(dec, cache, lookup, tok, prompt, o), invalid_argument_error);
}

// Acceptance 4 in the library: far past the 128-position context of stories260K.gguf.
TEST(context_shift, stories260_k_generates_far_past_its_context) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    if (!have_shift_context()) GTEST_SKIP() << "decoder::shift_context is not there yet";
    const auto s = load_stories();
    decoder<float> dec(s.m, 1);
    kv_cache<float> cache(s.m->config());
    generation_options o = greedy_options(1200);
    o.ignore_eos = true;
    o.context_shift = true;
    const auto prompt = s.tok.encode(prompt_13, true);
    const auto r = generate(dec, cache, s.tok, prompt, o);
    EXPECT_EQ(r.reason, finish_reason::max_new_tokens);
    EXPECT_EQ(r.tokens.size(), 1200u);
    // keep 0: BOS stays, half of the other 127 positions (63) go at each shift. The first shift comes
    // when token 116 must run (13 + 115 positions filled), then every 63 tokens.
    EXPECT_EQ(r.n_context_shifts, 1 + (1200 - 1 - 116) / 63);
    EXPECT_EQ(cache.size(), 128 - 63 + (1200 - 1 - 115 - 1) % 63 + 1);
    // Up to the first shift, the tokens are those without context shift.
    kv_cache<float> plain(s.m->config());
    const auto first = generate(dec, plain, s.tok, prompt, greedy_options(1000));
    ASSERT_EQ(first.tokens.size(), 116u);
    EXPECT_TRUE(std::equal(first.tokens.begin(), first.tokens.end(), r.tokens.begin()));
}

}  // namespace
}  // namespace nexttok

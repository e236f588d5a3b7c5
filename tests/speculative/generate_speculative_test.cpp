// generate_speculative() with greedy selection on stories260K: the oracle is plain generate(), token
// for token, log-probability for log-probability and streamed event for streamed event, whatever the
// draft (a random model of the same vocabulary, the target itself, a q8_0 copy, n-gram lookup). Also:
// a stop string inside an accepted run ends generation where generate() ends it; the rounds keep the
// caches at exactly the kept positions (the next logits are bitwise those of plain decoding); bad
// inputs are refused with messages naming the field.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/paged_kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/sampling.hpp>
#include <nexttok/speculative.hpp>
#include <nexttok/stopping.hpp>

#include "speculative_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace nexttok {
namespace {

using test::stories;

// What a callback saw, one entry per event.
struct event_log {
    std::vector<token_id> ids;
    std::vector<std::string> texts;
    std::vector<std::int64_t> indices;
    token_callback callback() {
        return [this](const token_event& e) {
            ids.push_back(e.id);
            texts.emplace_back(e.text);
            indices.push_back(e.index);
            return true;
        };
    }
};

generation_options greedy_options(std::int64_t n) {
    generation_options o;
    o.sampling.temperature = 0.0f;
    o.ignore_eos = true;
    o.max_new_tokens = n;
    o.n_logprobs = 2;
    return o;
}

class speculative_greedy : public ::testing::Test {
protected:
    void SetUp() override {
        NEXTTOK_REQUIRE_DATA(test::stories_gguf);
        s_ = std::make_unique<stories>(test::load_stories());
        prompt_ = s_->tok.encode("Once upon a time", true);
        decoder<float> dec(s_->m);
        kv_cache<float> cache(s_->m->config(), 256);  // the GGUF says 128 positions; RoPE runs beyond
        auto cb = plain_events_.callback();
        plain_ = generate(dec, cache, s_->tok, prompt_, greedy_options(200), cb);
        ASSERT_EQ(plain_.tokens.size(), 200u);
    }

    // Greedy speculative generation of 200 tokens with `draft`, checked against plain_ in full.
    template <class Drafter, class Cache = kv_cache<float>>
    speculative_result expect_plain_output(Drafter& draft, const speculative_options& spec) {
        decoder<float> dec(s_->m);
        Cache cache(s_->m->config(), 256);
        return expect_plain_output_in(dec, cache, draft, spec);
    }

    template <class Drafter, class Cache>
    speculative_result expect_plain_output_in(decoder<float>& dec, Cache& cache, Drafter& draft,
                                              const speculative_options& spec) {
        event_log events;
        auto cb = events.callback();
        speculative_result r = generate_speculative(dec, cache, draft, s_->tok, prompt_, greedy_options(200), spec, cb);
        EXPECT_EQ(r.tokens, plain_.tokens);
        EXPECT_EQ(r.text, plain_.text);
        EXPECT_EQ(r.reason, finish_reason::max_new_tokens);
        EXPECT_EQ(r.logprobs, plain_.logprobs);  // bitwise: the verification rows are the decode steps' logits
        EXPECT_EQ(r.processed_logprobs, plain_.processed_logprobs);
        EXPECT_EQ(r.top_logprobs.size(), plain_.top_logprobs.size());
        for (std::size_t i = 0; i < std::min(r.top_logprobs.size(), plain_.top_logprobs.size()); ++i) {
            EXPECT_EQ(r.top_logprobs[i].size(), 2u);
            if (r.top_logprobs[i].size() != 2u || plain_.top_logprobs[i].size() != 2u) continue;
            for (std::size_t j = 0; j < 2; ++j) {
                EXPECT_EQ(r.top_logprobs[i][j].id, plain_.top_logprobs[i][j].id);
                EXPECT_EQ(r.top_logprobs[i][j].logprob, plain_.top_logprobs[i][j].logprob);
            }
        }
        EXPECT_EQ(events.ids, plain_events_.ids);
        EXPECT_EQ(events.texts, plain_events_.texts);
        EXPECT_EQ(events.indices, plain_events_.indices);
        EXPECT_EQ(cache.size(), static_cast<std::int64_t>(prompt_.size() + r.tokens.size()) - 1);
        const speculative_stats& st = r.speculation;
        EXPECT_LE(st.n_accepted, st.n_drafted);
        EXPECT_EQ(st.n_target_calls, st.n_rounds + 1);  // the prefill, then one call per round
        // Every round keeps its accepted drafts and adds one token.
        EXPECT_EQ(static_cast<std::int64_t>(r.tokens.size()), st.n_accepted + st.n_rounds);
        return r;
    }

    std::unique_ptr<stories> s_;
    std::vector<token_id> prompt_;
    generation_result plain_;
    event_log plain_events_;
};

TEST_F(speculative_greedy, random_draft_of_the_same_vocabulary_gives_the_plain_output) {
    decoder<float> draft_dec(test::random_draft());
    kv_cache<float> draft_cache(draft_dec.config(), 256);
    model_drafter draft(draft_dec, draft_cache);
    const auto r = expect_plain_output(draft, {.draft_max = 4, .draft_min = 1});
    EXPECT_GT(r.speculation.n_drafted, 0);
    EXPECT_LT(r.speculation.acceptance_rate(), 0.5) << "a random draft should rarely agree with stories260K";
}

TEST_F(speculative_greedy, the_target_as_its_own_draft_is_always_accepted) {
    decoder<float> draft_dec(s_->m);
    kv_cache<float> draft_cache(s_->m->config(), 256);
    model_drafter draft(draft_dec, draft_cache);
    const auto r = expect_plain_output(draft, {.draft_max = 8, .adaptive = false});
    EXPECT_EQ(r.speculation.acceptance_rate(), 1.0);
    // 200 tokens, 9 per round (8 drafts + 1) but the last round's, whose drafts stop at max_new_tokens.
    EXPECT_EQ(r.speculation.n_rounds, 23);
}

TEST_F(speculative_greedy, one_decoder_can_serve_target_and_draft_with_two_caches) {
    decoder<float> dec(s_->m);
    kv_cache<float> cache(s_->m->config(), 256), draft_cache(s_->m->config(), 256);
    model_drafter draft(dec, draft_cache);
    const auto r = expect_plain_output_in(dec, cache, draft, {.draft_max = 5});
    EXPECT_EQ(r.speculation.acceptance_rate(), 1.0);
}

TEST_F(speculative_greedy, q8_0_copy_as_draft_gives_the_plain_output) {
    decoder<float> draft_dec(test::q8_0_copy(*s_->m));
    kv_cache<float> draft_cache(s_->m->config(), 256);
    model_drafter draft(draft_dec, draft_cache);
    const auto r = expect_plain_output(draft, {.draft_max = 6});
    EXPECT_GT(r.speculation.acceptance_rate(), 0.6) << "an 8-bit copy should mostly agree";
    EXPECT_LT(r.speculation.n_rounds, 100);
}

TEST_F(speculative_greedy, ngram_lookup_gives_the_plain_output) {
    ngram_drafter draft(3);
    const auto r = expect_plain_output(draft, {.draft_max = 6});
    EXPECT_GT(r.speculation.n_drafted, 0) << "stories260K's greedy text repeats itself";
    EXPECT_GT(r.speculation.n_accepted, 0);
}

TEST_F(speculative_greedy, ngram_lookup_on_a_paged_sequence_gives_the_plain_output) {
    decoder<float> dec(s_->m);
    paged_kv_cache<float> pool(s_->m->config(), {.n_blocks = 32, .block_size = 16, .max_seq_len = 256});
    auto seq = pool.sequence(pool.create());
    ngram_drafter draft(2);
    expect_plain_output_in(dec, seq, draft, {.draft_max = 8, .adaptive = false});
}

// A stop string met inside an accepted run: generation ends at that token, the text is cut and the
// callback sees exactly what generate() shows.
TEST_F(speculative_greedy, a_stop_string_inside_an_accepted_run_ends_generation_there) {
    const std::string stop = "Lily";
    ASSERT_NE(plain_.text.find(stop), std::string::npos);
    generation_options o = greedy_options(200);
    o.stop = {stop};
    decoder<float> dec(s_->m);
    kv_cache<float> cache(s_->m->config(), 256);
    event_log plain_events;
    auto plain_cb = plain_events.callback();
    const generation_result plain = generate(dec, cache, s_->tok, prompt_, o, plain_cb);
    ASSERT_EQ(plain.reason, finish_reason::stop_string);

    decoder<float> draft_dec(s_->m);
    kv_cache<float> draft_cache(s_->m->config(), 256);
    model_drafter draft(draft_dec, draft_cache);
    event_log events;
    auto cb = events.callback();
    const auto r =
        generate_speculative(dec, cache, draft, s_->tok, prompt_, o, {.draft_max = 8, .adaptive = false}, cb);
    EXPECT_EQ(r.reason, finish_reason::stop_string);
    EXPECT_EQ(r.tokens, plain.tokens);
    EXPECT_EQ(r.text, plain.text);
    EXPECT_EQ(events.ids, plain_events.ids);
    EXPECT_EQ(events.texts, plain_events.texts);
    // Every round yields 9 tokens (8 kept drafts and one more): the stop came at a draft that was not
    // the last of its run.
    const std::size_t in_round = r.tokens.size() % 9;
    EXPECT_TRUE(in_round >= 1 && in_round <= 7) << r.tokens.size() << " tokens";
    EXPECT_EQ(r.speculation.acceptance_rate(), 1.0);
}

TEST_F(speculative_greedy, a_callback_returning_false_ends_generation_inside_a_run) {
    decoder<float> dec(s_->m), draft_dec(s_->m);
    kv_cache<float> cache(s_->m->config(), 256), draft_cache(s_->m->config(), 256);
    model_drafter draft(draft_dec, draft_cache);
    int n_events = 0;
    token_callback cb = [&](const token_event&) {
        return ++n_events < 5;
    };
    const auto r = generate_speculative(dec, cache, draft, s_->tok, prompt_, greedy_options(200), {.draft_max = 8}, cb);
    EXPECT_EQ(r.reason, finish_reason::callback);
    ASSERT_EQ(r.tokens.size(), 5u);
    EXPECT_EQ(r.tokens, std::vector<token_id>(plain_.tokens.begin(), plain_.tokens.begin() + 5));
    EXPECT_EQ(cache.size(), static_cast<std::int64_t>(prompt_.size()) + 4);
}

}  // namespace
}  // namespace nexttok

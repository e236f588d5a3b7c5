// sequence_generator, the per-sequence step machine under generate(): driven by hand on the real
// stories260K model it must reproduce generate() bit for bit (tokens, text, both log-probabilities,
// the top alternatives, the reason and every streamed event), alone and interleaved step by step
// with another sequence as a continuous-batching scheduler would; stop_with() and a generator that
// needs no forward call are checked on the scripted decoder, where every byte is known.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/generation.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/sampling.hpp>
#include <nexttok/stopping.hpp>
#include <nexttok/tokenizer.hpp>

#include "generation_test_util.hpp"
#include <test_data.hpp>

#include "stories_model.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <type_traits>
#include <vector>

namespace nexttok {
namespace {

constexpr std::int64_t capacity = 256;

using test::stories_gguf;
using stories = test::stories_model;

// A token_event with its views copied out.
struct event_record {
    token_id id = no_token;
    std::string text;
    float logprob = 0.0f;
    std::int64_t index = 0;
    std::vector<token_logprob> top;
    std::int64_t sample = 0;
};

// Collects the stream. Referenced by the generator through `callback`: must not move.
struct recorder {
    std::vector<event_record> events;
    token_callback callback = [this](const token_event& e) {
        events.push_back(
            {e.id, std::string(e.text), e.logprob, e.index, {e.top_logprobs.begin(), e.top_logprobs.end()}, e.sample});
        return true;
    };
};

// The concatenation of the streamed text.
std::string streamed_text(const std::vector<event_record>& events) {
    std::string all;
    for (const auto& e : events) all += e.text;
    return all;
}

void expect_same_top(const std::vector<token_logprob>& a, const std::vector<token_logprob>& b,
                     const std::string& where) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].id, b[i].id) << where << " rank " << i;
        EXPECT_EQ(a[i].logprob, b[i].logprob)
            << where << " rank " << i;  // bitwise: the same arithmetic on the same logits
    }
}

void expect_same_result(const generation_result& got, const generation_result& want) {
    EXPECT_EQ(got.tokens, want.tokens);
    EXPECT_EQ(got.text, want.text);
    EXPECT_EQ(got.reason, want.reason);
    EXPECT_EQ(got.logprobs, want.logprobs);
    EXPECT_EQ(got.processed_logprobs, want.processed_logprobs);
    ASSERT_EQ(got.top_logprobs.size(), want.top_logprobs.size());
    for (std::size_t i = 0; i < got.top_logprobs.size(); ++i)
        expect_same_top(got.top_logprobs[i], want.top_logprobs[i], "step " + std::to_string(i));
    EXPECT_EQ(got.timings.n_prompt_tokens, want.timings.n_prompt_tokens);
    EXPECT_EQ(got.timings.n_decode_steps, want.timings.n_decode_steps);
}

void expect_same_events(const std::vector<event_record>& got, const std::vector<event_record>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const std::string where = "event " + std::to_string(i);
        EXPECT_EQ(got[i].id, want[i].id) << where;
        EXPECT_EQ(got[i].text, want[i].text) << where;
        EXPECT_EQ(got[i].logprob, want[i].logprob) << where;
        EXPECT_EQ(got[i].index, want[i].index) << where;
        EXPECT_EQ(got[i].sample, want[i].sample) << where;
        expect_same_top(got[i].top, want[i].top, where);
    }
}

detail::loop_settings settings_of(const generation_options& o) {
    detail::loop_settings settings;
    settings.n_logprobs = o.n_logprobs;
    return settings;
}

generation_options greedy_options() {
    generation_options o;
    o.sampling.temperature = 0.0f;
    o.max_new_tokens = 40;
    o.n_logprobs = 3;
    return o;
}

generation_options sampled_options(std::vector<std::string> stop) {
    generation_options o;
    o.sampling.temperature = 0.8f;
    o.sampling.seed = 7;
    o.max_new_tokens = 80;
    o.n_logprobs = 2;
    o.stop = std::move(stop);
    return o;
}

struct reference_run {
    generation_result result;
    std::vector<event_record> events;
};

reference_run run_generate(const stories& s, std::span<const token_id> prompt, const generation_options& o) {
    decoder<float> dec(s.m);
    kv_cache<float> cache(s.m->config(), capacity);
    recorder rec;
    reference_run run;
    run.result = generate(dec, cache, s.tok, prompt, o, rec.callback);
    run.events = rec.events;
    return run;
}

// One sequence by hand: the driver loop of sequence_generator's contract, with the policies
// generate() builds from the same options.
reference_run run_by_hand(const stories& s, std::span<const token_id> prompt, const generation_options& o) {
    decoder<float> dec(s.m);
    kv_cache<float> cache(s.m->config(), capacity);
    auto sample = make_sampler(o, s.tok);
    auto stop = make_stopping(o, s.tok);
    recorder rec;
    sequence_generator gen(&s.tok, prompt, sample, stop, rec.callback, cache.capacity(), settings_of(o));
    std::vector<float> logits(static_cast<std::size_t>(s.m->config().vocab_size));
    if (gen.start()) {
        dec.forward(prompt, 0, cache, logits);
        while (gen.next(logits)) {
            const token_id last = gen.sequence().back();
            dec.forward(std::span<const token_id>(&last, 1), static_cast<std::int64_t>(gen.sequence().size()) - 1,
                        cache, logits);
        }
    }
    EXPECT_TRUE(gen.finished());
    EXPECT_EQ(gen.n_generated(), static_cast<std::int64_t>(gen.sequence().size()) - gen.n_prompt());
    reference_run run;
    run.result = gen.finish();
    run.events = rec.events;
    return run;
}

// A stop string that the seeded sample reaches halfway, taken from the unstopped sample's text, so
// the stopped run really ends on it.
std::string stop_string_of(const std::string& text) { return text.substr(text.size() / 2, 5); }

TEST(sequence_generator, driven_by_hand_is_generate_greedy) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto& s = test::shared_stories();
    const auto prompt = s.tok.encode("Once upon a time", true);
    const auto want = run_generate(s, prompt, greedy_options());
    ASSERT_EQ(want.result.reason, finish_reason::max_new_tokens);
    ASSERT_EQ(want.result.tokens.size(), 40u);
    const auto got = run_by_hand(s, prompt, greedy_options());
    expect_same_result(got.result, want.result);
    expect_same_events(got.events, want.events);
    EXPECT_EQ(got.result.timings.n_decode_steps, 39);
}

TEST(sequence_generator, driven_by_hand_is_generate_sampled_with_stop_string) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto& s = test::shared_stories();
    const auto prompt = s.tok.encode("Once upon a time", true);
    const auto free_run = run_generate(s, prompt, sampled_options({}));
    ASSERT_GT(free_run.result.text.size(), 60u);
    expect_same_result(run_by_hand(s, prompt, sampled_options({})).result, free_run.result);

    const std::string stop = stop_string_of(free_run.result.text);
    const auto want = run_generate(s, prompt, sampled_options({stop}));
    ASSERT_EQ(want.result.reason, finish_reason::stop_string) << "stop string '" << stop << "'";
    EXPECT_EQ(want.result.text.find(stop), std::string::npos);
    EXPECT_LT(want.result.tokens.size(), free_run.result.tokens.size());
    const auto got = run_by_hand(s, prompt, sampled_options({stop}));
    expect_same_result(got.result, want.result);
    expect_same_events(got.events, want.events);
    EXPECT_EQ(streamed_text(got.events), got.result.text);
}

// One sequence of a scheduler's batch: its own cache, policies, stream and logits buffer. Must not
// move (the generator refers to its members).
struct lane {
    lane(const stories& s, std::vector<token_id> prompt_ids, const generation_options& o)
            : prompt(std::move(prompt_ids)),
              cache(s.m->config(), capacity),
              sample(make_sampler(o, s.tok)),
              stop(make_stopping(o, s.tok)),
              logits(static_cast<std::size_t>(s.m->config().vocab_size)),
              gen(&s.tok, prompt, sample, stop, rec.callback, cache.capacity(), settings_of(o)) {}

    std::vector<token_id> prompt;
    kv_cache<float> cache;
    any_sampler sample;
    any_of_criteria stop;
    recorder rec;
    std::vector<float> logits;  // (vocab_size)
    sequence_generator<any_sampler, any_of_criteria> gen;
};

TEST(sequence_generator, two_interleaved_sequences_each_give_their_result_alone) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto& s = test::shared_stories();
    const auto prompt_a = s.tok.encode("Once upon a time", true);
    const auto prompt_b = s.tok.encode("Lily and Ben went to the park", true);
    const auto free_b = run_generate(s, prompt_b, sampled_options({}));
    ASSERT_GT(free_b.result.text.size(), 20u);
    const std::string stop = stop_string_of(free_b.result.text);
    const auto want_a = run_generate(s, prompt_a, greedy_options());
    const auto want_b = run_generate(s, prompt_b, sampled_options({stop}));
    ASSERT_EQ(want_b.result.reason, finish_reason::stop_string);
    ASSERT_NE(want_a.result.tokens.size(), want_b.result.tokens.size()) << "one lane should run on alone";

    decoder<float> dec(s.m);  // shared, as a scheduler's: one forward call at a time
    lane a(s, prompt_a, greedy_options());
    lane b(s, prompt_b, sampled_options({stop}));
    const std::array<lane*, 2> lanes{&a, &b};
    for (lane* l : lanes)
        if (l->gen.start()) dec.forward(l->prompt, 0, l->cache, l->logits);
    int rounds = 0;
    while (!a.gen.finished() || !b.gen.finished()) {
        for (lane* l : lanes) {
            if (l->gen.finished() || !l->gen.next(l->logits)) continue;
            const token_id last = l->gen.sequence().back();
            dec.forward(std::span<const token_id>(&last, 1), static_cast<std::int64_t>(l->gen.sequence().size()) - 1,
                        l->cache, l->logits);
        }
        ++rounds;
    }
    EXPECT_EQ(rounds, static_cast<int>(std::max(want_a.result.tokens.size(), want_b.result.tokens.size())));
    const auto got_a = a.gen.finish();
    const auto got_b = b.gen.finish();
    expect_same_result(got_a, want_a.result);
    expect_same_events(a.rec.events, want_a.events);
    expect_same_result(got_b, want_b.result);
    expect_same_events(b.rec.events, want_b.events);
}

TEST(sequence_generator, stop_with_cancelled_on_stories_keeps_the_tokens_so_far) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto& s = test::shared_stories();
    const auto prompt = s.tok.encode("Once upon a time", true);
    generation_options ten = greedy_options();
    ten.max_new_tokens = 10;
    const auto want = run_generate(s, prompt, ten);
    ASSERT_EQ(want.result.tokens.size(), 10u);

    decoder<float> dec(s.m);
    kv_cache<float> cache(s.m->config(), capacity);
    const generation_options o = greedy_options();  // would run 40 tokens
    auto sample = make_sampler(o, s.tok);
    auto stop = make_stopping(o, s.tok);
    recorder rec;
    sequence_generator gen(&s.tok, prompt, sample, stop, rec.callback, cache.capacity(), settings_of(o));
    std::vector<float> logits(static_cast<std::size_t>(s.m->config().vocab_size));
    ASSERT_TRUE(gen.start());
    dec.forward(prompt, 0, cache, logits);
    while (gen.next(logits)) {
        if (gen.n_generated() == 10) {
            gen.stop_with(finish_reason::cancelled);
            break;
        }
        const token_id last = gen.sequence().back();
        dec.forward(std::span<const token_id>(&last, 1), static_cast<std::int64_t>(gen.sequence().size()) - 1, cache,
                    logits);
    }
    EXPECT_EQ(gen.reason(), finish_reason::cancelled);
    const auto got = gen.finish();
    EXPECT_EQ(got.reason, finish_reason::cancelled);
    EXPECT_EQ(got.tokens, want.result.tokens);
    EXPECT_EQ(got.logprobs, want.result.logprobs);
    EXPECT_EQ(got.text, want.result.text);
    EXPECT_EQ(streamed_text(rec.events), got.text);
}

class scripted : public ::testing::Test {
protected:
    const tokenizer tok = test::scripted_tokenizer();
    const std::vector<token_id> prompt{test::bos_id};
    token_id p(const char* text) const { return test::piece(tok, text); }
};

TEST_F(scripted, stop_with_cancelled_releases_the_held_back_text) {
    // After x S TO the text "xSTO" shows only "x": "STO" could still become "STOP". Cancelled there,
    // the held-back text is no stop string and finish() streams it.
    test::scripted_decoder dec(static_cast<std::int64_t>(tok.vocab_size()), 1,
                               {p("x"), p("S"), p("TO"), p("P"), p("y")});
    kv_cache<float> cache(dec.config(), 64);
    auto sample = make_sampler_chain(greedy{});
    any_of stop(eos_criterion{test::eos_id}, max_new_tokens(64), stop_strings(std::vector<std::string>{"STOP"}));
    recorder rec;
    sequence_generator gen(&tok, prompt, sample, stop, rec.callback, cache.capacity());
    std::vector<float> logits(tok.vocab_size());
    ASSERT_TRUE(gen.start());
    dec.forward(prompt, 0, cache, logits);
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(gen.next(logits));
        dec.forward(std::span<const token_id>(&gen.sequence().back(), 1),
                    static_cast<std::int64_t>(gen.sequence().size()) - 1, cache, logits);
    }
    EXPECT_FALSE(gen.finished());
    gen.stop_with(finish_reason::cancelled);
    gen.stop_with(finish_reason::cache_full);  // the first reason is kept
    EXPECT_THROW(gen.stop_with(finish_reason::none), invalid_argument_error);
    EXPECT_TRUE(gen.finished());
    EXPECT_EQ(gen.reason(), finish_reason::cancelled);

    const auto r = gen.finish();
    EXPECT_EQ(r.reason, finish_reason::cancelled);
    EXPECT_EQ(r.tokens, (std::vector<token_id>{p("x"), p("S"), p("TO")}));
    EXPECT_EQ(r.text, "xSTO");
    ASSERT_EQ(rec.events.size(), 4u);
    EXPECT_EQ(rec.events[0].text, "x");
    EXPECT_EQ(rec.events[1].text, "");
    EXPECT_EQ(rec.events[2].text, "");
    EXPECT_EQ(rec.events[3].id, no_token);
    EXPECT_EQ(rec.events[3].index, 3);
    EXPECT_EQ(rec.events[3].text, "STO");
    EXPECT_EQ(streamed_text(rec.events), r.text);
}

TEST_F(scripted, nothing_to_generate_needs_no_logits) {
    // A prompt ending inside a character (the first byte of 日): the flush turns it into U+FFFD, which
    // generate() reports as text too; the generator needs neither a model nor logits to say so.
    const std::vector<token_id> partial{test::bos_id, test::byte_token(tok, 0xE6)};
    for (const auto& pr : {prompt, partial}) {
        auto sample = make_sampler_chain(greedy{});
        max_new_tokens stop(0);
        recorder rec;
        sequence_generator gen(&tok, pr, sample, stop, rec.callback, 64);
        EXPECT_FALSE(gen.start());
        EXPECT_TRUE(gen.finished());
        EXPECT_EQ(gen.reason(), finish_reason::max_new_tokens);
        EXPECT_EQ(gen.n_generated(), 0);
        EXPECT_EQ(gen.sequence(), pr);
        const auto r = gen.finish();
        EXPECT_TRUE(r.tokens.empty());
        EXPECT_TRUE(r.logprobs.empty());
        EXPECT_EQ(r.timings.n_decode_steps, 0);

        test::scripted_decoder dec(static_cast<std::int64_t>(tok.vocab_size()), pr.size(), {p("x")});
        kv_cache<float> cache(dec.config(), 64);
        auto sample2 = make_sampler_chain(greedy{});
        max_new_tokens stop2(0);
        recorder rec2;
        const auto want = generate(dec, cache, tok, pr, sample2, stop2, rec2.callback);
        EXPECT_EQ(dec.n_calls, 0);
        expect_same_result(r, want);
        expect_same_events(rec.events, rec2.events);
        EXPECT_EQ(streamed_text(rec.events), r.text);
    }
}

TEST_F(scripted, cache_full_at_capacity_and_no_text_without_a_tokenizer) {
    test::scripted_decoder dec(static_cast<std::int64_t>(tok.vocab_size()), 1, std::vector<token_id>(20, p("a")));
    kv_cache<float> cache(dec.config(), 4);
    ASSERT_EQ(cache.capacity(), 4);
    auto sample = make_sampler_chain(greedy{});
    max_new_tokens stop(64);
    const token_callback none;
    sequence_generator gen(nullptr, prompt, sample, stop, none, cache.capacity());
    std::vector<float> logits(tok.vocab_size());
    ASSERT_TRUE(gen.start());
    dec.forward(prompt, 0, cache, logits);
    int n_forward = 1;
    while (gen.next(logits)) {
        dec.forward(std::span<const token_id>(&gen.sequence().back(), 1),
                    static_cast<std::int64_t>(gen.sequence().size()) - 1, cache, logits);
        ++n_forward;
    }
    EXPECT_EQ(gen.reason(), finish_reason::cache_full);
    const auto r = gen.finish();
    EXPECT_EQ(r.tokens, std::vector<token_id>(4, p("a")));  // 4 positions: the prompt and 3 tokens run, a 4th never run
    EXPECT_EQ(n_forward, 4);
    EXPECT_EQ(r.timings.n_decode_steps, 3);
    EXPECT_TRUE(r.text.empty());

    kv_cache<float> cache2(dec.config(), 4);
    auto sample2 = make_sampler_chain(greedy{});
    max_new_tokens stop2(64);
    expect_same_result(r, generate(dec, cache2, prompt, sample2, stop2));

    EXPECT_THROW(sequence_generator(&tok, std::span<const token_id>(), sample, stop, none, 4), invalid_argument_error);
    EXPECT_THROW(sequence_generator(&tok, std::vector<token_id>(5, test::bos_id), sample, stop, none, 4),
                 invalid_argument_error);
    // The callback is referenced: a temporary one would dangle, so it does not compile.
    using generator = sequence_generator<decltype(sample), max_new_tokens>;
    static_assert(std::is_constructible_v<generator, const tokenizer*, std::span<const token_id>, decltype(sample)&,
                                          max_new_tokens&, const token_callback&, std::int64_t>);
    static_assert(!std::is_constructible_v<generator, const tokenizer*, std::span<const token_id>, decltype(sample)&,
                                           max_new_tokens&, token_callback&&, std::int64_t>);
}

}  // namespace
}  // namespace nexttok

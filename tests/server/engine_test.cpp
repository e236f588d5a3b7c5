// The server's engine (examples/server/engine.hpp) on the built-in demo model: each choice of a job
// gives what generate() gives alone with its seed (the oracle), its events concatenate to that text,
// admission refuses past the limit, a cancelled job ends and frees its blocks, and a prompt longer
// than the context is refused at submission.
#include "../../examples/generate/demo_model.hpp"
#include "../../examples/server/engine.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;

struct collected {
    std::vector<std::string> text;  // per choice, the events' texts concatenated
    std::vector<nexttok::finish_reason> reason;
    std::vector<std::int64_t> n_tokens;
};

// Pops the job's events until it ends (bounded: 30 s).
collected drain(server::job& j) {
    collected c;
    c.text.resize(static_cast<std::size_t>(j.n_choices()));
    c.reason.resize(c.text.size(), nexttok::finish_reason::none);
    c.n_tokens.resize(c.text.size(), -1);
    std::vector<server::choice_event> events;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    bool done = false;
    while (!done && std::chrono::steady_clock::now() < deadline) {
        events.clear();
        done = j.pop(events, 100ms);
        for (const auto& e : events) {
            const auto i = static_cast<std::size_t>(e.choice);
            if (e.finished) {
                c.reason[i] = e.reason;
                c.n_tokens[i] = e.n_tokens;
            } else {
                c.text[i] += e.text;
            }
        }
    }
    EXPECT_TRUE(done) << "the job did not end within 30 s";
    return c;
}

class engine_test : public ::testing::Test {
protected:
    engine_test()
            : tok_(demo::make_tokenizer()), model_(demo::make_model(static_cast<std::int64_t>(tok_.vocab_size()))) {}

    server::engine_options options(std::int64_t limit) const {
        server::engine_options o;
        o.threads = 1;
        o.schedule.max_running = 2;
        o.pool = {.n_blocks = 64, .block_size = 16, .max_seq_len = 256, .prefix_caching = true};
        o.limit = limit;
        return o;
    }

    nexttok::tokenizer tok_;
    std::shared_ptr<const nexttok::model> model_;
    server::metrics metrics_;
};

TEST_F(engine_test, choices_equal_generate_alone_with_seed_plus_i) {
    server::engine_impl<float, nexttok::paged_kv_cache<float>> eng(model_, tok_, options(8), metrics_);
    const auto prompt = tok_.encode("the little dog saw a big cat", true);
    nexttok::generation_options o;
    o.max_new_tokens = 24;
    o.sampling.seed = 7;
    o.n_logprobs = 2;
    std::vector<nexttok::generation_options> choices;
    for (int i = 0; i < 3; ++i) {
        choices.push_back(o);
        choices.back().sampling.seed += static_cast<std::uint64_t>(i);
    }
    const auto j = eng.submit(prompt, choices);
    ASSERT_TRUE(j);
    const collected got = drain(*j);
    EXPECT_FALSE(got.text[0].empty());

    nexttok::decoder<float> dec(model_, 1);
    nexttok::kv_cache<float> cache(model_->config(), 256);
    for (std::size_t i = 0; i < choices.size(); ++i) {
        const nexttok::generation_result want = nexttok::generate(dec, cache, tok_, prompt, choices[i]);
        EXPECT_EQ(got.text[i], want.text) << "choice " << i;
        EXPECT_EQ(got.reason[i], want.reason) << "choice " << i;
        EXPECT_EQ(got.n_tokens[i], static_cast<std::int64_t>(want.tokens.size())) << "choice " << i;
    }
    const server::engine_gauges g = eng.gauges();
    EXPECT_EQ(g.kv_blocks_used, 0);
    EXPECT_EQ(g.running, 0);
    EXPECT_EQ(g.prompt_tokens, 3 * static_cast<std::int64_t>(prompt.size()));
    EXPECT_NE(metrics_.render(g).find("nexttok_time_to_first_token_seconds_count 3\n"), std::string::npos);
}

TEST_F(engine_test, admission_cancel_and_too_long_prompts) {
    server::engine_impl<float, nexttok::paged_kv_cache<float>> eng(model_, tok_, options(2), metrics_);
    const auto prompt = tok_.encode("the cat", true);
    nexttok::generation_options endless;
    endless.max_new_tokens = -1;
    endless.ignore_eos = true;
    const auto long_job = eng.submit(prompt, {endless, endless});
    ASSERT_TRUE(long_job);
    EXPECT_FALSE(eng.submit(prompt, {endless})) << "a third choice is past the limit of 2";
    eng.cancel(*long_job);
    const collected got = drain(*long_job);
    for (const auto reason : got.reason)
        EXPECT_TRUE(reason == nexttok::finish_reason::cancelled || reason == nexttok::finish_reason::cache_full)
            << reason;
    EXPECT_EQ(eng.gauges().kv_blocks_used, 0);
    // The slots are free again.
    nexttok::generation_options short_one;
    short_one.max_new_tokens = 3;
    const auto again = eng.submit(prompt, {short_one});
    ASSERT_TRUE(again);
    EXPECT_EQ(drain(*again).n_tokens[0], 3);

    std::vector<nexttok::token_id> too_long(300, tok_.bos());
    EXPECT_THROW(eng.submit(too_long, {short_one}), nexttok::invalid_argument_error);
}

// Stopping: everything in flight ends as cancelled, and nothing new is admitted. The pool holds 8192
// positions, so the endless request is far from a full context when cancel_all() comes.
TEST_F(engine_test, cancel_all_ends_everything_in_flight) {
    server::engine_options o = options(2);
    o.pool = {.n_blocks = 512, .block_size = 16, .max_seq_len = 8192, .prefix_caching = true};
    server::engine_impl<float, nexttok::paged_kv_cache<float>> eng(model_, tok_, o, metrics_);
    const auto prompt = tok_.encode("the cat", true);
    nexttok::generation_options endless;
    endless.max_new_tokens = -1;
    endless.ignore_eos = true;
    nexttok::generation_options short_one;
    short_one.max_new_tokens = 3;
    const auto last = eng.submit(prompt, {endless});
    ASSERT_TRUE(last);
    eng.cancel_all();
    EXPECT_EQ(drain(*last).reason[0], nexttok::finish_reason::cancelled);
    EXPECT_FALSE(eng.submit(prompt, {short_one}));
}

}  // namespace

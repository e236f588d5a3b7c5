// score_windows() on stories260K: a text that fits one window is scored exactly as score() does;
// a longer one gives the sum of score() calls over the windows, written out by hand here (their
// bounds, the BOS put in front of every window but the first, the split into context and scored
// tokens), and it never asks the cache for more positions than it has.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/no_cache.hpp>
#include <nexttok/generation/score.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/tokenizer.hpp>

#include <test_data.hpp>

#include "stories_model.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nexttok {
namespace {

using test::stories_gguf;

const char* const story =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a "
    "big "
    "red ball under a tree. She wanted to play with it, but it was too high. Lily asked her mom to help her. Her mom "
    "smiled.";  // 88 tokens with BOS

struct fixture {
    std::shared_ptr<const model> m;
    tokenizer tok;
    std::vector<token_id> ids;  // BOS + the story
};

fixture load_story() {
    auto m = load_model(test::data_path(stories_gguf));
    tokenizer tok = load_tokenizer(*m->gguf());
    auto ids = tok.encode(story, true);
    return {m, std::move(tok), std::move(ids)};
}

// One window by hand: tokens [begin, end) of `all`, BOS in front unless it is the first, tokens
// [begin, from) as context and [from, end) scored.
score_result by_hand(decoder<float>& dec, std::int64_t capacity, const std::vector<token_id>& all, std::int64_t begin,
                     std::int64_t from, std::int64_t end, token_id bos) {
    std::vector<token_id> w(all.begin() + begin, all.begin() + end);
    if (begin > 0) w.front() = bos;
    kv_cache<float> cache(dec.config(), capacity);
    const std::span<const token_id> v(w);
    return score(dec, cache, v.first(static_cast<std::size_t>(from - begin)),
                 v.subspan(static_cast<std::size_t>(from - begin)));
}

void expect_sum_of(const score_result& got, const std::vector<score_result>& parts) {
    std::vector<float> lps;
    double sum = 0.0;
    for (const auto& p : parts) {
        lps.insert(lps.end(), p.token_logprobs.begin(), p.token_logprobs.end());
        sum += p.logprob;
    }
    EXPECT_EQ(got.token_logprobs, lps);
    EXPECT_EQ(got.logprob, sum);
    EXPECT_EQ(got.n_windows, static_cast<std::int64_t>(parts.size()));
}

TEST(score_windows, a_text_that_fits_is_scored_as_score_does) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto f = load_story();
    ASSERT_GT(f.ids.size(), 80u);
    decoder<float> dec(f.m, 1);
    const std::span<const token_id> all(f.ids);
    kv_cache<float> cache(f.m->config(), 128);
    const auto want = score(dec, cache, all.first(1), all.subspan(1));
    const auto got = score_windows(dec, cache, all.first(1), all.subspan(1), {.bos = f.tok.bos()});
    EXPECT_EQ(got.token_logprobs, want.token_logprobs);
    EXPECT_EQ(got.logprob, want.logprob);
    EXPECT_EQ(got.n_windows, 1);
    // Exactly filling the window is still one window.
    const auto n = static_cast<std::size_t>(f.ids.size());
    const auto exact =
        score_windows(dec, cache, all.first(4), all.subspan(4), {.window = static_cast<std::int64_t>(n)});
    EXPECT_EQ(exact.logprob, score(dec, cache, all.first(4), all.subspan(4)).logprob);
    EXPECT_EQ(exact.n_windows, 1);
}

TEST(score_windows, a_long_text_is_the_sum_of_its_windows) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto f = load_story();
    decoder<float> dec(f.m, 1);
    const std::span<const token_id> all(f.ids);
    const auto n = static_cast<std::int64_t>(f.ids.size());
    ASSERT_GT(n, 80);
    ASSERT_LT(n, 96);
    const token_id bos = f.tok.bos();

    // A 32-position cache, the default stride 16: windows end at 32, 48, 64, 80 and n; each later one
    // starts 32 before its end and scores the 16 (at the end: fewer) tokens after the previous end.
    {
        no_cache<float> cache(f.m->config(), 32);
        const auto got = score_windows(dec, cache, all.first(1), all.subspan(1), {.bos = bos});
        expect_sum_of(got, {by_hand(dec, 32, f.ids, 0, 1, 32, bos), by_hand(dec, 32, f.ids, 16, 32, 48, bos),
                            by_hand(dec, 32, f.ids, 32, 48, 64, bos), by_hand(dec, 32, f.ids, 48, 64, 80, bos),
                            by_hand(dec, 32, f.ids, n - 32, 80, n, bos)});
        EXPECT_EQ(got.n_tokens(), n - 1);
    }
    // A prompt of 40 tokens (longer than the window), window 32, stride 24, no BOS replacement: the
    // window ending at 32 scores nothing; the one ending at 56 scores [40, 56), then [56, 80), [80, n).
    {
        kv_cache<float> cache(f.m->config(), 64);
        const auto got = score_windows(dec, cache, all.first(40), all.subspan(40), {.window = 32, .stride = 24});
        auto plain = [&](std::int64_t begin, std::int64_t from, std::int64_t end) {
            std::vector<token_id> w(f.ids.begin() + begin, f.ids.begin() + end);
            kv_cache<float> c(f.m->config(), 32);
            const std::span<const token_id> v(w);
            return score(dec, c, v.first(static_cast<std::size_t>(from - begin)),
                         v.subspan(static_cast<std::size_t>(from - begin)));
        };
        expect_sum_of(got, {plain(24, 40, 56), plain(48, 56, 80), plain(n - 32, 80, n)});
        EXPECT_EQ(got.n_tokens(), n - 40);
    }
}

TEST(score_windows, rejects_windows_the_cache_cannot_hold) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const auto f = load_story();
    decoder<float> dec(f.m, 1);
    const std::span<const token_id> all(f.ids);
    kv_cache<float> cache(f.m->config(), 32);
    try {
        score_windows(dec, cache, all.first(1), all.subspan(1), {.window = 33});
        FAIL() << "a window larger than the cache must be refused";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("window = 33: expected 2 to the cache's 32 positions"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW(score_windows(dec, cache, all.first(1), all.subspan(1), {.stride = 32}), invalid_argument_error);
    EXPECT_THROW(score_windows(dec, cache, all.first(1), all.subspan(1), {.stride = -1}), invalid_argument_error);
    EXPECT_THROW(score_windows(dec, cache, all.first(1), all.subspan(1), {.window = 1}), invalid_argument_error);
    // score() itself still refuses what does not fit.
    EXPECT_THROW(score(dec, cache, all.first(1), all.subspan(1)), invalid_argument_error);
}

}  // namespace
}  // namespace nexttok

// DRY against a brute-force oracle written here from the definition (llama.cpp's semantics): for each
// earlier position j, the longest common suffix of the text ending at j and the whole text, capped by
// the most recent sequence breaker, makes the token after j cost multiplier * base^(len - allowed).
// Random contexts over a small alphabet exercise the Z-function; hand-built ones the breakers.
#include <nexttok/sampling/dry.hpp>
#include <nexttok/tokenizer/spm_tokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

namespace nexttok {
namespace {

struct dry_params {
    float multiplier = 0.8f;
    float base = 1.75f;
    std::int32_t allowed = 2;
    std::vector<std::vector<token_id>> breakers;
};

// Brute force, O(n^3): no Z-function, no ring buffer.
std::map<token_id, float> oracle_penalties(const std::vector<token_id>& ctx, const dry_params& p) {
    std::map<token_id, float> out;
    const std::size_t n = ctx.size();
    if (n <= static_cast<std::size_t>(p.allowed)) return out;
    // The cap: scanning from the newest token back, the first token that heads a breaker whose tail
    // follows it; the cap is the number of tokens after the breaker's last token.
    std::size_t limit = n;
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t head = n - 1 - i;
        long longest = -1;
        for (const auto& b : p.breakers) {
            if (b[0] != ctx[head] || b.size() - 1 > i) continue;
            if (std::equal(b.begin() + 1, b.end(), ctx.begin() + static_cast<long>(head) + 1))
                longest = std::max(longest, static_cast<long>(b.size() - 1));
        }
        if (longest >= 0) {
            limit = i - static_cast<std::size_t>(longest);
            break;
        }
    }
    if (limit < static_cast<std::size_t>(p.allowed)) return out;
    std::map<token_id, std::size_t> longest;
    for (std::size_t j = 0; j + 1 < n; ++j) {
        std::size_t len = 0;
        while (len <= j && ctx[j - len] == ctx[n - 1 - len]) ++len;
        len = std::min(len, limit);
        if (len >= static_cast<std::size_t>(p.allowed)) longest[ctx[j + 1]] = std::max(longest[ctx[j + 1]], len);
    }
    for (auto [t, len] : longest) {
        bool single_breaker = false;
        for (const auto& b : p.breakers) single_breaker = single_breaker || (b.size() == 1 && b[0] == t);
        if (single_breaker) continue;
        out[t] = p.multiplier * std::pow(p.base, static_cast<float>(len) - static_cast<float>(p.allowed));
    }
    return out;
}

// DRY's penalty per id: logits of 0 in, minus the result out.
std::map<token_id, float> dry_penalties(const std::vector<token_id>& ctx, const dry_params& p, std::size_t vocab,
                                        std::int32_t last_n = -1) {
    dry d(p.multiplier, p.base, p.allowed, last_n, p.breakers);
    for (token_id t : ctx) d.accept(t);
    candidates c;
    c.assign(std::vector<float>(vocab, 0.0f));
    d.apply(c);
    std::map<token_id, float> out;
    for (std::size_t i = 0; i < c.size(); ++i)
        if (c.logits[i] != 0.0f) out[c.ids[i]] = -c.logits[i];
    return out;
}

void expect_same(const std::map<token_id, float>& got, const std::map<token_id, float>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (auto [t, pen] : want) {
        ASSERT_TRUE(got.count(t)) << what << ": token " << t << " not penalized";
        EXPECT_NEAR(got.at(t), pen, 1e-5f * pen) << what << ": token " << t;
    }
}

TEST(sampling_dry, llama_cpps_worked_example) {
    // llama.cpp's comment: "a b c c b c y a b c": repeat counts 0 0 3 1 0 2 0 0 0 0, so after the
    // context, c extends "a b c" (3 -> 4): len 3; b extends "c" (1): below allowed 2; y extends "b c" (2).
    const token_id a = 1, b = 2, c = 3, y = 4;
    const std::vector<token_id> ctx{a, b, c, c, b, c, y, a, b, c};
    const dry_params p;
    const auto got = dry_penalties(ctx, p, 8);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_FLOAT_EQ(got.at(c), 0.8f * 1.75f);  // len 3: base^(3 - 2)
    EXPECT_FLOAT_EQ(got.at(y), 0.8f);          // len 2: base^0
    expect_same(got, oracle_penalties(ctx, p), "example");
}

TEST(sampling_dry, matches_the_brute_force_oracle_on_random_contexts) {
    std::mt19937 gen(2024);
    for (int round = 0; round < 300; ++round) {
        const std::size_t n = 1 + gen() % 60;
        const token_id alphabet = 2 + static_cast<token_id>(gen() % 4);  // few symbols: long repeats
        std::vector<token_id> ctx(n);
        for (auto& t : ctx) t = static_cast<token_id>(gen() % static_cast<unsigned>(alphabet));
        dry_params p;
        p.allowed = 1 + static_cast<std::int32_t>(gen() % 3);
        if (round % 3 == 0) p.breakers = {{alphabet}};   // a breaker that never occurs
        if (round % 3 == 1) p.breakers = {{0}, {1, 0}};  // single and two-token breakers
        expect_same(dry_penalties(ctx, p, 8), oracle_penalties(ctx, p), "round " + std::to_string(round));
    }
}

TEST(sampling_dry, a_sequence_breaker_caps_the_repetition_and_is_never_penalized) {
    const token_id a = 1, b = 2, c = 3, nl = 7;
    // "a b c nl a b c": the token after the first "a b c" is nl, extending a repeat of 3; nl is a
    // breaker by itself, so it is never penalized.
    dry_params p;
    p.breakers = {{nl}};
    EXPECT_TRUE(dry_penalties({a, b, c, nl, a, b, c}, p, 8).empty());
    // A breaker inside the repeated text caps the length: "nl b c 5 nl b c" repeats "nl b c" (3), but
    // the newest breaker leaves only "b c" after it, so the repeat that 5 would extend counts 2.
    const std::vector<token_id> ctx{nl, b, c, 5, nl, b, c};
    const auto got = dry_penalties(ctx, p, 8);
    expect_same(got, oracle_penalties(ctx, p), "capped");
    ASSERT_EQ(got.size(), 1u);
    EXPECT_FLOAT_EQ(got.at(5), 0.8f);  // len 2, where 3 would give 0.8 * 1.75
    dry_params no_breaker;
    EXPECT_FLOAT_EQ(dry_penalties(ctx, no_breaker, 8).at(5), 0.8f * 1.75f);
}

TEST(sampling_dry, a_multi_token_breaker_needs_its_whole_tail) {
    const token_id b = 2, c = 3, h = 5, t = 6;
    dry_params p;
    p.breakers = {{h, t}};
    // "h t b c 4 h t b c": the newest "h t" leaves "b c" after it: the repeat of 4 tokens is capped at 2.
    const std::vector<token_id> with_tail{h, t, b, c, 4, h, t, b, c};
    const auto capped = dry_penalties(with_tail, p, 8);
    expect_same(capped, oracle_penalties(with_tail, p), "with tail");
    EXPECT_FLOAT_EQ(capped.at(4), 0.8f);
    // The head without its tail is no breaker: "h b c" repeats in full (3).
    const std::vector<token_id> head_only{h, b, c, 4, h, b, c};
    const auto full = dry_penalties(head_only, p, 8);
    expect_same(full, oracle_penalties(head_only, p), "head only");
    EXPECT_FLOAT_EQ(full.at(4), 0.8f * 1.75f);
}

TEST(sampling_dry, the_window_limits_how_far_back_repeats_are_found) {
    const std::vector<token_id> ctx{1, 2, 3, 4, 0, 0, 0, 0, 1, 2, 3};
    const dry_params p;
    EXPECT_FLOAT_EQ(dry_penalties(ctx, p, 8).at(4), 0.8f * 1.75f);
    EXPECT_TRUE(dry_penalties(ctx, p, 8, 6).empty());  // the window 0 0 0 1 2 3 holds no earlier "1 2 3"
    const std::vector<token_id> last6(ctx.end() - 6, ctx.end());
    expect_same(dry_penalties(ctx, p, 8, 6), oracle_penalties(last6, p), "window");
}

TEST(sampling_dry, the_exponent_is_capped_so_the_penalty_stays_finite) {
    std::vector<token_id> ctx;
    for (int i = 0; i < 400; ++i) ctx.push_back(i % 2);  // 0 1 0 1 ...: a repeat of ~400 tokens
    dry_params p;
    p.base = 3.0f;
    const auto got = dry_penalties(ctx, p, 4);
    ASSERT_EQ(got.size(), 1u);
    const float cap = 0.8f * std::pow(3.0f, static_cast<float>(static_cast<int>(88.7228391f / std::log(3.0f))));
    EXPECT_TRUE(std::isfinite(got.begin()->second));
    EXPECT_FLOAT_EQ(got.begin()->second, cap);
}

TEST(sampling_dry, disabled_settings_and_short_contexts_are_no_ops) {
    const std::vector<token_id> ctx{1, 2, 1, 2, 1, 2};
    dry_params off;
    off.multiplier = 0.0f;
    EXPECT_TRUE(dry_penalties(ctx, off, 4).empty());
    dry_params low;
    low.base = 0.9f;
    EXPECT_TRUE(dry_penalties(ctx, low, 4).empty());
    EXPECT_TRUE(dry_penalties({1, 2}, dry_params{}, 4).empty());  // n <= allowed_length
    EXPECT_THROW(dry(0.8f, 1.75f, 0, -1), invalid_argument_error);
    EXPECT_THROW(dry(0.8f, 1.75f, 2, -2), invalid_argument_error);
    EXPECT_THROW(dry(NAN, 1.75f, 2, -1), invalid_argument_error);
}

TEST(sampling_dry, prompt_tokens_are_skipped_when_excluded) {
    dry d(0.8f, 1.75f, 2, -1, {}, /*include_prompt=*/false);
    for (token_id t : {1, 2, 3, 4, 1, 2, 3}) d.accept(t);  // all prompt
    candidates c;
    c.assign(std::vector<float>(8, 0.0f));
    d.apply(c);
    for (float l : c.logits) EXPECT_EQ(l, 0.0f);
}

// A hand-made vocabulary: bytes would not matter here; pieces with and without the breaker text.
tokenizer breaker_vocab() {
    std::vector<token_data> t{
        {"<unk>", 0.0f, token_type::unknown}, {"<s>", 0.0f, token_type::control}, {"</s>", 0.0f, token_type::control}};
    for (const char* p : {"a", ":", "b:", "ab",
                          "\xE2\x96\x81"
                          "x",
                          "x:y", "xy"})
        t.push_back({p, -1.0f, token_type::normal});
    return tokenizer(
        spm_tokenizer(vocabulary(std::move(t), {.bos = 1, .eos = 2, .unk = 0}), {.add_space_prefix = false}));
}

TEST(sampling_dry, string_breakers_become_token_sequences_as_in_llama_cpp) {
    const tokenizer tok = breaker_vocab();
    const token_id colon = tok.vocab().find(":"), b_colon = tok.vocab().find("b:"), x_colon_y = tok.vocab().find("x:y");
    const std::vector<std::string> one{":"};
    auto got = dry_sequence_breakers(tok, one);
    std::sort(got.begin(), got.end());
    // Every token containing ":" is a single-token breaker; nothing else is.
    EXPECT_EQ(got, (std::vector<std::vector<token_id>>{{colon}, {b_colon}, {x_colon_y}}));
    // "b:c": "ab" ends with "b", a proper prefix: head "ab", tail = tokens of ":c" (":" then "c" is
    // unknown: <unk>); "b:" does not contain "b:c" and does not end with a proper prefix of it... it ends
    // with "b:", which is one: tail = tokens of "c".
    const std::vector<std::string> two{"b:c"};
    auto seqs = dry_sequence_breakers(tok, two);
    const token_id ab = tok.vocab().find("ab");
    bool found_ab = false, found_b_colon = false;
    for (const auto& s : seqs) {
        found_ab = found_ab || (s[0] == ab && s.size() > 1 && s[1] == colon);
        found_b_colon = found_b_colon || (s[0] == b_colon && s.size() > 1);
    }
    EXPECT_TRUE(found_ab);
    EXPECT_TRUE(found_b_colon);
}

}  // namespace
}  // namespace nexttok

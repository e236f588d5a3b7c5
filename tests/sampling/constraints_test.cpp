// The hard constraints: logit bias, banned sequences, no-repeat-n-gram, min-new-tokens. Expected
// survivors are written out by hand (or by a brute-force n-gram scan); a set emptied by them makes the
// chains throw sampling_error instead of drawing from nothing.
#include <nexttok/sampling/banned_sequences.hpp>
#include <nexttok/sampling/categorical.hpp>
#include <nexttok/sampling/dynamic_chain.hpp>
#include <nexttok/sampling/greedy.hpp>
#include <nexttok/sampling/logit_bias.hpp>
#include <nexttok/sampling/min_new_tokens.hpp>
#include <nexttok/sampling/no_repeat_ngram.hpp>
#include <nexttok/sampling/sampler_chain.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace nexttok {
namespace {

const std::vector<float> six{0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f};

template <class Stage>
candidates applied(Stage& s, const std::vector<float>& logits = six) {
    candidates c;
    c.assign(logits);
    s.apply(c);
    return c;
}

TEST(sampling_logit_bias, adds_biases_and_removes_minus_infinity) {
    const logit_bias b({{1, 2.5f}, {3, -INFINITY}, {1, 0.5f}, {9, 1.0f}});  // id 9: not in the set, ignored
    candidates c;
    c.assign(six);
    b.apply(c);
    EXPECT_EQ(c.ids, (std::vector<token_id>{0, 1, 2, 4, 5}));
    EXPECT_EQ(c.logits, (std::vector<float>{0.0f, 4.0f, 2.0f, 4.0f, 5.0f}));  // 1 + 2.5 + 0.5: biases add up
    EXPECT_THROW(logit_bias({{-1, 1.0f}}), invalid_argument_error);
    EXPECT_THROW(logit_bias({{1, NAN}}), invalid_argument_error);
    EXPECT_THROW(logit_bias({{1, INFINITY}}), invalid_argument_error);
}

TEST(sampling_logit_bias, banning_every_token_makes_the_chain_throw) {
    std::vector<token_bias> all;
    for (token_id t = 0; t < 6; ++t) all.push_back({t, -INFINITY});
    auto chain = make_sampler_chain(logit_bias(all), categorical(1));
    EXPECT_THROW(chain.sample(six), sampling_error);
    dynamic_chain dyn({logit_bias(all)}, greedy{});
    EXPECT_THROW(dyn.sample(six), sampling_error);
}

TEST(sampling_banned_sequences, one_token_always_longer_only_to_complete) {
    banned_sequences b({{4}, {1, 2, 5}, {3, 5}});
    EXPECT_EQ(test::id_set(applied(b)), (std::vector<token_id>{0, 1, 2, 3, 5}));  // 4 always banned
    b.accept(1);
    b.accept(2);  // context ends "1 2": 5 would complete {1, 2, 5}
    EXPECT_EQ(test::id_set(applied(b)), (std::vector<token_id>{0, 1, 2, 3}));
    b.accept(0);  // "1 2 0": nothing to complete
    EXPECT_EQ(test::id_set(applied(b)), (std::vector<token_id>{0, 1, 2, 3, 5}));
    b.accept(3);  // "... 3": {3, 5}
    EXPECT_EQ(test::id_set(applied(b)), (std::vector<token_id>{0, 1, 2, 3}));
    b.reset();
    EXPECT_EQ(test::id_set(applied(b)), (std::vector<token_id>{0, 1, 2, 3, 5}));
    EXPECT_THROW(banned_sequences(std::vector<std::vector<token_id>>{{}}), invalid_argument_error);
}

// Brute force: every n-gram of ctx; ban t when (last n-1 tokens, t) is one of them.
std::set<token_id> oracle_ngram_bans(const std::vector<token_id>& ctx, std::size_t n) {
    std::set<token_id> out;
    if (ctx.size() < n) return out;
    const std::vector<token_id> prefix(ctx.end() - static_cast<long>(n - 1), ctx.end());
    for (std::size_t j = 0; j + n <= ctx.size(); ++j)
        if (std::equal(prefix.begin(), prefix.end(), ctx.begin() + static_cast<long>(j))) out.insert(ctx[j + n - 1]);
    return out;
}

TEST(sampling_no_repeat_ngram, bans_exactly_the_tokens_that_would_repeat_an_ngram) {
    test::logit_source src(801);
    for (int round = 0; round < 200; ++round) {
        const std::size_t n = 1 + round % 4;
        std::vector<token_id> ctx(round % 30);
        for (auto& t : ctx) t = static_cast<token_id>(src.uniform(0.0f, 6.0f));
        no_repeat_ngram ng(static_cast<std::int32_t>(n));
        for (token_id t : ctx) ng.accept(t);
        const auto bans = oracle_ngram_bans(ctx, n);
        std::vector<token_id> want;
        for (token_id t = 0; t < 6; ++t)
            if (!bans.count(t)) want.push_back(t);
        if (want.empty()) continue;  // all banned: covered below
        EXPECT_EQ(test::id_set(applied(ng)), want) << "round " << round << " n " << n;
    }
}

TEST(sampling_no_repeat_ngram, hand_built_cases) {
    no_repeat_ngram bigram(2);
    for (token_id t : {1, 2, 3, 1}) bigram.accept(t);  // "1 2" seen: after "1", 2 is banned
    EXPECT_EQ(test::id_set(applied(bigram)), (std::vector<token_id>{0, 1, 3, 4, 5}));
    no_repeat_ngram unigram(1);
    for (token_id t : {0, 5}) unigram.accept(t);
    EXPECT_EQ(test::id_set(applied(unigram)), (std::vector<token_id>{1, 2, 3, 4}));
    no_repeat_ngram off(0);
    off.accept(1);
    EXPECT_EQ(applied(off).size(), 6u);
    // The prompt: excluded, "1 2" of the prompt does not ban 2 after a generated 1.
    no_repeat_ngram generated_only(2, /*include_prompt=*/false);
    generated_only.accept(1);
    generated_only.accept(2);
    applied(generated_only);  // the prompt ends
    generated_only.accept(1);
    EXPECT_EQ(applied(generated_only).size(), 6u);
}

TEST(sampling_no_repeat_ngram, banning_the_whole_vocabulary_makes_the_chain_throw) {
    auto chain = make_sampler_chain(no_repeat_ngram(1), greedy{});
    const std::vector<float> two{0.0f, 1.0f};
    EXPECT_EQ(chain.sample(two), 1);
    EXPECT_EQ(chain.sample(two), 0);
    EXPECT_THROW(chain.sample(two), sampling_error);
}

TEST(sampling_min_new_tokens, masks_eos_until_enough_tokens_were_generated) {
    min_new_tokens m(2, {5, 4, no_token});
    m.accept(5);  // prompt tokens do not count, even EOS
    m.accept(1);
    EXPECT_EQ(test::id_set(applied(m)), (std::vector<token_id>{0, 1, 2, 3}));  // draw of token 0
    m.accept(3);
    EXPECT_EQ(test::id_set(applied(m)), (std::vector<token_id>{0, 1, 2, 3}));  // draw of token 1
    m.accept(2);
    EXPECT_EQ(applied(m).size(), 6u);  // draw of token 2: allowed
    m.reset();
    EXPECT_EQ(applied(m).size(), 4u);
    EXPECT_THROW(min_new_tokens(-1, {2}), invalid_argument_error);
    // A greedy chain that would pick EOS (id 5, the maximum) picks the runner-up instead, twice.
    auto chain = make_sampler_chain(min_new_tokens(2, {5}), greedy{});
    EXPECT_EQ(chain.sample(six), 4);
    EXPECT_EQ(chain.sample(six), 4);
    EXPECT_EQ(chain.sample(six), 5);
    // Only EOS in the set: nothing to draw.
    auto only_eos = make_sampler_chain(min_new_tokens(1, {0}), greedy{});
    EXPECT_THROW(only_eos.sample(std::vector<float>{1.0f}), sampling_error);
}

}  // namespace
}  // namespace nexttok

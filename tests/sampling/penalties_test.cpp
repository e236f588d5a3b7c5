// Repetition / frequency / presence penalties against an oracle written here from the definitions
// (CTRL's rule with the sign fix, OpenAI's subtraction), on hand-built logits: the window, the prompt
// rule, reset, and the chain (a penalty changes the greedy choice).
#include <nexttok/sampling/greedy.hpp>
#include <nexttok/sampling/penalties.hpp>
#include <nexttok/sampling/sampler_chain.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace nexttok {
namespace {

// The oracle: counts over `window` (the tokens that count), then per id: repeat rule, subtraction.
std::vector<float> oracle(const std::vector<float>& logits, const std::vector<token_id>& window, float repeat,
                          float freq, float presence) {
    std::map<token_id, int> count;
    for (token_id t : window) ++count[t];
    std::vector<float> out = logits;
    for (auto [id, n] : count) {
        float& l = out[static_cast<std::size_t>(id)];
        l = l > 0.0f ? l / repeat : l * repeat;
        l -= static_cast<float>(n) * freq + presence;
    }
    return out;
}

// Applies p to `logits` and returns the logits by id (the set keeps every id: penalties never remove).
std::vector<float> applied(penalties& p, const std::vector<float>& logits) {
    candidates c;
    c.assign(logits);
    p.apply(c);
    EXPECT_EQ(c.size(), logits.size());
    std::vector<float> by_id(logits.size());
    for (std::size_t i = 0; i < c.size(); ++i) by_id[static_cast<std::size_t>(c.ids[i])] = c.logits[i];
    return by_id;
}

const std::vector<float> logits6{2.0f, -1.5f, 0.0f, 3.0f, -0.25f, 1.0f};

TEST(sampling_penalties, repetition_divides_positive_and_multiplies_non_positive_logits_once) {
    penalties p(64, 1.5f, 0.0f, 0.0f);
    for (token_id t : {0, 1, 2, 0, 0}) p.accept(t);  // id 0 three times: penalized once all the same
    const auto got = applied(p, logits6);
    EXPECT_FLOAT_EQ(got[0], 2.0f / 1.5f);
    EXPECT_FLOAT_EQ(got[1], -1.5f * 1.5f);
    EXPECT_EQ(got[2], 0.0f);  // 0 stays 0 under both rules
    EXPECT_EQ(got[3], 3.0f);  // unseen: untouched
    EXPECT_EQ(got, oracle(logits6, {0, 1, 2, 0, 0}, 1.5f, 0.0f, 0.0f));
}

TEST(sampling_penalties, frequency_scales_with_the_count_presence_does_not) {
    penalties p(-1, 1.0f, 0.5f, 0.25f);
    for (token_id t : {3, 3, 3, 5}) p.accept(t);
    const auto got = applied(p, logits6);
    EXPECT_FLOAT_EQ(got[3], 3.0f - 3 * 0.5f - 0.25f);
    EXPECT_FLOAT_EQ(got[5], 1.0f - 1 * 0.5f - 0.25f);
    EXPECT_EQ(got[0], 2.0f);
    EXPECT_EQ(got, oracle(logits6, {3, 3, 3, 5}, 1.0f, 0.5f, 0.25f));
}

TEST(sampling_penalties, all_three_together_match_the_oracle) {
    penalties p(-1, 1.3f, 0.2f, -0.4f);  // a negative presence penalty encourages repetition
    const std::vector<token_id> seen{4, 1, 4, 0, 2, 4};
    for (token_id t : seen) p.accept(t);
    EXPECT_EQ(applied(p, logits6), oracle(logits6, seen, 1.3f, 0.2f, -0.4f));
}

TEST(sampling_penalties, only_the_last_n_tokens_count) {
    penalties p(3, 2.0f, 1.0f, 0.0f);
    const std::vector<token_id> seen{0, 0, 3, 5, 3};  // window: 3 5 3 (both 0s fell out)
    for (token_id t : seen) p.accept(t);
    EXPECT_EQ(p.count(0), 0);
    EXPECT_EQ(p.count(3), 2);
    EXPECT_EQ(applied(p, logits6), oracle(logits6, {3, 5, 3}, 2.0f, 1.0f, 0.0f));
}

TEST(sampling_penalties, last_n_zero_and_neutral_values_are_no_ops) {
    for (penalties p : {penalties(0, 1.5f, 1.0f, 1.0f), penalties(64, 1.0f, 0.0f, 0.0f)}) {
        p.accept(0);
        p.accept(3);
        EXPECT_FALSE(p.enabled());
        EXPECT_EQ(applied(p, logits6), logits6);
    }
}

TEST(sampling_penalties, prompt_tokens_count_only_when_included) {
    // The prompt is what is accepted before the first apply(); generated tokens come after.
    for (bool include : {true, false}) {
        penalties p(64, 2.0f, 0.0f, 0.0f, include);
        p.accept(0);  // prompt
        p.accept(3);  // prompt
        candidates c;
        c.assign(logits6);
        p.apply(c);   // first draw: the prompt has ended
        p.accept(5);  // generated
        const auto got = applied(p, logits6);
        const std::vector<token_id> counted = include ? std::vector<token_id>{0, 3, 5} : std::vector<token_id>{5};
        EXPECT_EQ(got, oracle(logits6, counted, 2.0f, 0.0f, 0.0f)) << "include_prompt " << include;
    }
}

TEST(sampling_penalties, reset_forgets_the_history_and_the_prompt_boundary) {
    penalties p(64, 2.0f, 0.0f, 0.0f, false);
    p.accept(0);
    candidates c;
    c.assign(logits6);
    p.apply(c);
    p.accept(3);
    p.reset();
    EXPECT_EQ(p.count(3), 0);
    p.accept(5);  // a prompt token again: not counted
    EXPECT_EQ(applied(p, logits6), logits6);
}

TEST(sampling_penalties, invalid_parameters_throw) {
    EXPECT_THROW(penalties(-2, 1.1f, 0.0f, 0.0f), invalid_argument_error);
    EXPECT_THROW(penalties(64, 0.0f, 0.0f, 0.0f), invalid_argument_error);
    EXPECT_THROW(penalties(64, -1.0f, 0.0f, 0.0f), invalid_argument_error);
    EXPECT_THROW(penalties(64, 1.1f, NAN, 0.0f), invalid_argument_error);
    EXPECT_THROW(penalties(64, 1.1f, 0.0f, INFINITY), invalid_argument_error);
}

TEST(sampling_penalties, in_a_chain_a_repeated_maximum_loses_to_the_runner_up) {
    // Greedy picks id 3 (logit 3); once it has been seen, 3 / 1.6 = 1.875 < 2 and id 0 wins.
    auto chain = make_sampler_chain(penalties(64, 1.6f, 0.0f, 0.0f), greedy{});
    EXPECT_EQ(chain.sample(logits6), 3);
    EXPECT_EQ(chain.sample(logits6), 0);  // sample() accepted 3
    EXPECT_EQ(chain.sample(logits6), 3);  // 3: 1.875 vs 0: 2 / 1.6 = 1.25
}

}  // namespace
}  // namespace nexttok

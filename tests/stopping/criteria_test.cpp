// The token criteria on hand-built sequences: prompt + generated, newest last.
#include <nexttok/stopping/concepts.hpp>
#include <nexttok/stopping/eos_criterion.hpp>
#include <nexttok/stopping/max_new_tokens.hpp>
#include <nexttok/stopping/stop_tokens.hpp>

#include "stopping_test_util.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace nexttok {
namespace {

static_assert(stopping_criterion<eos_criterion>);
static_assert(stopping_criterion<max_new_tokens>);
static_assert(stopping_criterion<stop_tokens>);

using test::state_of;

TEST(stopping_generation_state, counts_generated_tokens) {
    const std::vector<token_id> tokens{1, 15, 27, 99, 4};
    const auto s = state_of(tokens, 3);
    EXPECT_EQ(s.n_generated(), 2u);
    EXPECT_EQ(std::vector<token_id>(s.generated().begin(), s.generated().end()), (std::vector<token_id>{99, 4}));
    EXPECT_EQ(s.last_generated(), 4);
    EXPECT_EQ(state_of(tokens, 5).n_generated(), 0u);
    EXPECT_EQ(state_of(tokens, 5).last_generated(), no_token);
}

TEST(stopping_eos_criterion, stops_when_the_newest_generated_token_is_eos) {
    const eos_criterion eos{2};
    EXPECT_EQ(eos.check(state_of({1, 10, 11, 2}, 2)), finish_reason::eos);
    EXPECT_EQ(eos.check(state_of({1, 10, 11, 12}, 2)), finish_reason::none);
    // An EOS earlier in the generated text does not count: only the newest token is looked at.
    EXPECT_EQ(eos.check(state_of({1, 10, 2, 12}, 2)), finish_reason::none);
}

TEST(stopping_eos_criterion, prompt_tokens_never_trigger) {
    const eos_criterion eos{2};
    EXPECT_EQ(eos.check(state_of({1, 10, 2}, 3)), finish_reason::none);  // prompt ends with EOS
    EXPECT_EQ(eos.check(state_of({}, 0)), finish_reason::none);
}

TEST(stopping_eos_criterion, several_ids_and_no_token_ignored) {
    const std::vector<token_id> ids{128009, no_token, 128001, 128009};
    const eos_criterion eos(ids);
    EXPECT_EQ(std::vector<token_id>(eos.ids().begin(), eos.ids().end()), (std::vector<token_id>{128001, 128009}));
    EXPECT_EQ(eos.check(state_of({5, 128001}, 1)), finish_reason::eos);
    EXPECT_EQ(eos.check(state_of({5, 128009}, 1)), finish_reason::eos);
    EXPECT_EQ(eos.check(state_of({5, 128000}, 1)), finish_reason::none);
    const eos_criterion none_at_all{no_token};
    EXPECT_EQ(none_at_all.check(state_of({5, 0}, 1)), finish_reason::none);
}

TEST(stopping_max_new_tokens, stops_when_the_budget_is_spent_prompt_not_counted) {
    const max_new_tokens limit(3);
    const std::vector<token_id> seq{7, 7, 7, 7, 1, 2, 3, 4};  // prompt of 4
    EXPECT_EQ(limit.check(state_of({seq.begin(), seq.begin() + 4}, 4)), finish_reason::none);
    EXPECT_EQ(limit.check(state_of({seq.begin(), seq.begin() + 6}, 4)), finish_reason::none);
    EXPECT_EQ(limit.check(state_of({seq.begin(), seq.begin() + 7}, 4)), finish_reason::max_new_tokens);
    EXPECT_EQ(limit.check(state_of(seq, 4)), finish_reason::max_new_tokens);
}

TEST(stopping_max_new_tokens, zero_stops_before_the_first_token) {
    const max_new_tokens nothing(0);
    EXPECT_EQ(nothing.check(state_of({1, 2, 3}, 3)), finish_reason::max_new_tokens);
    EXPECT_EQ(nothing.n(), 0u);
}

TEST(stopping_max_new_tokens, negative_is_rejected) { EXPECT_THROW(max_new_tokens(-1), invalid_argument_error); }

TEST(stop_tokens, stops_with_stop_token_reason) {
    const stop_tokens stops{32007, 13};
    EXPECT_EQ(stops.check(state_of({1, 50, 13}, 1)), finish_reason::stop_token);
    EXPECT_EQ(stops.check(state_of({1, 50, 32007}, 1)), finish_reason::stop_token);
    EXPECT_EQ(stops.check(state_of({1, 50, 14}, 1)), finish_reason::none);
    EXPECT_EQ(stops.check(state_of({1, 13}, 2)), finish_reason::none);  // in the prompt
    const stop_tokens empty{};
    EXPECT_EQ(empty.check(state_of({1, 13}, 1)), finish_reason::none);
}

}  // namespace
}  // namespace nexttok

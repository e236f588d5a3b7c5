// any_of (static) and any_criterion / any_of_criteria (runtime): first non-none reason in order.
#include <nexttok/stopping/any_criterion.hpp>
#include <nexttok/stopping/any_of.hpp>
#include <nexttok/stopping/any_of_criteria.hpp>
#include <nexttok/stopping/eos_criterion.hpp>
#include <nexttok/stopping/max_new_tokens.hpp>
#include <nexttok/stopping/stop_tokens.hpp>

#include "stopping_test_util.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace nexttok {
namespace {

// A criterion with state: counts its checks (shared counter, so copies report here), fires a given
// reason from the n-th check on, and has a reset().
struct counting_criterion {
    finish_reason reason;
    int fire_at;
    std::shared_ptr<int> n_checks = std::make_shared<int>(0);
    std::shared_ptr<int> n_resets = std::make_shared<int>(0);
    finish_reason check(const generation_state&) { return ++*n_checks >= fire_at ? reason : finish_reason::none; }
    void reset() {
        *n_checks = 0;
        ++*n_resets;
    }
};

static_assert(stopping_criterion<any_of<eos_criterion, max_new_tokens>>);
static_assert(stopping_criterion<any_criterion>);
static_assert(stopping_criterion<any_of_criteria>);

using test::state_of;

TEST(stopping_any_of, returns_the_first_non_none_reason_in_order) {
    any_of stop(eos_criterion{2}, max_new_tokens(2), stop_tokens{9});
    const std::vector<token_id> p{1, 1};
    EXPECT_EQ(stop.check(state_of({1, 1}, 2)), finish_reason::none);
    EXPECT_EQ(stop.check(state_of({1, 1, 5}, 2)), finish_reason::none);
    EXPECT_EQ(stop.check(state_of({1, 1, 9}, 2)), finish_reason::stop_token);
    EXPECT_EQ(stop.check(state_of({1, 1, 5, 6}, 2)), finish_reason::max_new_tokens);
    // EOS at the budget: both fire, the first listed wins.
    EXPECT_EQ(stop.check(state_of({1, 1, 5, 2}, 2)), finish_reason::eos);
    any_of budget_first(max_new_tokens(2), eos_criterion{2});
    EXPECT_EQ(budget_first.check(state_of({1, 1, 5, 2}, 2)), finish_reason::max_new_tokens);
}

TEST(stopping_any_of, short_circuits_and_resets_every_resettable_criterion) {
    counting_criterion first{finish_reason::cancelled, 2};
    counting_criterion second{finish_reason::deadline, 1};
    any_of stop(first, eos_criterion{2}, second);
    const std::vector<token_id> tokens{1, 5};
    EXPECT_EQ(stop.check(state_of(tokens, 1)), finish_reason::deadline);
    EXPECT_EQ(stop.check(state_of(tokens, 1)), finish_reason::cancelled);
    EXPECT_EQ(*first.n_checks, 2);
    EXPECT_EQ(*second.n_checks, 1);  // not evaluated once `first` fired
    stop.reset();
    EXPECT_EQ(*first.n_resets, 1);
    EXPECT_EQ(*second.n_resets, 1);
    EXPECT_EQ(*first.n_checks, 0);
}

TEST(stopping_any_of_criteria, returns_the_first_non_none_reason_in_insertion_order) {
    any_of_criteria stop{eos_criterion{2}, max_new_tokens(3)};
    stop.add(stop_tokens{9});
    EXPECT_EQ(stop.size(), 3u);
    EXPECT_EQ(stop.check(state_of({4, 5}, 1)), finish_reason::none);
    EXPECT_EQ(stop.check(state_of({4, 9}, 1)), finish_reason::stop_token);
    EXPECT_EQ(stop.check(state_of({4, 2}, 1)), finish_reason::eos);
    EXPECT_EQ(stop.check(state_of({4, 5, 6, 7}, 1)), finish_reason::max_new_tokens);
    EXPECT_EQ(stop.check(state_of({4, 5, 6, 2}, 1)), finish_reason::eos);  // eos listed first
}

TEST(stopping_any_of_criteria, empty_never_stops) {
    any_of_criteria stop;
    EXPECT_TRUE(stop.empty());
    EXPECT_EQ(stop.check(state_of({1, 2, 3}, 1)), finish_reason::none);
}

TEST(stopping_any_of_criteria, short_circuits_and_forwards_reset) {
    counting_criterion counted{finish_reason::callback, 100};
    any_of_criteria stop{max_new_tokens(1), counted};
    EXPECT_EQ(stop.check(state_of({1, 2}, 1)), finish_reason::max_new_tokens);
    EXPECT_EQ(*counted.n_checks, 0);
    EXPECT_EQ(stop.check(state_of({1}, 1)), finish_reason::none);
    EXPECT_EQ(*counted.n_checks, 1);
    stop.reset();  // max_new_tokens has no reset(): skipped; counted is reset
    EXPECT_EQ(*counted.n_resets, 1);
}

TEST(stopping_any_criterion, wraps_and_copies) {
    any_criterion c = stop_tokens{3};
    any_criterion copy = c;
    EXPECT_EQ(copy.check(state_of({0, 3}, 1)), finish_reason::stop_token);
    EXPECT_EQ(c.check(state_of({0, 4}, 1)), finish_reason::none);
    // A static any_of inside a runtime holder.
    any_of_criteria nested{any_of(eos_criterion{2}, max_new_tokens(10))};
    EXPECT_EQ(nested.check(state_of({0, 2}, 1)), finish_reason::eos);
}

}  // namespace
}  // namespace nexttok

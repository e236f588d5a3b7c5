// max_length, stop_token_sequences, deadline (with a test clock), cancellation from another thread,
// stop_when, all_of / all_of_criteria, and the forwarding of the text interface through composites.
#include <nexttok/stopping.hpp>

#include "stopping_test_util.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stop_token>
#include <thread>
#include <vector>

namespace nexttok {
namespace {

using test::state_of;

static_assert(stopping_criterion<max_length> && stopping_criterion<stop_token_sequences> &&
              stopping_criterion<deadline> && stopping_criterion<cancellation> && stopping_criterion<stop_when> &&
              stopping_criterion<stop_strings> && stopping_criterion<all_of<max_length, stop_strings>> &&
              stopping_criterion<all_of_criteria>);
static_assert(holds_back_text<stop_strings> && cuts_text<stop_strings> && !holds_back_text<max_length>);
static_assert(holds_back_text<any_of<eos_criterion, stop_strings>> && holds_back_text<any_criterion>);

TEST(stopping_max_length, counts_the_prompt_too) {
    const max_length limit(5);
    EXPECT_EQ(limit.check(state_of({1, 2, 3}, 3)), finish_reason::none);
    EXPECT_EQ(limit.check(state_of({1, 2, 3, 4}, 3)), finish_reason::none);
    EXPECT_EQ(limit.check(state_of({1, 2, 3, 4, 5}, 3)), finish_reason::max_length);
    EXPECT_EQ(limit.check(state_of({1, 2, 3, 4, 5, 6}, 6)), finish_reason::max_length);  // a prompt that long: at once
    EXPECT_THROW(max_length(0), invalid_argument_error);
}

TEST(stopping_stop_token_sequences, matches_the_end_of_the_generated_tokens_only) {
    const stop_token_sequences s({{7, 8, 9}, {4}});
    EXPECT_EQ(s.check(state_of({1, 7, 8, 9}, 1)), finish_reason::stop_token);
    EXPECT_EQ(s.check(state_of({1, 7, 8, 9, 5}, 1)), finish_reason::none);
    EXPECT_EQ(s.check(state_of({1, 7, 8, 4}, 1)), finish_reason::stop_token);
    // Straddling the prompt: 7 8 are prompt tokens, so 9 alone does not complete the sequence.
    EXPECT_EQ(s.check(state_of({7, 8, 9}, 2)), finish_reason::none);
    EXPECT_THROW(stop_token_sequences(std::vector<std::vector<token_id>>{{}}), invalid_argument_error);
}

struct test_clock {
    using rep = std::int64_t;
    using period = std::milli;
    using duration = std::chrono::duration<rep, period>;
    using time_point = std::chrono::time_point<test_clock>;
    static constexpr bool is_steady = true;
    static inline time_point current{};
    static time_point now() noexcept { return current; }
};

TEST(stopping_deadline, fires_when_the_clock_passes_it_and_restarts_on_reset) {
    test_clock::current = test_clock::time_point(test_clock::duration(1000));
    auto d = basic_deadline<test_clock>::after(std::chrono::milliseconds(50));
    const auto st = state_of({1}, 1);
    EXPECT_EQ(d.check(st), finish_reason::none);
    test_clock::current += test_clock::duration(49);
    EXPECT_EQ(d.check(st), finish_reason::none);
    test_clock::current += test_clock::duration(1);
    EXPECT_EQ(d.check(st), finish_reason::deadline);
    d.reset();  // a new generation: 50 ms from now
    EXPECT_EQ(d.check(st), finish_reason::none);
    auto fixed = basic_deadline<test_clock>::at(test_clock::current + test_clock::duration(10));
    test_clock::current += test_clock::duration(20);
    fixed.reset();  // an absolute deadline does not move
    EXPECT_EQ(fixed.check(st), finish_reason::deadline);
    // The real clock: a deadline in the past fires.
    EXPECT_EQ(deadline::at(std::chrono::steady_clock::now() - std::chrono::seconds(1)).check(st),
              finish_reason::deadline);
}

TEST(stopping_cancellation, another_thread_cancels_through_a_stop_token_or_a_flag) {
    const auto st = state_of({1}, 1);
    std::stop_source source;
    const cancellation by_token(source.get_token());
    const cancellation copy = by_token;
    EXPECT_EQ(by_token.check(st), finish_reason::none);
    std::thread([&] { source.request_stop(); }).join();
    EXPECT_EQ(by_token.check(st), finish_reason::cancelled);
    EXPECT_EQ(copy.check(st), finish_reason::cancelled);

    // A loop that polls while another thread sets the flag: it must end, with "cancelled".
    std::atomic<bool> flag{false};
    const cancellation by_flag(flag);
    std::thread setter([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        flag.store(true, std::memory_order_release);
    });
    finish_reason r = finish_reason::none;
    const auto start = std::chrono::steady_clock::now();
    while ((r = by_flag.check(st)) == finish_reason::none &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(10))
        std::this_thread::yield();
    setter.join();
    EXPECT_EQ(r, finish_reason::cancelled);
    EXPECT_EQ(cancellation(std::stop_token{}).check(st), finish_reason::none);
}

TEST(stopping_stop_when, calls_the_predicate_with_the_state) {
    stop_when long_text([](const generation_state& s) { return s.text.size() >= 5; });
    EXPECT_EQ(long_text.check(state_of({1}, 1, "abcd")), finish_reason::none);
    EXPECT_EQ(long_text.check(state_of({1}, 1, "abcde")), finish_reason::predicate);
    stop_when custom([](const generation_state& s) { return s.n_generated() == 2; }, finish_reason::cancelled);
    EXPECT_EQ(custom.check(state_of({1, 2, 3}, 1)), finish_reason::cancelled);
    EXPECT_THROW(stop_when(nullptr), invalid_argument_error);
    EXPECT_THROW(stop_when([](const generation_state&) { return true; }, finish_reason::none), invalid_argument_error);
}

TEST(stopping_all_of, stops_only_when_every_criterion_fires) {
    // "End at the first full stop after 3 tokens".
    all_of stop(max_new_tokens(3), stop_strings({"."}));
    EXPECT_EQ(stop.check(state_of({0, 1}, 1, "a.")), finish_reason::none);  // "." too early
    EXPECT_EQ(stop.check(state_of({0, 1, 2, 3}, 1, "a. b c")), finish_reason::none);
    EXPECT_EQ(stop.check(state_of({0, 1, 2, 3, 4}, 1, "a. b c.")),
              finish_reason::max_new_tokens);  // the first's reason
    EXPECT_EQ(*stop.text_cut(), 6u);
    all_of_criteria dyn{max_new_tokens(3), stop_strings({"."})};
    EXPECT_EQ(dyn.check(state_of({0, 1}, 1, "a.")), finish_reason::none);
    EXPECT_EQ(dyn.check(state_of({0, 1, 2, 3, 4}, 1, "a. b c.")), finish_reason::max_new_tokens);
    EXPECT_EQ(all_of_criteria{}.check(state_of({0, 1}, 1)), finish_reason::none);
}

TEST(stopping_composites, forward_hold_back_and_the_cut_of_the_criterion_that_fired) {
    any_of stat(eos_criterion{2}, stop_strings({"abc"}), stop_strings({"xy"}, true));
    EXPECT_EQ(stat.hold_back("zab"), 2u);
    EXPECT_EQ(stat.hold_back("zx"), 1u);
    EXPECT_EQ(stat.check(state_of({0, 5}, 1, "12xy")), finish_reason::stop_string);
    EXPECT_EQ(*stat.text_cut(), 4u);  // the second stop_strings fired, and it keeps its string
    EXPECT_EQ(stat.check(state_of({0, 2}, 1, "")), finish_reason::eos);
    EXPECT_FALSE(stat.text_cut());  // EOS cuts nothing

    any_of_criteria dyn{eos_criterion{2}, stop_strings({"abc"})};
    EXPECT_EQ(dyn.hold_back("zab"), 2u);
    EXPECT_EQ(dyn.check(state_of({0, 5}, 1, "zzabc")), finish_reason::stop_string);
    EXPECT_EQ(*dyn.text_cut(), 2u);
    const any_criterion erased = stop_strings({"abc"});
    EXPECT_EQ(erased.hold_back("ab"), 2u);
    const any_criterion plain = max_new_tokens(1);
    EXPECT_EQ(plain.hold_back("ab"), 0u);
    EXPECT_FALSE(plain.text_cut());
}

}  // namespace
}  // namespace nexttok

// Stops with finish_reason::deadline once the clock passes a point in time: either a fixed time point
// (deadline::at), or a duration counted from the start of each generation (deadline::after: reset(),
// which generate() calls first, restarts it). The clock is a template parameter so that tests can
// drive time; `deadline` uses std::chrono::steady_clock (monotonic, unaffected by clock changes).
// Reads the clock once per check. Copyable; not thread-safe.
#pragma once

#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <chrono>

namespace nexttok {

template <class Clock>
class basic_deadline {
public:
    using time_point = typename Clock::time_point;
    using duration = typename Clock::duration;

    // Fires at `when` (reset() does not move it).
    static basic_deadline at(time_point when) { return basic_deadline(when, duration::zero(), false); }

    // Fires `budget` after construction, and after each reset().
    template <class Rep, class Period>
    static basic_deadline after(std::chrono::duration<Rep, Period> budget) {
        const auto d = std::chrono::duration_cast<duration>(budget);
        return basic_deadline(Clock::now() + d, d, true);
    }

    finish_reason check(const generation_state&) const {
        return Clock::now() >= when_ ? finish_reason::deadline : finish_reason::none;
    }

    void reset() {
        if (relative_) when_ = Clock::now() + budget_;
    }

    time_point when() const noexcept { return when_; }

private:
    basic_deadline(time_point when, duration budget, bool relative)
            : when_(when), budget_(budget), relative_(relative) {}

    time_point when_;
    duration budget_;
    bool relative_;
};

using deadline = basic_deadline<std::chrono::steady_clock>;

}  // namespace nexttok

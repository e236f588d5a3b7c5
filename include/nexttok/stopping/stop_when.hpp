// A user predicate as a stopping criterion: stops with `reason` (finish_reason::predicate unless
// given) when predicate(state) returns true. The predicate is a std::function called once per check,
// on the generating thread; it may keep state of its own (it is copied with the criterion).
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <functional>
#include <utility>

namespace nexttok {

class stop_when {
public:
    using predicate_type = std::function<bool(const generation_state&)>;

    // Throws invalid_argument_error for an empty predicate or reason == none.
    explicit stop_when(predicate_type predicate, finish_reason reason = finish_reason::predicate)
            : predicate_(std::move(predicate)), reason_(reason) {
        if (!predicate_) throw invalid_argument_error("stop_when: empty predicate");
        if (reason_ == finish_reason::none) throw invalid_argument_error("stop_when: the reason must not be none");
    }

    finish_reason check(const generation_state& state) { return predicate_(state) ? reason_ : finish_reason::none; }

private:
    predicate_type predicate_;
    finish_reason reason_;
};

}  // namespace nexttok

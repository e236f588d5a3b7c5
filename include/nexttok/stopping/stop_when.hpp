// A user predicate as a stopping criterion: stops with `reason` (finish_reason::predicate unless
// given) when predicate(state) returns true. The predicate is a std::function called once per check,
// on the generating thread; it may keep state of its own (it is copied with the criterion).
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <functional>

namespace nexttok {

class stop_when {
public:
    using predicate_type = std::function<bool(const generation_state&)>;

    // Throws invalid_argument_error for an empty predicate or reason == none.
    NEXTTOK_DECL explicit stop_when(predicate_type predicate, finish_reason reason = finish_reason::predicate);

    finish_reason check(const generation_state& state) { return predicate_(state) ? reason_ : finish_reason::none; }

private:
    predicate_type predicate_;
    finish_reason reason_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/stopping/impl/stop_when.ipp>
#endif

// A stopping criterion looks at the sequence after each step and says whether (and why) to stop.
// check() returns finish_reason::none to continue. An optional reset() clears per-generation state
// (a deadline restarts its clock); holders call it when present.
//
// Calling convention (generate()): check() runs once before the first decoding step (n_generated()
// == 0, so that e.g. max_new_tokens(0) generates nothing) and again after each appended token.
// Token criteria only look at generated tokens, never at the prompt.
#pragma once

#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <concepts>

namespace nexttok {

template <class S>
concept stopping_criterion = requires(S& s, const generation_state& state) {
    { s.check(state) } -> std::same_as<finish_reason>;
};

namespace detail {

template <class S>
void reset_criterion_if_supported(S& criterion) {
    if constexpr (requires { criterion.reset(); }) criterion.reset();
}

}  // namespace detail
}  // namespace nexttok

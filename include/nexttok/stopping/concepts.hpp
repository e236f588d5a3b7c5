// A stopping criterion looks at the sequence after each step and says whether (and why) to stop.
// check() returns finish_reason::none to continue. An optional reset() clears per-generation state
// (a deadline restarts its clock); holders call it when present.
//
// Calling convention (generate()): reset() first, then check() once before the first decoding step
// (n_generated() == 0, so that e.g. max_new_tokens(0) generates nothing) and again after each
// appended token. Token criteria only look at generated tokens, never at the prompt.
//
// Criteria that match the decoded text (stop_strings) may also offer, optionally:
//   std::size_t hold_back(std::string_view text) const
//       how many trailing bytes of `text` could still become the start of a match: the streamer in
//       generate() does not show them yet, so the user never sees part of a stop string;
//   std::optional<std::size_t> text_cut() const
//       after check() returned a reason: the length the generated text is cut to (the start of the
//       matched stop string, or its end when the stop string is kept); nullopt: no cut.
// The composites (any_of, all_of, any_of_criteria, all_of_criteria, any_criterion) forward both.
#pragma once

#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <concepts>
#include <cstddef>
#include <optional>
#include <string_view>

namespace nexttok {

template <class S>
concept stopping_criterion = requires(S& s, const generation_state& state) {
    { s.check(state) } -> std::same_as<finish_reason>;
};

template <class S>
concept holds_back_text = requires(const S& s, std::string_view text) {
    { s.hold_back(text) } -> std::convertible_to<std::size_t>;
};

template <class S>
concept cuts_text = requires(const S& s) {
    { s.text_cut() } -> std::convertible_to<std::optional<std::size_t>>;
};

namespace detail {

template <class S>
void reset_criterion_if_supported(S& criterion) {
    if constexpr (requires { criterion.reset(); }) criterion.reset();
}

template <class S>
std::size_t hold_back_if_supported(const S& criterion, std::string_view text) {
    if constexpr (holds_back_text<S>)
        return static_cast<std::size_t>(criterion.hold_back(text));
    else
        return 0;
}

template <class S>
std::optional<std::size_t> text_cut_if_supported(const S& criterion) {
    if constexpr (cuts_text<S>)
        return criterion.text_cut();
    else
        return std::nullopt;
}

}  // namespace detail
}  // namespace nexttok

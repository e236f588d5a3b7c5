// Static composition of stopping criteria: checks each in the order given and returns the first
// reason that is not none (later criteria are not evaluated). reset() resets every criterion that
// has a reset(). Text criteria are forwarded (concepts.hpp): hold_back() is the largest of the
// members', text_cut() is that of the member that fired.
//
//   any_of stop(eos_criterion{2}, max_new_tokens{128}, stop_strings({"\n\n"}));
//
// Owns the criteria by value (class template argument deduction from the arguments).
#pragma once

#include <nexttok/stopping/concepts.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

namespace nexttok {

template <stopping_criterion... Criteria>
class any_of {
public:
    explicit any_of(Criteria... criteria) : criteria_(std::move(criteria)...) {}

    finish_reason check(const generation_state& state) {
        finish_reason reason = finish_reason::none;
        std::size_t index = 0;
        // || short-circuits: criteria after the first that fires are not evaluated.
        std::apply(
            [&](auto&... c) {
                static_cast<void>((((reason = c.check(state)) != finish_reason::none || (++index, false)) || ...));
            },
            criteria_);
        fired_ = index;
        return reason;
    }

    void reset() {
        std::apply([](auto&... c) { (detail::reset_criterion_if_supported(c), ...); }, criteria_);
        fired_ = sizeof...(Criteria);
    }

    std::size_t hold_back(std::string_view text) const {
        std::size_t held = 0;
        std::apply([&](const auto&... c) { ((held = std::max(held, detail::hold_back_if_supported(c, text))), ...); },
                   criteria_);
        return held;
    }

    std::optional<std::size_t> text_cut() const {
        std::optional<std::size_t> cut;
        std::size_t i = 0;
        std::apply(
            [&](const auto&... c) {
                ((i++ == fired_ ? static_cast<void>(cut = detail::text_cut_if_supported(c)) : static_cast<void>(0)),
                 ...);
            },
            criteria_);
        return cut;
    }

    template <std::size_t I>
    auto& get() noexcept {
        return std::get<I>(criteria_);
    }
    template <std::size_t I>
    const auto& get() const noexcept {
        return std::get<I>(criteria_);
    }

private:
    std::tuple<Criteria...> criteria_;
    std::size_t fired_ = sizeof...(Criteria);  // the member whose reason the last check returned
};

template <class... Criteria>
any_of(Criteria...) -> any_of<Criteria...>;

}  // namespace nexttok

// Static composition of stopping criteria: checks each in the order given and returns the first
// reason that is not none (later criteria are not evaluated). reset() resets every criterion that
// has a reset().
//
//   any_of stop(eos_criterion{2}, max_new_tokens{128}, stop_tokens{32007});
//
// Owns the criteria by value (class template argument deduction from the arguments).
#pragma once

#include <nexttok/stopping/concepts.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <cstddef>
#include <tuple>
#include <utility>

namespace nexttok {

template <stopping_criterion... Criteria>
class any_of {
public:
    explicit any_of(Criteria... criteria) : criteria_(std::move(criteria)...) {}

    finish_reason check(const generation_state& state) {
        finish_reason reason = finish_reason::none;
        // || short-circuits: criteria after the first that fires are not evaluated.
        std::apply([&](auto&... c) { static_cast<void>((((reason = c.check(state)) != finish_reason::none) || ...)); },
                   criteria_);
        return reason;
    }

    void reset() {
        std::apply([](auto&... c) { (detail::reset_criterion_if_supported(c), ...); }, criteria_);
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
};

template <class... Criteria>
any_of(Criteria...) -> any_of<Criteria...>;

}  // namespace nexttok

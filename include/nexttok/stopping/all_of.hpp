// Static conjunction of stopping criteria: stops only when every criterion fires at the same check,
// with the reason of the first one (e.g. all_of(stop_strings({"."}), max_new_tokens(50)): end at the
// first sentence end after 50 tokens). Every criterion is checked every time (none is skipped, so
// stateful ones see every step). reset() resets all. Text criteria are forwarded (concepts.hpp):
// hold_back() is the largest of the members', text_cut() the smallest cut any member reports.
// Owns the criteria by value.
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
requires(sizeof...(Criteria) > 0) class all_of {
public:
    explicit all_of(Criteria... criteria) : criteria_(std::move(criteria)...) {}

    finish_reason check(const generation_state& state) {
        finish_reason first = finish_reason::none;
        bool all = true;
        std::apply(
            [&](auto&... c) {
                (
                    (void)[&] {
                        const finish_reason r = c.check(state);
                        if (r == finish_reason::none)
                            all = false;
                        else if (first == finish_reason::none)
                            first = r;
                    }(),
                    ...);
            },
            criteria_);
        return all ? first : finish_reason::none;
    }

    void reset() {
        std::apply([](auto&... c) { (detail::reset_criterion_if_supported(c), ...); }, criteria_);
    }

    std::size_t hold_back(std::string_view text) const {
        std::size_t held = 0;
        std::apply([&](const auto&... c) { ((held = std::max(held, detail::hold_back_if_supported(c, text))), ...); },
                   criteria_);
        return held;
    }

    std::optional<std::size_t> text_cut() const {
        std::optional<std::size_t> cut;
        std::apply(
            [&](const auto&... c) {
                (
                    (void)[&] {
                        const auto k = detail::text_cut_if_supported(c);
                        if (k && (!cut || *k < *cut)) cut = k;
                    }(),
                    ...);
            },
            criteria_);
        return cut;
    }

    template <std::size_t I>
    auto& get() noexcept {
        return std::get<I>(criteria_);
    }

private:
    std::tuple<Criteria...> criteria_;
};

template <class... Criteria>
all_of(Criteria...) -> all_of<Criteria...>;

}  // namespace nexttok

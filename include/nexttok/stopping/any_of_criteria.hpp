// Runtime composition of stopping criteria: a vector of any_criterion checked in insertion order; the
// first reason that is not none wins (later criteria are not evaluated). Empty: never stops. It is
// itself a stopping_criterion, and forwards the text interface (concepts.hpp): hold_back() is the
// largest of the members', text_cut() that of the member that fired. Copyable (clones each
// criterion); not thread-safe.
//
//   any_of_criteria stop{eos_criterion{2}, max_new_tokens{opts.n_predict}};
//   if (!opts.stop.empty()) stop.add(stop_strings(opts.stop));
#pragma once

#include <nexttok/stopping/any_criterion.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

class any_of_criteria {
public:
    any_of_criteria() = default;
    any_of_criteria(std::initializer_list<any_criterion> criteria) : criteria_(criteria) {}

    // Appends a criterion, checked after those already present.
    any_of_criteria& add(any_criterion criterion) {
        criteria_.push_back(std::move(criterion));
        return *this;
    }

    finish_reason check(const generation_state& state) {
        for (fired_ = 0; fired_ < criteria_.size(); ++fired_) {
            const finish_reason reason = criteria_[fired_].check(state);
            if (reason != finish_reason::none) return reason;
        }
        return finish_reason::none;
    }

    void reset() {
        for (auto& c : criteria_) c.reset();
        fired_ = criteria_.size();
    }

    std::size_t hold_back(std::string_view text) const {
        std::size_t held = 0;
        for (const auto& c : criteria_) held = std::max(held, c.hold_back(text));
        return held;
    }

    std::optional<std::size_t> text_cut() const {
        return fired_ < criteria_.size() ? criteria_[fired_].text_cut() : std::nullopt;
    }

    std::size_t size() const noexcept { return criteria_.size(); }
    bool empty() const noexcept { return criteria_.empty(); }

private:
    std::vector<any_criterion> criteria_;
    std::size_t fired_ = 0;  // the member whose reason the last check returned (size(): none)
};

}  // namespace nexttok

// Runtime composition of stopping criteria: a vector of any_criterion checked in insertion order; the
// first reason that is not none wins (later criteria are not evaluated). Empty: never stops. It is
// itself a stopping_criterion. Copyable (clones each criterion); not thread-safe.
//
//   any_of_criteria stop{eos_criterion{2}, max_new_tokens{opts.n_predict}};
//   if (!opts.stop_ids.empty()) stop.add(stop_tokens(opts.stop_ids));
#pragma once

#include <nexttok/stopping/any_criterion.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <cstddef>
#include <initializer_list>
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
        for (auto& c : criteria_) {
            const finish_reason reason = c.check(state);
            if (reason != finish_reason::none) return reason;
        }
        return finish_reason::none;
    }

    void reset() {
        for (auto& c : criteria_) c.reset();
    }

    std::size_t size() const noexcept { return criteria_.size(); }
    bool empty() const noexcept { return criteria_.empty(); }

private:
    std::vector<any_criterion> criteria_;
};

}  // namespace nexttok

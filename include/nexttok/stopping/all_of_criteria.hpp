// Runtime conjunction of stopping criteria (the runtime form of all_of): stops only when every
// criterion fires at the same check, with the reason of the first; every criterion is checked every
// time. Empty: never stops. Forwards the text interface as all_of does. Copyable; not thread-safe.
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

class all_of_criteria {
public:
    all_of_criteria() = default;
    all_of_criteria(std::initializer_list<any_criterion> criteria) : criteria_(criteria) {}

    all_of_criteria& add(any_criterion criterion) {
        criteria_.push_back(std::move(criterion));
        return *this;
    }

    finish_reason check(const generation_state& state) {
        if (criteria_.empty()) return finish_reason::none;
        finish_reason first = finish_reason::none;
        bool all = true;
        for (auto& c : criteria_) {
            const finish_reason r = c.check(state);
            if (r == finish_reason::none)
                all = false;
            else if (first == finish_reason::none)
                first = r;
        }
        return all ? first : finish_reason::none;
    }

    void reset() {
        for (auto& c : criteria_) c.reset();
    }

    std::size_t hold_back(std::string_view text) const {
        std::size_t held = 0;
        for (const auto& c : criteria_) held = std::max(held, c.hold_back(text));
        return held;
    }

    std::optional<std::size_t> text_cut() const {
        std::optional<std::size_t> cut;
        for (const auto& c : criteria_) {
            const auto k = c.text_cut();
            if (k && (!cut || *k < *cut)) cut = k;
        }
        return cut;
    }

    std::size_t size() const noexcept { return criteria_.size(); }
    bool empty() const noexcept { return criteria_.empty(); }

private:
    std::vector<any_criterion> criteria_;
};

}  // namespace nexttok

// The two composite rules of stopping criteria, written once for members held statically (a tuple:
// any_of, all_of) or chosen at run time (a vector of any_criterion: any_of_criteria,
// all_of_criteria). Internal: the four public headers say what each rule does.
#pragma once

#include <nexttok/stopping/any_criterion.hpp>
#include <nexttok/stopping/concepts.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace nexttok::detail {

// Members in a tuple. each(f) calls f(member, index) in order until f returns true; returns whether
// one did.
template <class... Criteria>
struct criteria_tuple {
    std::tuple<Criteria...> items;

    template <class F>
    bool each(F&& f) {
        return std::apply([&](auto&... c) { return visit_in_order(f, c...); }, items);
    }
    template <class F>
    bool each(F&& f) const {
        return std::apply([&](const auto&... c) { return visit_in_order(f, c...); }, items);
    }

private:
    template <class F, class... C>
    static bool visit_in_order(F& f, C&... c) {
        std::size_t i = 0;
        return (f(c, i++) || ...);  // || short-circuits: members after the first true are not visited
    }
};

// Members chosen at run time, in insertion order.
struct criteria_vector {
    std::vector<any_criterion> items;

    template <class F>
    bool each(F&& f) {
        for (std::size_t i = 0; i < items.size(); ++i)
            if (f(items[i], i)) return true;
        return false;
    }
    template <class F>
    bool each(F&& f) const {
        for (std::size_t i = 0; i < items.size(); ++i)
            if (f(items[i], i)) return true;
        return false;
    }
};

// What both rules forward of their members: reset() to all; hold_back(), the largest of the
// members' (a text any member might still complete is held back).
template <class Members>
void reset_all(Members& m) {
    m.each([](auto& c, std::size_t) {
        reset_criterion_if_supported(c);
        return false;
    });
}
template <class Members>
std::size_t largest_hold_back(const Members& m, std::string_view text) {
    std::size_t held = 0;
    m.each([&](const auto& c, std::size_t) {
        held = std::max(held, hold_back_if_supported(c, text));
        return false;
    });
    return held;
}

// The disjunction: the first member's reason that is not none (later members are not checked);
// text_cut() is that of the member that fired.
template <class Members>
class any_rule {
public:
    any_rule() = default;
    explicit any_rule(Members m) : members_(std::move(m)) {}

    finish_reason check(const generation_state& state) {
        finish_reason reason = finish_reason::none;
        fired_ = no_member;
        members_.each([&](auto& c, std::size_t i) {
            reason = c.check(state);
            if (reason != finish_reason::none) fired_ = i;
            return reason != finish_reason::none;
        });
        return reason;
    }
    void reset() {
        reset_all(members_);
        fired_ = no_member;
    }
    std::size_t hold_back(std::string_view text) const { return largest_hold_back(members_, text); }
    std::optional<std::size_t> text_cut() const {
        std::optional<std::size_t> cut;
        members_.each([&](const auto& c, std::size_t i) {
            if (i == fired_) cut = text_cut_if_supported(c);
            return i == fired_;
        });
        return cut;
    }

protected:
    static constexpr std::size_t no_member = static_cast<std::size_t>(-1);
    Members members_;
    std::size_t fired_ = no_member;  // the member whose reason the last check returned
};

// The conjunction: stops only when every member fires at the same check, with the reason of the
// first; every member is checked every time (stateful ones see every step). No member: never
// stops. text_cut() is the smallest cut any member reports.
template <class Members>
class all_rule {
public:
    all_rule() = default;
    explicit all_rule(Members m) : members_(std::move(m)) {}

    finish_reason check(const generation_state& state) {
        finish_reason first = finish_reason::none;
        bool all = true, any_member = false;
        members_.each([&](auto& c, std::size_t) {
            any_member = true;
            const finish_reason r = c.check(state);
            if (r == finish_reason::none)
                all = false;
            else if (first == finish_reason::none)
                first = r;
            return false;
        });
        return all && any_member ? first : finish_reason::none;
    }
    void reset() { reset_all(members_); }
    std::size_t hold_back(std::string_view text) const { return largest_hold_back(members_, text); }
    std::optional<std::size_t> text_cut() const {
        std::optional<std::size_t> cut;
        members_.each([&](const auto& c, std::size_t) {
            const auto k = text_cut_if_supported(c);
            if (k && (!cut || *k < *cut)) cut = k;
            return false;
        });
        return cut;
    }

protected:
    Members members_;
};

// The front ends of a rule. Members given at construction, in a tuple (any_of, all_of), each
// reachable by get<I>():
template <template <class> class Rule, class... Criteria>
class static_composite : public Rule<criteria_tuple<Criteria...>> {
public:
    explicit static_composite(Criteria... criteria)
            : Rule<criteria_tuple<Criteria...>>({std::tuple<Criteria...>(std::move(criteria)...)}) {}

    // Member I, as given to the constructor.
    template <std::size_t I>
    auto& get() noexcept {
        return std::get<I>(this->members_.items);
    }
    template <std::size_t I>
    const auto& get() const noexcept {
        return std::get<I>(this->members_.items);
    }
};

// Members chosen at run time and added in order (any_of_criteria, all_of_criteria); Derived, the
// class itself, is what add() returns:
template <template <class> class Rule, class Derived>
class dynamic_composite : public Rule<criteria_vector> {
public:
    dynamic_composite() = default;
    dynamic_composite(std::initializer_list<any_criterion> criteria)
            : Rule<criteria_vector>({std::vector<any_criterion>(criteria)}) {}

    // Appends a criterion, checked after those already present.
    Derived& add(any_criterion criterion) {
        this->members_.items.push_back(std::move(criterion));
        return static_cast<Derived&>(*this);
    }

    std::size_t size() const noexcept { return this->members_.items.size(); }
    bool empty() const noexcept { return this->members_.items.empty(); }
};

}  // namespace nexttok::detail

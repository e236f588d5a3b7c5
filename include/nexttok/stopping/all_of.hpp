// Static conjunction of stopping criteria: stops only when every criterion fires at the same check,
// with the reason of the first one (e.g. all_of(stop_strings({"."}), max_new_tokens(50)): end at the
// first sentence end after 50 tokens). Every criterion is checked every time (none is skipped, so
// stateful ones see every step). reset() resets all. Text criteria are forwarded (concepts.hpp):
// hold_back() is the largest of the members', text_cut() the smallest cut any member reports.
// Owns the criteria by value.
#pragma once

#include <nexttok/stopping/concepts.hpp>
#include <nexttok/stopping/detail/composite.hpp>

namespace nexttok {

template <stopping_criterion... Criteria>
requires(sizeof...(Criteria) > 0) class all_of : public detail::static_composite<detail::all_rule, Criteria...> {
public:
    using detail::static_composite<detail::all_rule, Criteria...>::static_composite;
};

template <class... Criteria>
all_of(Criteria...) -> all_of<Criteria...>;

}  // namespace nexttok

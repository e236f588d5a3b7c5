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
#include <nexttok/stopping/detail/composite.hpp>

namespace nexttok {

template <stopping_criterion... Criteria>
class any_of : public detail::static_composite<detail::any_rule, Criteria...> {
public:
    using detail::static_composite<detail::any_rule, Criteria...>::static_composite;
};

template <class... Criteria>
any_of(Criteria...) -> any_of<Criteria...>;

}  // namespace nexttok

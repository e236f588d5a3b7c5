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
#include <nexttok/stopping/detail/composite.hpp>

namespace nexttok {

class any_of_criteria : public detail::dynamic_composite<detail::any_rule, any_of_criteria> {
public:
    using dynamic_composite::dynamic_composite;
};

}  // namespace nexttok

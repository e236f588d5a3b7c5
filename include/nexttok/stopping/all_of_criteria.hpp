// Runtime conjunction of stopping criteria (the runtime form of all_of): stops only when every
// criterion fires at the same check, with the reason of the first; every criterion is checked every
// time. Empty: never stops. Forwards the text interface as all_of does. Copyable; not thread-safe.
#pragma once

#include <nexttok/stopping/any_criterion.hpp>
#include <nexttok/stopping/detail/composite.hpp>

namespace nexttok {

class all_of_criteria : public detail::dynamic_composite<detail::all_rule, all_of_criteria> {
public:
    using dynamic_composite::dynamic_composite;
};

}  // namespace nexttok

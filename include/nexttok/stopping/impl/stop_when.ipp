// The definitions of stop_when.hpp.
#pragma once

#include <nexttok/stopping/stop_when.hpp>

#include <utility>

namespace nexttok {

NEXTTOK_DECL stop_when::stop_when(predicate_type predicate, finish_reason reason)
        : predicate_(std::move(predicate)), reason_(reason) {
    if (!predicate_) throw invalid_argument_error("stop_when: empty predicate");
    if (reason_ == finish_reason::none) throw invalid_argument_error("stop_when: the reason must not be none");
}

}  // namespace nexttok

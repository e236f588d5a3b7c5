// The definitions of detail/validate.hpp.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/sampling/detail/validate.hpp>

#include <cmath>
#include <string>
#include <string_view>

namespace nexttok::detail {

NEXTTOK_DECL void require_not_nan(float value, std::string_view who, std::string_view what) {
    if (std::isnan(value)) throw invalid_argument_error(std::string(who) + ": " + std::string(what) + " is NaN");
}

}  // namespace nexttok::detail

// Parameter checks shared by the sampling stages' constructors (setup time, never per token).
#pragma once

#include <nexttok/error.hpp>

#include <cmath>
#include <string>
#include <string_view>

namespace nexttok::detail {

// Throws invalid_argument_error "<who>: <what> is NaN" for a NaN parameter: every comparison with NaN
// is false, so it would silently disable (or corrupt) the stage instead of failing.
inline void require_not_nan(float value, std::string_view who, std::string_view what) {
    if (std::isnan(value)) throw invalid_argument_error(std::string(who) + ": " + std::string(what) + " is NaN");
}

}  // namespace nexttok::detail

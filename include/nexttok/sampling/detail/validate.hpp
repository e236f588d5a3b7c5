// Parameter checks shared by the sampling stages' constructors (setup time, never per token).
#pragma once

#include <nexttok/detail/config.hpp>

#include <string_view>

namespace nexttok::detail {

// Throws invalid_argument_error "<who>: <what> is NaN" for a NaN parameter: every comparison with NaN
// is false, so it would silently disable (or corrupt) the stage instead of failing.
NEXTTOK_DECL void require_not_nan(float value, std::string_view who, std::string_view what);

}  // namespace nexttok::detail

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/validate.ipp>
#endif

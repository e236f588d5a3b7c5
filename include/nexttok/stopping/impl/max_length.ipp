// The definitions of max_length.hpp.
#pragma once

#include <nexttok/stopping/max_length.hpp>

#include <string>

namespace nexttok {

NEXTTOK_DECL std::size_t max_length::checked_(std::int64_t n) {
    if (n < 1) throw invalid_argument_error("max_length: n = " + std::to_string(n) + ": must be >= 1");
    return static_cast<std::size_t>(n);
}

}  // namespace nexttok

// The definitions of max_new_tokens.hpp.
#pragma once

#include <nexttok/stopping/max_new_tokens.hpp>

#include <string>

namespace nexttok {

NEXTTOK_DECL std::size_t max_new_tokens::checked_(std::int64_t n) {
    if (n < 0) throw invalid_argument_error("max_new_tokens: n = " + std::to_string(n) + ": must be >= 0");
    return static_cast<std::size_t>(n);
}

}  // namespace nexttok

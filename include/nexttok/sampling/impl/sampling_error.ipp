// The definitions of sampling_error.hpp.
#pragma once

#include <nexttok/sampling/sampling_error.hpp>

#include <string>

namespace nexttok::detail {

[[noreturn]] NEXTTOK_DECL void throw_all_removed(const char* chain) {
    throw sampling_error(std::string(chain) +
                         "::sample: the processors removed every candidate (logit bias, banned sequences, "
                         "no-repeat-n-gram or min-new-tokens masked the whole vocabulary)");
}

}  // namespace nexttok::detail

// The definitions of generation_options.hpp.
#pragma once

#include <nexttok/generation/generation_options.hpp>

#include <string>

namespace nexttok {

NEXTTOK_DECL void generation_options::validate() const {
    if (max_new_tokens < -1) fail_("max_new_tokens", std::to_string(max_new_tokens), "must be >= -1 (-1 = no limit)");
    if (max_length < 0) fail_("max_length", std::to_string(max_length), "must be >= 0 (0 = no limit)");
    if (min_new_tokens < 0) fail_("min_new_tokens", std::to_string(min_new_tokens), "must be >= 0");
    if (keep < -1) fail_("keep", std::to_string(keep), "must be >= -1 (-1 = the whole prompt)");
    for (const auto& s : stop)
        if (s.empty()) fail_("stop", "\"\"", "a stop string must not be empty");
    for (const auto& s : stop_token_sequences)
        if (s.empty()) fail_("stop_token_sequences", "{}", "a stop sequence must not be empty");
    if (timeout.count() < 0) fail_("timeout", std::to_string(timeout.count()) + " ms", "must be >= 0 (0 = none)");
    if (n_logprobs < 0) fail_("n_logprobs", std::to_string(n_logprobs), "must be >= 0");
    if (n_samples < 1) fail_("n_samples", std::to_string(n_samples), "must be >= 1");
    sampling.validate();
}

NEXTTOK_DECL void generation_options::fail_(const char* field, const std::string& value, const char* rule) {
    throw invalid_argument_error(std::string("generation_options: ") + field + " = " + value + ": " + rule);
}

}  // namespace nexttok

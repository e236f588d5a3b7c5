// The definitions of scheduler_options.hpp.
#pragma once

#include <nexttok/batching/scheduler_options.hpp>

#include <string>

namespace nexttok {

NEXTTOK_DECL void scheduler_options::validate() const {
    if (max_step_tokens < 1)
        throw invalid_argument_error("scheduler_options::max_step_tokens = " + std::to_string(max_step_tokens) +
                                     ": expected at least 1");
    if (max_running < 1)
        throw invalid_argument_error("scheduler_options::max_running = " + std::to_string(max_running) +
                                     ": expected at least 1");
    if (prefill_chunk < 0)
        throw invalid_argument_error("scheduler_options::prefill_chunk = " + std::to_string(prefill_chunk) +
                                     ": expected 0 (no limit) or more");
}

}  // namespace nexttok

// The options and counters of a continuous-batching scheduler (scheduler.hpp), and its request ids.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>

#include <cstdint>
#include <string>

namespace nexttok {

// A request of a scheduler: numbered 0, 1, 2, ... in submission order.
using request_id = std::int64_t;

struct scheduler_options {
    // Tokens of one forward call (decode tokens + prompt chunks); at least 1. The decoder's scratch
    // is sized for it once.
    std::int64_t max_step_tokens = 256;
    // Requests running at once (holding blocks); at least 1.
    std::int64_t max_running = 64;
    // Most prompt tokens of one request per step (0: as the budget allows). Smaller chunks let
    // decode tokens of running requests through sooner (less stall, more steps).
    std::int64_t prefill_chunk = 0;

    // Throws invalid_argument_error naming the field.
    NEXTTOK_DECL void validate() const;
};

// Counters since construction.
struct scheduler_stats {
    std::int64_t submitted = 0, finished = 0;
    std::int64_t waiting = 0, running = 0;  // now
    std::int64_t peak_running = 0;
    std::int64_t steps = 0;              // forward calls
    std::int64_t prompt_tokens = 0;      // prompt positions computed (again after a preemption; not those
                                         // attached from the prefix cache)
    std::int64_t generated_tokens = 0;   // tokens sampled
    std::int64_t recomputed_tokens = 0;  // generated positions computed again after a preemption
    std::int64_t preemptions = 0;
    std::int64_t prefix_hit_tokens = 0;  // prompt positions attached from the prefix cache instead of computed
    std::int64_t peak_used_blocks = 0;   // the pool's
    // Wall time of the forward calls and sampling, split between prompt and decode rows in
    // proportion to their count in each step.
    double prompt_seconds = 0.0, decode_seconds = 0.0;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/batching/impl/scheduler_options.ipp>
#endif

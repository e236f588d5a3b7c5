// What every HTTP handler shares: the loaded model, the engine, the metrics, the request defaults
// from the flags, and the count of responses still being written (shutdown waits for them).
// Everything here is read-only after start, except the atomics.
#pragma once

#include "engine.hpp"
#include "metrics.hpp"
#include "model_context.hpp"

#include <nexttok/generation/generation_options.hpp>

#include <atomic>
#include <cstdint>
#include <string>

namespace server {

struct server_state {
    const model_context* model = nullptr;         // non-owning
    engine* eng = nullptr;                        // non-owning
    metrics* stats = nullptr;                     // non-owning
    nexttok::generation_options defaults;         // the generation flags: every request starts from them
    std::string api_key;                          // empty: no authentication
    std::int64_t max_body = 0;                    // bytes (--max-body), for the 413 message
    std::int64_t started = 0;                     // Unix seconds, the "created" of /v1/models
    std::atomic<std::int64_t> open_responses{0};  // generation responses whose content is still being written
    std::atomic<std::uint64_t> next_id{0};        // numbers the response ids
};

}  // namespace server

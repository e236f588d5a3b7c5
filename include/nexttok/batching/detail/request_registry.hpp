// The requests of a scheduler (scheduler.hpp) as the threads share them: the queue of new ones, the
// cancellations, the results and the counters, under one mutex; and the requests the step thread
// owns. Internal: the scheduler's submit(), cancel(), finished(), take_result(), idle() and stats()
// forward here, and its step thread takes new requests and hands back finished ones.
#pragma once

#include <nexttok/batching/detail/scheduled_request.hpp>
#include <nexttok/batching/scheduler_options.hpp>
#include <nexttok/detail/config.hpp>
#include <nexttok/detail/loop_settings.hpp>
#include <nexttok/generation/generation_result.hpp>
#include <nexttok/generation/token_event.hpp>
#include <nexttok/sampling/any_sampler.hpp>
#include <nexttok/stopping/any_of_criteria.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace nexttok {

class tokenizer;

namespace detail {

class request_registry {
public:
    NEXTTOK_DECL request_registry();
    NEXTTOK_DECL ~request_registry();
    request_registry(const request_registry&) = delete;
    request_registry& operator=(const request_registry&) = delete;

    // Any thread. Builds the request (see scheduled_request) and starts it: queued for the step
    // thread, or, when its first check ends it at once, finished here (its result stored).
    NEXTTOK_DECL request_id submit(const tokenizer* tok, std::span<const token_id> prompt, any_sampler sample,
                                   any_of_criteria stop, token_callback on_token, std::int64_t capacity,
                                   const loop_settings& settings);
    // See scheduler::cancel(), finished(), take_result(), idle() and stats().
    NEXTTOK_DECL void cancel(request_id id);
    NEXTTOK_DECL bool finished(request_id id) const;
    NEXTTOK_DECL std::optional<generation_result> take_result(request_id id);
    NEXTTOK_DECL bool idle() const;
    NEXTTOK_DECL scheduler_stats stats() const;

    // The step thread. Appends the requests submitted since the last call to `waiting` (and owns
    // them) and marks those cancelled since.
    NEXTTOK_DECL void take_incoming(std::deque<scheduled_request*>& waiting);
    // r has left the running and waiting lists and holds no blocks: stops it (unless it ended by
    // itself, why == none), stores its result and destroys it.
    NEXTTOK_DECL void finish(scheduled_request* r, finish_reason why);
    // Copies the step thread's counters where stats() reads them, with the list sizes as of now.
    NEXTTOK_DECL void publish(const scheduler_stats& step_stats, std::size_t n_running, std::size_t n_waiting);

private:
    // Owned by the step thread (changed under the mutex, as take_incoming() and finish() run).
    std::unordered_map<request_id, std::unique_ptr<scheduled_request>> owned_;

    // Shared with other threads, under mutex_.
    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<scheduled_request>> incoming_;
    std::vector<request_id> cancels_;
    std::unordered_set<request_id> live_;  // submitted, not finished
    std::unordered_map<request_id, generation_result> results_;
    request_id next_id_ = 0;
    scheduler_stats stats_;  // submitted and finished kept here; the rest copied from the step thread's
    std::size_t running_count_ = 0, waiting_count_ = 0;  // as of the last step
};

}  // namespace detail
}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/batching/impl/request_registry.ipp>
#endif

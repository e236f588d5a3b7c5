// A request as the scheduler (scheduler.hpp) holds it, and the check of a prompt at submit().
// Internal.
#pragma once

#include <nexttok/batching/scheduler_options.hpp>
#include <nexttok/cache/paged_cache_options.hpp>
#include <nexttok/detail/config.hpp>
#include <nexttok/detail/loop_settings.hpp>
#include <nexttok/generation/generation_result.hpp>
#include <nexttok/generation/token_event.hpp>
#include <nexttok/sampling/any_sampler.hpp>
#include <nexttok/stopping/any_of_criteria.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/types.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace nexttok {

class tokenizer;

namespace detail {

// A request's policies, its per-token state (a sequence_generator over them, in
// impl/scheduled_request.ipp) and where its sequence stands in the pool. Owned by the scheduler
// through a unique_ptr: the generator refers to the policies, so a request never moves.
struct scheduled_request {
    // The generator of generate() for `prompt` in a sequence of `capacity` positions (see
    // sequence_generator's constructor; throws as it does). tok: null for tokens only.
    NEXTTOK_DECL scheduled_request(const tokenizer* tok, std::span<const token_id> prompt, any_sampler sample,
                                   any_of_criteria stop, token_callback on_token, std::int64_t capacity,
                                   const loop_settings& settings);
    NEXTTOK_DECL ~scheduled_request();
    scheduled_request(const scheduled_request&) = delete;
    scheduled_request& operator=(const scheduled_request&) = delete;

    request_id id = 0;
    seq_id seq = -1;             // its sequence in the pool while running; -1 while waiting
    std::int64_t computed = 0;   // positions whose keys and values are in the pool
    std::int64_t published = 0;  // positions offered to the prefix index
    std::int64_t admitted = 0;   // admission stamp: the newest running request is preempted first
    bool cancelled = false;

    // The generator's calls (sequence_generator.hpp): start() once, next() with the logits of the
    // sequence's last position, stop_with() or fail() to end it from outside, finish() once at the end.
    NEXTTOK_DECL bool start();
    NEXTTOK_DECL bool next(std::span<const float> logits);
    NEXTTOK_DECL void stop_with(finish_reason why);
    NEXTTOK_DECL void fail(std::string message);
    NEXTTOK_DECL generation_result finish();
    NEXTTOK_DECL std::int64_t n_prompt() const noexcept;

    // Prompt + generated (the generator's sequence()).
    NEXTTOK_DECL std::span<const token_id> tokens() const noexcept;
    std::int64_t total() const noexcept { return static_cast<std::int64_t>(tokens().size()); }
    std::int64_t pending() const noexcept { return total() - computed; }

private:
    struct state;  // the sampler, the criteria, the callback and the generator over them
    std::unique_ptr<state> state_;
};

// The rows one step runs for a request: n tokens from r->computed.
struct planned_rows {
    scheduled_request* r;
    std::int64_t n;
};

// Throws invalid_argument_error for a prompt that is empty, longer than `capacity` positions (the
// message names the pool's blocks, block size and max_seq_len) or holds a token outside the
// vocabulary: checked at submit(), not by the decoder at a step, where it would fail the whole batch.
NEXTTOK_DECL void check_prompt_fits(std::span<const token_id> prompt, std::int64_t capacity, std::int64_t vocab_size,
                                    std::int64_t n_blocks, std::int64_t block_size, std::int64_t max_seq_len);

}  // namespace detail
}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/batching/impl/scheduled_request.ipp>
#endif

// A request as the scheduler (scheduler.hpp) holds it, and the check of a prompt at submit().
// Internal.
#pragma once

#include <nexttok/batching/scheduler_options.hpp>
#include <nexttok/cache/paged_cache_options.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/sequence_generator.hpp>
#include <nexttok/generation/token_event.hpp>
#include <nexttok/sampling/any_sampler.hpp>
#include <nexttok/stopping/any_of_criteria.hpp>
#include <nexttok/types.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace nexttok::detail {

// A request's policies, its per-token state (the generator) and where its sequence stands in the
// pool. Owned by the scheduler through a unique_ptr: the generator refers to sample, stop and
// on_token, so a request never moves.
struct scheduled_request {
    using generator = sequence_generator<any_sampler, any_of_criteria>;

    scheduled_request(any_sampler s, any_of_criteria c, token_callback cb)
            : sample(std::move(s)), stop(std::move(c)), on_token(std::move(cb)) {}

    request_id id = 0;
    any_sampler sample;
    any_of_criteria stop;
    token_callback on_token;
    std::optional<generator> gen;
    seq_id seq = -1;             // its sequence in the pool while running; -1 while waiting
    std::int64_t computed = 0;   // positions whose keys and values are in the pool
    std::int64_t published = 0;  // positions offered to the prefix index
    std::int64_t admitted = 0;   // admission stamp: the newest running request is preempted first
    bool cancelled = false;

    std::span<const token_id> tokens() const { return gen->sequence(); }
    std::int64_t total() const { return static_cast<std::int64_t>(gen->sequence().size()); }
    std::int64_t pending() const { return total() - computed; }
};

// The rows one step runs for a request: n tokens from r->computed.
struct planned_rows {
    scheduled_request* r;
    std::int64_t n;
};

// Throws invalid_argument_error for a prompt that is empty, longer than `capacity` positions (the
// message names the pool's blocks, block size and max_seq_len) or holds a token outside the
// vocabulary: checked at submit(), not by the decoder at a step, where it would fail the whole batch.
inline void check_prompt_fits(std::span<const token_id> prompt, std::int64_t capacity, std::int64_t vocab_size,
                              std::int64_t n_blocks, std::int64_t block_size, std::int64_t max_seq_len) {
    if (prompt.empty())
        throw invalid_argument_error("scheduler::submit: the prompt is empty (expected at least one token, e.g. BOS)");
    if (static_cast<std::int64_t>(prompt.size()) > capacity)
        throw invalid_argument_error("scheduler::submit: the prompt has " + std::to_string(prompt.size()) +
                                     " tokens, more than the " + std::to_string(capacity) +
                                     " positions a request can hold (KV pool of " + std::to_string(n_blocks) +
                                     " blocks of " + std::to_string(block_size) + " positions, max_seq_len " +
                                     std::to_string(max_seq_len) + ")");
    for (std::size_t i = 0; i < prompt.size(); ++i)
        if (prompt[i] < 0 || prompt[i] >= vocab_size)
            throw invalid_argument_error("scheduler::submit: prompt token " + std::to_string(i) + " is " +
                                         std::to_string(prompt[i]) + ", outside the vocabulary [0, " +
                                         std::to_string(vocab_size) + ")");
}

}  // namespace nexttok::detail

// The definitions of detail/scheduled_request.hpp: a request's generator.
#pragma once

#include <nexttok/batching/detail/scheduled_request.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/sequence_generator.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace nexttok::detail {

struct scheduled_request::state {
    using generator = sequence_generator<any_sampler, any_of_criteria>;

    state(any_sampler s, any_of_criteria c, token_callback cb)
            : sample(std::move(s)), stop(std::move(c)), on_token(std::move(cb)) {}

    any_sampler sample;
    any_of_criteria stop;
    token_callback on_token;
    std::optional<generator> gen;  // refers to the three above
};

NEXTTOK_DECL scheduled_request::scheduled_request(const tokenizer* tok, std::span<const token_id> prompt,
                                                  any_sampler sample, any_of_criteria stop, token_callback on_token,
                                                  std::int64_t capacity, const loop_settings& settings)
        : state_(std::make_unique<state>(std::move(sample), std::move(stop), std::move(on_token))) {
    state_->gen.emplace(tok, prompt, state_->sample, state_->stop, state_->on_token, capacity, settings);
}

NEXTTOK_DECL scheduled_request::~scheduled_request() = default;

NEXTTOK_DECL bool scheduled_request::start() { return state_->gen->start(); }

NEXTTOK_DECL bool scheduled_request::next(std::span<const float> logits) { return state_->gen->next(logits); }

NEXTTOK_DECL void scheduled_request::stop_with(finish_reason why) { state_->gen->stop_with(why); }

NEXTTOK_DECL void scheduled_request::fail(std::string message) { state_->gen->fail(std::move(message)); }

NEXTTOK_DECL generation_result scheduled_request::finish() { return state_->gen->finish(); }

NEXTTOK_DECL std::int64_t scheduled_request::n_prompt() const noexcept { return state_->gen->n_prompt(); }

NEXTTOK_DECL std::span<const token_id> scheduled_request::tokens() const noexcept { return state_->gen->sequence(); }

NEXTTOK_DECL void check_prompt_fits(std::span<const token_id> prompt, std::int64_t capacity, std::int64_t vocab_size,
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

// What the generation loop (generate_impl, sequence_generator) is asked for beyond the policies, and
// the prompt check both entry points share.
#pragma once

#include <nexttok/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nexttok::detail {

struct loop_settings {
    std::int64_t n_logprobs = 0;    // top alternatives per token (0: none)
    std::int64_t sample_index = 0;  // reported in token_event::sample
    // Logits of the prompt's last position when the prompt is already in the cache (generate_n): the
    // prefill is skipped and the cache is not cleared. Null: the loop clears the cache and prefills.
    // Non-owning; sequence_generator only looks at whether it is set (to report prefill_seconds).
    const std::vector<float>* prefilled_logits = nullptr;
    double prefill_seconds = 0.0;  // with prefilled_logits: the time of that shared prefill
    // The driver shifts the cache's context when it is full (generate.hpp): the capacity ends nothing.
    bool context_shift = false;
    // With context_shift: tokens to reserve room for (the options' max_new_tokens; -1: unknown).
    std::int64_t max_new_tokens = -1;
    // With context_shift: the positions at the start of the cache a shift keeps (kept_positions()).
    std::int64_t n_keep = 0;
};

// Throws invalid_argument_error for an empty prompt or one that does not fit the cache.
inline void check_prompt(std::size_t n_prompt, std::int64_t capacity, const char* who) {
    if (n_prompt == 0)
        throw invalid_argument_error(std::string(who) +
                                     ": the prompt is empty (expected at least one token, e.g. BOS)");
    if (static_cast<std::int64_t>(n_prompt) > capacity)
        throw invalid_argument_error(std::string(who) + ": the prompt has " + std::to_string(n_prompt) +
                                     " tokens, more than the context of " + std::to_string(capacity) + " positions");
}

}  // namespace nexttok::detail

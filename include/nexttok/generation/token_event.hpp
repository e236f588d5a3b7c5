// What the streaming callback of generate(), generate_n() and sequence_generator sees: one event per
// generated token, and one more at the end (id == no_token) if text was still held back.
#pragma once

#include <nexttok/generation/generation_result.hpp>
#include <nexttok/types.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

namespace nexttok {

struct token_event {
    token_id id = no_token;
    std::string_view text;                        // newly released text (may be empty: a held-back partial character or
                                                  // possible stop-string prefix, EOS); valid during the call only
    float logprob = 0.0f;                         // log-probability of `id` under the model
    std::int64_t index = 0;                       // 0 for the first generated token
    std::span<const token_logprob> top_logprobs;  // the n_logprobs most likely tokens, when asked
    std::int64_t sample = 0;                      // which sample (generate_n), 0 for generate()
};

// Called once per generated token, after the stopping criteria have seen it; returning false stops
// generation (finish_reason::callback) unless a criterion already ended it (its reason is kept).
using token_callback = std::function<bool(const token_event&)>;

}  // namespace nexttok

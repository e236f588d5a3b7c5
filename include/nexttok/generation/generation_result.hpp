// What generate() returns: the tokens, the text, why it stopped, per-token log-probabilities
// (optionally the top alternatives) and timings.
#pragma once

#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/types.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace nexttok {

struct generation_timings {
    std::int64_t n_prompt_tokens = 0;  // tokens run by the prefill call
    std::int64_t n_decode_steps = 0;   // forward calls after the prefill, one per generated token but the last
    double prefill_seconds = 0.0;      // the prefill forward call and the first sampling
    double decode_seconds = 0.0;       // every later forward call and sampling
    // Prompt tokens not run because the cache already held them (generate_reusing); 0 otherwise.
    std::int64_t n_reused_prompt_tokens = 0;

    double prefill_tokens_per_second() const noexcept {
        return prefill_seconds > 0.0 ? static_cast<double>(n_prompt_tokens) / prefill_seconds : 0.0;
    }
    double decode_tokens_per_second() const noexcept {
        return decode_seconds > 0.0 ? static_cast<double>(n_decode_steps) / decode_seconds : 0.0;
    }
};

// A token and its log-probability under the model (natural log of the softmax of the raw logits).
struct token_logprob {
    token_id id = no_token;
    float logprob = 0.0f;
};

struct generation_result {
    // Generated tokens, without the prompt. An end-of-sequence token that stopped generation is
    // included (it was sampled and has a log-probability) but adds no text; so is the token that
    // completed a stop string.
    std::vector<token_id> tokens;
    // The generated text (the prompt's text is not repeated). When a stop string ended generation the
    // text ends before it (or after it, with include_stop_string), even if the last token went further.
    std::string text;
    finish_reason reason = finish_reason::none;
    // logprobs[i]: natural log of the model's probability of tokens[i] (softmax of the raw logits),
    // so their sum is the log-probability of the continuation given the prompt (see score()).
    std::vector<float> logprobs;
    // processed_logprobs[i]: the same under the distribution the sampler drew from (after
    // penalties, truncation and temperature); 0 when only one candidate was left.
    std::vector<float> processed_logprobs;
    // top_logprobs[i]: with n_logprobs = N > 0, the N most likely tokens at step i under the model
    // (raw logits, as OpenAI's top_logprobs), most likely first, ties by lower id; empty otherwise.
    std::vector<std::vector<token_logprob>> top_logprobs;
    // Times the cache was full and its context shifted (generation_options::context_shift); 0 otherwise.
    std::int64_t n_context_shifts = 0;
    // With reason == finish_reason::error (a scheduler's request that failed), the error's message;
    // empty otherwise. generate() throws the error instead.
    std::string error;
    generation_timings timings;
};

}  // namespace nexttok

// Log-probabilities of raw logits for generate() and score(): one log-sum-exp per position, in double.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/generation/generation_result.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nexttok::detail {

// log(sum(exp(logits))), in double, the maximum subtracted first. Precondition: logits not empty.
NEXTTOK_DECL double log_sum_exp(std::span<const float> logits) noexcept;

// log softmax(logits)[id], in double over the whole vocabulary.
inline float log_probability(std::span<const float> logits, token_id id) noexcept {
    return static_cast<float>(static_cast<double>(logits[static_cast<std::size_t>(id)]) - log_sum_exp(logits));
}

// The n most likely tokens of `logits` (logit descending, lower id first among ties) with their log-
// probabilities, given lse = log_sum_exp(logits). `order` is scratch of vocab_size entries (reused).
NEXTTOK_DECL void top_logprobs(std::span<const float> logits, double lse, std::size_t n,
                               std::vector<std::uint32_t>& order, std::vector<token_logprob>& out);

}  // namespace nexttok::detail

#if NEXTTOK_HEADER_ONLY
#include <nexttok/generation/impl/logprobs.ipp>
#endif

// The log-probability a chain reports for the token it chose.
#pragma once

#include <nexttok/sampling/candidates.hpp>
#include <nexttok/types.hpp>

#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>

namespace nexttok::detail {

// log softmax(c.logits)[token] over the current set, as a log-sum-exp in float (more accurate than
// log(probs[i]) for unlikely tokens, and independent of whether probs are valid). Exactly 0 when the
// set holds one candidate; -inf when the token is not in the set.
inline float chosen_logprob(const candidates& c, token_id token) noexcept {
    const std::size_t pos = c.position_of(token);
    if (pos == c.size()) return -std::numeric_limits<float>::infinity();
    if (c.size() == 1) return 0.0f;
    const float max_l = c.max_logit();
    float sum = 0.0f;
    for (float l : c.logits) sum += std::exp(l - max_l);
    return (c.logits[pos] - max_l) - std::log(sum);
}

}  // namespace nexttok::detail

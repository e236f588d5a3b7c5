// The log-probability a chain reports for the token it chose, and what a chain (sampler_chain,
// dynamic_chain) keeps of its last sample.
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

// The last sample of a chain: the candidate set as the selector saw it, the token chosen, and that
// token's log-probability, computed on the first logprob() after a sample (a log-sum-exp over the
// survivors: 128k exp() for a greedy chain over a full vocabulary, so a caller that never asks never
// pays for it) and then cached.
struct last_sample {
    candidates set;  // filled and processed by the chain before its selector runs

    void chose(token_id t) noexcept {
        token = t;
        pending = true;
    }
    void reset() noexcept {
        token = no_token;
        pending = false;
        value = 0.0f;
    }
    // 0 before any sample.
    float logprob() const noexcept {
        if (pending) {
            value = chosen_logprob(set, token);
            pending = false;
        }
        return value;
    }

private:
    token_id token = no_token;
    mutable bool pending = false;
    mutable float value = 0.0f;
};

}  // namespace nexttok::detail

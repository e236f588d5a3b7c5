// The log-probability a chain reports for the token it chose, and what a chain (sampler_chain,
// dynamic_chain) keeps of its last sample.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/sampling_error.hpp>
#include <nexttok/types.hpp>

#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>

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

    // The first half of a chain's sample() and distribution(): `logits` into `set`, then `apply` (the
    // chain's processors) on it. Errors name "<chain>::<call>": invalid_argument_error for empty
    // logits, unsupported_error when `draws` (a processor draws random numbers in apply(), so no
    // distribution can be stated), sampling_error when the processors remove every candidate.
    template <class Apply>
    candidates& process(std::span<const float> logits, Apply&& apply, const char* chain, const char* call,
                        bool draws = false) {
        if (draws) [[unlikely]]
            fail<unsupported_error>(chain, call, "a processor draws random numbers in apply() (e.g. XTC)");
        if (logits.empty()) [[unlikely]]
            fail<invalid_argument_error>(chain, call, "empty logits");
        set.assign(logits);
        apply(set);
        if (set.empty()) throw_all_removed(chain);
        return set;
    }

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
    template <class Error>
    [[noreturn]] static void fail(const char* chain, const char* call, const char* what) {
        throw Error(std::string(chain) + "::" + call + ": " + what);
    }

    token_id token = no_token;
    mutable bool pending = false;
    mutable float value = 0.0f;
};

}  // namespace nexttok::detail

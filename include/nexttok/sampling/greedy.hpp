// Greedy selection: the candidate with the highest logit (argmax), ties to the lowest token id.
// llama.cpp's greedy sampler takes the first maximum in array order, which is the lowest id for a set
// in id order; here the tie rule holds whatever the order. Deterministic, stateless, consumes no
// randomness; does not touch probs. Returns no_token for an empty set. distribution(): probability 1
// for that token, the set left as it is (so last_logprob() stays the chain's).
#pragma once

#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/token_distribution.hpp>
#include <nexttok/types.hpp>

#include <span>

namespace nexttok {

struct greedy {
    token_id select(candidates& c) const noexcept { return c.empty() ? no_token : c.ids[c.argmax()]; }

    token_distribution distribution(candidates& c) const noexcept {
        if (c.empty()) return {};
        return {std::span<const token_id>(&c.ids[c.argmax()], 1), std::span<const float>(&certain_, 1)};
    }

private:
    static constexpr float certain_ = 1.0f;
};

}  // namespace nexttok

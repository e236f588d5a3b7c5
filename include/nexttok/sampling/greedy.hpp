// Greedy selection: the candidate with the highest logit (argmax), ties to the lowest token id.
// llama.cpp's greedy sampler takes the first maximum in array order, which is the lowest id for a set
// in id order; here the tie rule holds whatever the order. Deterministic, stateless, consumes no
// randomness; does not touch probs. Returns no_token for an empty set.
#pragma once

#include <nexttok/sampling/candidates.hpp>
#include <nexttok/types.hpp>

namespace nexttok {

struct greedy {
    token_id select(candidates& c) const noexcept { return c.empty() ? no_token : c.ids[c.argmax()]; }
};

}  // namespace nexttok

// The distribution a sampler draws its next token from, as a view: token ids[i] has probability
// probs[i], every token not listed has probability 0. What a chain's distribution() returns (see
// distribution_sampler in concepts.hpp): speculative decoding verifies drafted tokens against it and
// draws from it itself, instead of letting the selector draw.
#pragma once

#include <nexttok/types.hpp>

#include <cstddef>
#include <span>

namespace nexttok {

struct token_distribution {
    std::span<const token_id> ids;  // distinct ids, in no particular order
    std::span<const float> probs;   // (ids.size()), >= 0, summing to 1 up to float rounding
    // Non-owning: views into the sampler's candidate buffer, valid until its next call.

    std::size_t size() const noexcept { return ids.size(); }
    bool empty() const noexcept { return ids.empty(); }
};

}  // namespace nexttok

// Logit bias (llama.cpp's logit_bias sampler, OpenAI's logit_bias): adds a fixed bias to the logits of
// listed tokens. A bias of -infinity bans the token: the candidate is removed (llama.cpp keeps it with
// a -inf logit, which every later stage and the draw treat as probability 0; removing it gives the
// same draws and keeps -inf out of top-n-sigma's statistics, which llama.cpp skips explicitly). Several
// entries for one id add up. Ids absent from the set (an earlier filter removed them, or beyond the
// vocabulary) are ignored. Biasing every candidate to -inf empties the set: the chain then throws
// sampling_error. Stateless; cost O(entries) while the set is the whole vocabulary in id order.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <vector>

namespace nexttok {

struct token_bias {
    token_id id = no_token;
    float bias = 0.0f;  // added to the logit; -infinity bans the token
};

class logit_bias {
public:
    // Throws invalid_argument_error for a negative id, a NaN or +infinite bias.
    NEXTTOK_DECL explicit logit_bias(std::vector<token_bias> biases);

    NEXTTOK_DECL void apply(candidates& c) const;

    const std::vector<token_bias>& biases() const noexcept { return biases_; }

private:
    std::vector<token_bias> biases_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/logit_bias.ipp>
#endif

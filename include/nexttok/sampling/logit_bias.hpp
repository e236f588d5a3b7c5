// Logit bias (llama.cpp's logit_bias sampler, OpenAI's logit_bias): adds a fixed bias to the logits of
// listed tokens. A bias of -infinity bans the token: the candidate is removed (llama.cpp keeps it with
// a -inf logit, which every later stage and the draw treat as probability 0; removing it gives the
// same draws and keeps -inf out of top-n-sigma's statistics, which llama.cpp skips explicitly). Several
// entries for one id add up. Ids absent from the set (an earlier filter removed them, or beyond the
// vocabulary) are ignored. Biasing every candidate to -inf empties the set: the chain then throws
// sampling_error. Stateless; cost O(entries) while the set is the whole vocabulary in id order.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/types.hpp>

#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace nexttok {

struct token_bias {
    token_id id = no_token;
    float bias = 0.0f;  // added to the logit; -infinity bans the token
};

class logit_bias {
public:
    // Throws invalid_argument_error for a negative id, a NaN or +infinite bias.
    explicit logit_bias(std::vector<token_bias> biases) : biases_(std::move(biases)) {
        for (const auto& b : biases_) {
            if (b.id < 0) throw invalid_argument_error("logit_bias: token id " + std::to_string(b.id) + " is negative");
            if (std::isnan(b.bias) || b.bias == INFINITY)
                throw invalid_argument_error("logit_bias: token " + std::to_string(b.id) +
                                             ": bias must be finite or -inf");
        }
    }

    void apply(candidates& c) const {
        bool banned = false;
        for (const auto& b : biases_) {
            const std::size_t i = c.position_of(b.id);
            if (i == c.size()) continue;
            c.logits[i] += b.bias;
            banned = banned || c.logits[i] == -INFINITY;
        }
        if (biases_.empty()) return;
        c.sorted = false;
        c.probs_valid = false;
        if (banned) c.keep_if([&](std::size_t i) { return c.logits[i] != -INFINITY; });
    }

    const std::vector<token_bias>& biases() const noexcept { return biases_; }

private:
    std::vector<token_bias> biases_;
};

}  // namespace nexttok

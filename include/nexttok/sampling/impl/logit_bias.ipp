// The definitions of logit_bias.hpp.
#pragma once

#include <nexttok/sampling/logit_bias.hpp>

#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace nexttok {

NEXTTOK_DECL logit_bias::logit_bias(std::vector<token_bias> biases) : biases_(std::move(biases)) {
    for (const auto& b : biases_) {
        if (b.id < 0) throw invalid_argument_error("logit_bias: token id " + std::to_string(b.id) + " is negative");
        if (std::isnan(b.bias) || b.bias == INFINITY)
            throw invalid_argument_error("logit_bias: token " + std::to_string(b.id) + ": bias must be finite or -inf");
    }
}

NEXTTOK_DECL void logit_bias::apply(candidates& c) const {
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

}  // namespace nexttok

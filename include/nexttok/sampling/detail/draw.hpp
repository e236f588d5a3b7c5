// The inverse-CDF draw shared by the selectors that sample (categorical, mirostat v1 and v2).
#pragma once

#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/rng.hpp>

#include <cassert>
#include <cstddef>

namespace nexttok::detail {

// Draws a position of `c` with probability softmax(logits): probs = softmax (float, max-subtracted),
// u uniform on [0, 1) (one value of the stream), target = u * sum(probs) in double, and the first
// candidate whose running sum (double, array order) exceeds the target wins. Candidates of probability
// 0 are never drawn. Precondition: c.size() >= 2 (callers return a single candidate without drawing).
inline std::size_t draw_position(candidates& c, xoshiro256ss& rng) {
    assert(c.size() >= 2);
    c.softmax();
    double total = 0.0;
    for (float p : c.probs) total += p;
    const double target = static_cast<double>(rng.uniform_float()) * total;
    double running = 0.0;
    std::size_t last_positive = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
        if (c.probs[i] <= 0.0f) continue;
        running += c.probs[i];
        if (running > target) return i;
        last_positive = i;
    }
    return last_positive;  // only reachable through rounding at the very top of [0, 1)
}

}  // namespace nexttok::detail

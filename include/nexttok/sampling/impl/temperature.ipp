// The definitions of temperature.hpp.
#pragma once

#include <nexttok/sampling/temperature.hpp>

#include <cstddef>

namespace nexttok {

NEXTTOK_DECL void temperature::apply(candidates& c) const {
    if (c.empty()) return;
    if (t_ <= 0.0f) {
        keep_only_max(c);
        return;
    }
    for (float& l : c.logits) l /= t_;
    c.probs_valid = false;
    // Division is monotone but not strictly: two close logits may become equal and their
    // tie-break (lower id first) may then disagree with their position.
    if (c.sorted)
        for (std::size_t i = 1; i < c.size() && c.sorted; ++i)
            if (c.logits[i - 1] == c.logits[i] && c.ids[i - 1] > c.ids[i]) c.sorted = false;
}

NEXTTOK_DECL void temperature::keep_only_max(candidates& c) {
    const std::size_t best = c.argmax();
    c.ids[0] = c.ids[best];
    c.logits[0] = c.logits[best];
    c.truncate(1);
    c.sorted = true;
    c.probs_valid = false;
}

}  // namespace nexttok

// The definitions of xtc.hpp.
#pragma once

#include <nexttok/sampling/xtc.hpp>

#include <cstddef>

namespace nexttok {

NEXTTOK_DECL void xtc::apply(candidates& c) {
    if (probability_ <= 0.0f || threshold_ > 0.5f || c.size() < 2) return;
    if (rng_.uniform_float() > probability_) return;
    c.sort();
    c.softmax();
    std::size_t n_above = 0;
    while (n_above < c.size() && c.probs[n_above] >= threshold_) ++n_above;
    if (n_above < 2) return;
    const std::size_t n_remove = n_above - 1;
    if (c.size() - n_remove < min_keep_) return;
    c.keep_if([&](std::size_t i) { return i >= n_remove; });
}

}  // namespace nexttok

// The definitions of top_n_sigma.hpp.
#pragma once

#include <nexttok/sampling/top_n_sigma.hpp>

#include <cmath>
#include <cstddef>

namespace nexttok {

NEXTTOK_DECL void top_n_sigma::apply(candidates& c) const {
    if (n_ <= 0.0f || c.size() <= 1) return;
    float max = -INFINITY;
    float sum = 0.0f;
    std::size_t n_finite = 0;
    for (float l : c.logits) {
        if (l == -INFINITY) continue;
        max = l > max ? l : max;
        sum += l;
        ++n_finite;
    }
    if (n_finite == 0) return;
    const float mean = sum / static_cast<float>(n_finite);
    float acc = 0.0f;
    for (float l : c.logits)
        if (l != -INFINITY) acc += (l - mean) * (l - mean);
    const float sigma = std::sqrt(acc / static_cast<float>(n_finite));
    const float threshold = max - n_ * sigma;
    c.keep_if([&](std::size_t i) { return c.logits[i] >= threshold; });
}

}  // namespace nexttok

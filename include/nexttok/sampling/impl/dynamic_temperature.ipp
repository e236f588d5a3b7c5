// The definitions of dynamic_temperature.hpp.
#pragma once

#include <nexttok/sampling/dynamic_temperature.hpp>
#include <nexttok/sampling/temperature.hpp>

#include <algorithm>
#include <cmath>

namespace nexttok {

NEXTTOK_DECL void dynamic_temperature::apply(candidates& c) {
    if (range_ <= 0.0f) {
        last_t_ = t_;
        temperature(t_).apply(c);
        return;
    }
    if (c.size() <= 1) return;
    const float t_min = std::max(0.0f, t_ - range_);
    const float t_max = t_ + range_;
    const float max_entropy = -std::log(1.0f / static_cast<float>(c.size()));
    c.sort();
    c.softmax();
    float entropy = 0.0f;
    for (float p : c.probs)
        if (p > 0.0f) entropy -= p * std::log(p);
    const float normalized = entropy / max_entropy;
    last_t_ = t_min + (t_max - t_min) * std::pow(normalized, exponent_);
    temperature(last_t_).apply(c);
}

}  // namespace nexttok

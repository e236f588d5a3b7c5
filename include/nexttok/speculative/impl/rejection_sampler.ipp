// The definitions of detail/rejection_sampler.hpp.
#pragma once

#include <nexttok/speculative/detail/rejection_sampler.hpp>

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <span>

namespace nexttok::detail {

NEXTTOK_DECL std::size_t draw_weighted(std::span<const float> w, xoshiro256ss& rng) noexcept {
    double total = 0.0;
    for (float x : w) total += x;
    const double target = uniform_double(rng) * total;
    double running = 0.0;
    std::size_t last_positive = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
        if (w[i] <= 0.0f) continue;
        running += w[i];
        if (running > target) return i;
        last_positive = i;
    }
    return last_positive;  // only reachable through rounding at the very top of [0, 1)
}

NEXTTOK_DECL token_id rejection_sampler::verify(token_distribution p, token_id x, std::span<const float> q,
                                                bool& accepted) {
    assert(!p.empty());
    if (p.size() == 1) {
        accepted = p.ids[0] == x;
        return p.ids[0];
    }
    scatter_(p);
    const auto xi = static_cast<std::size_t>(x);
    const double px = p_[xi];
    const double qx = q.empty() ? 1.0 : static_cast<double>(q[xi]);
    accepted = uniform_double(rng_) * qx < px;
    if (accepted) return x;
    double total = 0.0;
    for (std::size_t j = 0; j < p_.size(); ++j) {
        const float qj = q.empty() ? (j == xi ? 1.0f : 0.0f) : q[j];
        residual_[j] = std::max(0.0f, p_[j] - qj);
        total += residual_[j];
    }
    // p <= q everywhere (equal up to rounding): rejection had probability ~0; any draw from p is exact.
    if (!(total > 0.0)) return draw(p);
    return static_cast<token_id>(draw_weighted(residual_, rng_));
}

NEXTTOK_DECL token_id rejection_sampler::draw(token_distribution p) {
    assert(!p.empty());
    if (p.size() == 1) return p.ids[0];
    return p.ids[draw_weighted(p.probs, rng_)];
}

NEXTTOK_DECL void rejection_sampler::scatter_(token_distribution p) {
    std::fill(p_.begin(), p_.end(), 0.0f);
    for (std::size_t i = 0; i < p.size(); ++i) p_[static_cast<std::size_t>(p.ids[i])] = p.probs[i];
}

}  // namespace nexttok::detail

// The definitions of eta_cutoff.hpp.
#pragma once

#include <nexttok/sampling/eta_cutoff.hpp>
#include <nexttok/sampling/detail/kth_logit.hpp>

#include <algorithm>
#include <cmath>

namespace nexttok {

NEXTTOK_DECL void eta_cutoff::apply(candidates& c) {
    if (epsilon_ <= 0.0f || c.empty()) return;
    detail::keep_probable_or_top(c, eta(c), min_keep_, scratch_);  // eta() computes the softmax
}

NEXTTOK_DECL float eta_cutoff::eta(candidates& c) const {
    c.softmax();
    double entropy = 0.0;
    for (float p : c.probs)
        if (p > 0.0f) entropy -= static_cast<double>(p) * std::log(static_cast<double>(p));
    const double eps = epsilon_;
    return static_cast<float>(std::min(eps, std::sqrt(eps) * std::exp(-entropy)));
}

}  // namespace nexttok

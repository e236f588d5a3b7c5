// The definitions of epsilon_cutoff.hpp.
#pragma once

#include <nexttok/sampling/epsilon_cutoff.hpp>
#include <nexttok/sampling/detail/kth_logit.hpp>

namespace nexttok {

NEXTTOK_DECL void epsilon_cutoff::apply(candidates& c) {
    if (epsilon_ <= 0.0f || c.empty()) return;
    c.softmax();
    detail::keep_probable_or_top(c, epsilon_, min_keep_, scratch_);
}

}  // namespace nexttok

// The definitions of min_p.hpp.
#pragma once

#include <nexttok/sampling/min_p.hpp>

#include <cmath>
#include <cstddef>

namespace nexttok {

NEXTTOK_DECL void min_p::apply(candidates& c) const {
    if (p_ <= 0.0f || c.empty()) return;
    const float log_p = std::log(p_);
    if (!c.sorted) {
        const float min_logit = c.max_logit() + log_p;
        std::size_t n_pass = 0;
        for (float l : c.logits) n_pass += l >= min_logit ? 1 : 0;
        if (n_pass > 0 && n_pass >= min_keep_) {
            c.keep_if([&](std::size_t i) { return c.logits[i] >= min_logit; });
            return;
        }
        c.sort();
    }
    const float min_logit = c.logits[0] + log_p;
    std::size_t n_keep = 1;  // the maximum always passes
    while (n_keep < c.size() && (c.logits[n_keep] >= min_logit || n_keep < min_keep_)) ++n_keep;
    c.truncate(n_keep);
}

}  // namespace nexttok

// The definitions of mirostat_v2.hpp.
#pragma once

#include <nexttok/sampling/mirostat_v2.hpp>
#include <nexttok/sampling/detail/draw.hpp>

#include <cmath>
#include <cstddef>

namespace nexttok {

NEXTTOK_DECL token_id mirostat_v2::select(candidates& c) {
    if (c.empty()) return no_token;
    c.sort();
    c.softmax();
    std::size_t n_keep = 0;
    while (n_keep < c.size() && -std::log2(c.probs[n_keep]) <= mu_) ++n_keep;
    c.truncate(n_keep == 0 ? 1 : n_keep);
    std::size_t pos = 0;
    if (c.size() == 1) {
        c.probs[0] = 1.0f;
        c.probs_valid = true;
    } else {
        pos = detail::draw_position(c, rng_);
    }
    mu_ -= eta_ * (-std::log2(c.probs[pos]) - tau_);
    return c.ids[pos];
}

}  // namespace nexttok

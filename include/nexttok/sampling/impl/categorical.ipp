// The definitions of categorical.hpp.
#pragma once

#include <nexttok/sampling/categorical.hpp>
#include <nexttok/sampling/detail/draw.hpp>

namespace nexttok {

NEXTTOK_DECL token_id categorical::select(candidates& c) {
    if (c.empty()) return no_token;
    if (c.size() == 1) {
        c.probs[0] = 1.0f;
        c.probs_valid = true;
        return c.ids[0];
    }
    return c.ids[detail::draw_position(c, rng_)];
}

}  // namespace nexttok

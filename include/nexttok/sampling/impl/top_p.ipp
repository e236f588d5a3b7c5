// The definitions of top_p.hpp.
#pragma once

#include <nexttok/sampling/top_p.hpp>

#include <algorithm>
#include <cstddef>

namespace nexttok {

NEXTTOK_DECL void top_p::apply(candidates& c) const {
    if (p_ >= 1.0f || c.empty()) return;
    c.softmax();
    std::size_t n_sorted = c.size();
    if (!c.sorted && c.size() > large_set) {
        c.sort_prefix(first_prefix);
        n_sorted = first_prefix;
    } else {
        c.sort();
    }
    float cum_sum = 0.0f;
    std::size_t n_keep = c.size();
    for (std::size_t i = 0; i < c.size(); ++i) {
        if (i == n_sorted) {  // the sorted prefix was not enough: sort a 4x longer one
            n_sorted = std::min(c.size(), n_sorted * growth);
            c.sort_prefix(n_sorted);
        }
        cum_sum += c.probs[i];
        if (cum_sum >= p_ && i + 1 >= min_keep_) {
            n_keep = i + 1;
            break;
        }
    }
    if (n_keep < c.size()) {
        c.truncate(n_keep);
        c.sorted = true;  // the kept prefix lies within the sorted part
    }
}

}  // namespace nexttok

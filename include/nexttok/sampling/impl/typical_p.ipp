// The definitions of typical_p.hpp.
#pragma once

#include <nexttok/sampling/typical_p.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>

namespace nexttok {

NEXTTOK_DECL void typical_p::apply(candidates& c) {
    if (p_ >= 1.0f || c.empty()) return;
    c.sort();
    c.softmax();
    float entropy = 0.0f;
    for (float p : c.probs)
        if (p > 0.0f) entropy -= p * std::log(p);
    score_.resize(c.size());
    for (std::size_t i = 0; i < c.size(); ++i) score_[i] = std::fabs(-std::log(c.probs[i]) - entropy);
    order_.resize(c.size());
    std::iota(order_.begin(), order_.end(), std::uint32_t{0});
    // Equal scores keep the sorted (logit desc, id asc) order: the position breaks ties (a stable
    // sort without std::stable_sort's temporary buffer, which would allocate on every call).
    std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
        return score_[a] < score_[b] || (score_[a] == score_[b] && a < b);
    });
    float cum = 0.0f;
    std::size_t n_keep = c.size();
    for (std::size_t i = 0; i < c.size(); ++i) {
        cum += c.probs[order_[i]];
        if (cum > p_ && i + 1 >= min_keep_) {
            n_keep = i + 1;
            break;
        }
    }
    ids_.resize(n_keep);
    logits_.resize(n_keep);
    probs_.resize(n_keep);
    for (std::size_t i = 0; i < n_keep; ++i) {
        ids_[i] = c.ids[order_[i]];
        logits_[i] = c.logits[order_[i]];
        probs_[i] = c.probs[order_[i]];
    }
    std::copy(ids_.begin(), ids_.end(), c.ids.begin());
    std::copy(logits_.begin(), logits_.end(), c.logits.begin());
    std::copy(probs_.begin(), probs_.end(), c.probs.begin());
    c.truncate(n_keep);
    c.sorted = false;
    c.probs_valid = false;
}

}  // namespace nexttok

// The definitions of dry.hpp.
#pragma once

#include <nexttok/sampling/dry.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nexttok {

NEXTTOK_DECL dry::dry(float multiplier, float base, std::int32_t allowed_length, std::int32_t last_n,
                      std::vector<std::vector<token_id>> breakers, bool include_prompt)
        : multiplier_(multiplier),
          base_(base),
          allowed_length_(allowed_length),
          last_n_(last_n),
          include_prompt_(include_prompt),
          history_(last_n) {
    if (!std::isfinite(multiplier) || !std::isfinite(base))
        throw invalid_argument_error("dry: multiplier and base must be finite");
    if (allowed_length < 1)
        throw invalid_argument_error("dry: allowed_length = " + std::to_string(allowed_length) + ": must be >= 1");
    if (last_n < -1)
        throw invalid_argument_error("dry: last_n = " + std::to_string(last_n) + ": must be >= -1 (-1 = all, 0 = off)");
    for (auto& b : breakers) {
        if (b.empty()) continue;
        breakers_.push_back({b.front(), std::vector<token_id>(b.begin() + 1, b.end())});
    }
    std::sort(breakers_.begin(), breakers_.end());
    breakers_.erase(std::unique(breakers_.begin(), breakers_.end()), breakers_.end());
    if (base_ > 1.000001f) max_exponent_ = static_cast<std::int32_t>(88.7228391f / std::log(base_));
    if (last_n > 0 && enabled()) {  // a bounded window: every buffer reaches its size here
        z_.reserve(static_cast<std::size_t>(last_n));
        touched_.reserve(static_cast<std::size_t>(last_n));
    }
}

NEXTTOK_DECL void dry::apply(candidates& c) {
    in_prompt_ = false;
    if (!enabled()) return;
    if (max_len_.size() < c.size()) max_len_.resize(c.size(), 0);  // once: the vocabulary
    const std::size_t n = history_.size();
    if (n <= static_cast<std::size_t>(allowed_length_)) return;
    const std::size_t limit = repetition_limit_(n);
    if (limit < static_cast<std::size_t>(allowed_length_)) return;
    longest_repeats_(n, limit);
    if (touched_.empty()) return;
    for (std::size_t i = 0; i < c.size(); ++i) {
        const token_id id = c.ids[i];
        const auto k = static_cast<std::size_t>(id);
        if (k >= max_len_.size() || max_len_[k] == 0 || is_single_breaker_(id)) continue;
        std::int32_t exponent = max_len_[k] - allowed_length_;
        if (max_exponent_ > 0 && exponent > max_exponent_) exponent = max_exponent_;
        c.logits[i] -= multiplier_ * std::pow(base_, static_cast<float>(exponent));
    }
    for (token_id id : touched_) max_len_[static_cast<std::size_t>(id)] = 0;
    touched_.clear();
    c.sorted = false;
    c.probs_valid = false;
}

NEXTTOK_DECL std::size_t dry::repetition_limit_(std::size_t n) const {
    for (std::size_t i = 0; i < n; ++i) {  // i: distance of a candidate head from the newest token
        const token_id head = history_.from_end(i);
        auto it = std::lower_bound(breakers_.begin(), breakers_.end(), head,
                                   [](const auto& b, token_id h) { return b.first < h; });
        std::int64_t longest = -1;
        for (; it != breakers_.end() && it->first == head; ++it) {
            const std::size_t tail = it->second.size();
            if (static_cast<std::int64_t>(tail) <= longest || tail > i) continue;
            bool match = true;
            for (std::size_t j = 0; j < tail && match; ++j) match = it->second[j] == history_.from_end(i - 1 - j);
            if (match) longest = static_cast<std::int64_t>(tail);
        }
        if (longest >= 0) return i - static_cast<std::size_t>(longest);
    }
    return n;
}

NEXTTOK_DECL void dry::longest_repeats_(std::size_t n, std::size_t limit) {
    z_.assign(n, 0);
    std::size_t left = 0, right = 0;  // the rightmost match window [left, right) found so far
    for (std::size_t k = 1; k < n; ++k) {
        std::size_t len = 0;
        if (k < right) len = std::min(right - k, z_[k - left]);
        while (k + len < n && history_.from_end(len) == history_.from_end(k + len)) ++len;
        z_[k] = len;
        if (k + len > right) {
            left = k;
            right = k + len;
        }
        const std::size_t capped = std::min(len, limit);
        if (capped < static_cast<std::size_t>(allowed_length_)) continue;
        const token_id next = history_.from_end(k - 1);
        const auto id = static_cast<std::size_t>(next);
        if (id >= max_len_.size()) max_len_.resize(id + 1, 0);
        if (max_len_[id] == 0) touched_.push_back(next);
        max_len_[id] = std::max(max_len_[id], static_cast<std::int32_t>(capped));
    }
}

NEXTTOK_DECL bool dry::is_single_breaker_(token_id id) const {
    auto it =
        std::lower_bound(breakers_.begin(), breakers_.end(), id, [](const auto& b, token_id h) { return b.first < h; });
    return it != breakers_.end() && it->first == id && it->second.empty();  // empty tails sort first
}

}  // namespace nexttok

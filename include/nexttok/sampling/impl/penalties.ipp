// The definitions of penalties.hpp.
#pragma once

#include <nexttok/sampling/penalties.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

namespace nexttok {

NEXTTOK_DECL penalties::penalties(std::int32_t last_n, float repeat, float frequency, float presence,
                                  bool include_prompt)
        : last_n_(last_n),
          repeat_(repeat),
          frequency_(frequency),
          presence_(presence),
          include_prompt_(include_prompt),
          window_(last_n > 0 ? last_n : 0) {
    if (last_n < -1)
        throw invalid_argument_error("penalties: last_n = " + std::to_string(last_n) +
                                     ": must be >= -1 (-1 = all, 0 = off)");
    if (!(repeat > 0.0f) || !std::isfinite(repeat))
        throw invalid_argument_error("penalties: repeat = " + std::to_string(repeat) +
                                     ": must be finite and > 0 (1 = off)");
    if (!std::isfinite(frequency) || !std::isfinite(presence))
        throw invalid_argument_error("penalties: frequency and presence must be finite");
}

NEXTTOK_DECL void penalties::apply(candidates& c) {
    in_prompt_ = false;
    if (!enabled()) return;
    if (counts_.size() < c.size()) counts_.resize(c.size(), 0);  // once: later accepts never allocate
    if (n_counted_ == 0) return;
    bool changed = false;
    for (std::size_t i = 0; i < c.size(); ++i) {
        const auto id = static_cast<std::size_t>(c.ids[i]);
        if (id >= counts_.size() || counts_[id] == 0) continue;
        const std::int32_t count = counts_[id];
        float& l = c.logits[i];
        if (l <= 0.0f)
            l *= repeat_;
        else
            l /= repeat_;
        l -= static_cast<float>(count) * frequency_ + presence_;
        changed = true;
    }
    if (changed) {
        c.sorted = false;
        c.probs_valid = false;
    }
}

NEXTTOK_DECL void penalties::reset() {
    std::fill(counts_.begin(), counts_.end(), 0);
    window_.clear();
    n_counted_ = 0;
    in_prompt_ = true;
}

}  // namespace nexttok

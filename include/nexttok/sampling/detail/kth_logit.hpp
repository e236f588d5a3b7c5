// The k-th largest logit of a candidate set, for the "keep the min_keep most likely" rule of Hugging
// Face's warpers (torch.topk(scores, k)[0][..., -1]). Internal.
#pragma once

#include <nexttok/sampling/candidates.hpp>

#include <algorithm>
#include <functional>
#include <cstddef>
#include <vector>

namespace nexttok::detail {

// Precondition: 1 <= k <= c.size(). `scratch` is reused (no allocation once warm).
inline float kth_largest_logit(const candidates& c, std::size_t k, std::vector<float>& scratch) {
    if (c.sorted) return c.logits[k - 1];
    if (k == 1) return c.max_logit();
    scratch.assign(c.logits.begin(), c.logits.end());
    std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(k - 1), scratch.end(),
                     std::greater<>());
    return scratch[k - 1];
}

// Hugging Face's epsilon/eta rule: keeps the candidates whose probability is >= cut, and always the
// min_keep most likely (with every candidate tied with the min_keep-th logit). c.probs must be valid.
inline void keep_probable_or_top(candidates& c, float cut, std::size_t min_keep, std::vector<float>& scratch) {
    const std::size_t k = std::clamp<std::size_t>(min_keep, 1, c.size());
    const float kth = kth_largest_logit(c, k, scratch);
    c.keep_if([&](std::size_t i) { return c.probs[i] >= cut || c.logits[i] >= kth; });
}

}  // namespace nexttok::detail

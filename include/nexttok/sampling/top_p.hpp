// Top-p ("nucleus") filtering (Holtzman et al. 2020, "The Curious Case of Neural Text Degeneration"):
// keep the smallest set of most probable candidates whose total probability reaches p.
//
// Reproduces llama.cpp's top-p sampler (llama_sampler_top_p_apply):
//   - p >= 1: no-op (checked first: the set is not even softmaxed or sorted).
//   - otherwise probs = softmax of the current set (float, max-subtracted), the set is sorted, and the
//     cumulative sum is accumulated in float in sorted order; the set is cut after the first position
//     i where cum_sum >= p AND i + 1 >= min_keep. Equality counts: with probabilities 0.5, 0.25, ...
//     and p = 0.75 exactly two candidates are kept. If the sum never reaches p (rounding), all are kept.
//     Hugging Face's TopPLogitsWarper states the same rule from the other end (it removes the tokens
//     whose ascending cumulative sum is <= 1 - p), so the engines agree in exact arithmetic; in float
//     they can differ by a token when a partial sum lies within rounding of p.
//   - min_keep = 0 behaves as 1 (the first candidate is always kept), as in llama.cpp.
//   - like llama.cpp for more than 1024 unsorted candidates, only the top 256 are sorted first; if
//     their mass is below p the sorted prefix grows 4x at a time (llama.cpp sorts everything at once).
//     The kept set is the same either way, only the cost differs: O(n + m log m) per round for a
//     prefix of m. A flat distribution over a large vocabulary with top-k disabled is the slow case.
// Afterwards the set is sorted and probs_valid is false (probs keep the pre-cut values, not
// renormalized, as llama.cpp leaves them). Ties: the candidates order (lower id first) decides.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/validate.hpp>

#include <cstddef>

namespace nexttok {

class top_p {
public:
    // Throws invalid_argument_error when p is NaN.
    explicit top_p(float p, std::size_t min_keep = 1) : p_(p), min_keep_(min_keep) {
        detail::require_not_nan(p, "top_p", "p");
    }

    NEXTTOK_DECL void apply(candidates& c) const;

    float p() const noexcept { return p_; }
    std::size_t min_keep() const noexcept { return min_keep_; }

private:
    // llama.cpp's adaptive sort thresholds; where llama.cpp then sorts everything, the prefix grows 4x.
    static constexpr std::size_t large_set = 1024;
    static constexpr std::size_t first_prefix = 256;
    static constexpr std::size_t growth = 4;

    float p_;
    std::size_t min_keep_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/top_p.ipp>
#endif

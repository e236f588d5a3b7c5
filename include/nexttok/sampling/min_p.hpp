// Min-p filtering (Nguyen et al. 2024, "Turning Up the Heat: Min-p Sampling for Creative and Coherent
// LLM Outputs"): keep the candidates whose probability is at least min_p times the largest one.
//
// Reproduces llama.cpp's min-p sampler (llama_sampler_min_p_apply), which compares logits, not
// probabilities: a candidate is kept when
//     logit >= max_logit + log(min_p)          (all in float; log(min_p) = std::log(float))
// which is p_i >= min_p * p_max without computing a softmax. Boundary: a candidate exactly at the
// threshold (logit == max_logit + log(min_p) in float) is kept.
//   - min_p <= 0 or an empty set: no-op.
//   - unsorted set with at least max(1, min_keep) candidates passing: they are kept in their current
//     order (the set stays unsorted).
//   - otherwise (sorted set, or too few passing): the set is sorted and the first
//     max(number passing, min_keep) candidates are kept (at least one, at most all).
//   - min_p > 1 keeps only the maximum (the first of the sorted order), as llama.cpp.
// probs_valid is cleared when candidates are removed.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/validate.hpp>

#include <cstddef>

namespace nexttok {

class min_p {
public:
    // Throws invalid_argument_error when p is NaN.
    explicit min_p(float p, std::size_t min_keep = 1) : p_(p), min_keep_(min_keep) {
        detail::require_not_nan(p, "min_p", "p");
    }

    NEXTTOK_DECL void apply(candidates& c) const;

    float p() const noexcept { return p_; }
    std::size_t min_keep() const noexcept { return min_keep_; }

private:
    float p_;
    std::size_t min_keep_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/min_p.ipp>
#endif

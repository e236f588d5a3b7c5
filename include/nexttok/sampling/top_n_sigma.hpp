// Top-n-sigma (Tang et al. 2024, "Top-nσ: Not All Logits Are You Need", arXiv 2411.07641): keep the
// candidates whose logit is within n standard deviations of the largest, logit >= max - n * sigma,
// with sigma the population standard deviation of the logits.
//
// Reproduces llama.cpp's top-n-sigma sampler (llama_sampler_top_n_sigma_apply): n <= 0 or fewer than
// two candidates: no-op; max, mean and sigma over the finite (not -inf) logits, accumulated in float in
// array order; a candidate is removed when logit < max - n * sigma (so one exactly at the threshold is
// kept, and the maximum always is). llama.cpp sets removed logits to -inf and then sorts; we remove
// them and keep the current order (the draw is the same). probs_valid is cleared when any is removed.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/validate.hpp>

#include <cstddef>

namespace nexttok {

class top_n_sigma {
public:
    // Throws invalid_argument_error when n is NaN.
    explicit top_n_sigma(float n) : n_(n) { detail::require_not_nan(n, "top_n_sigma", "n"); }

    NEXTTOK_DECL void apply(candidates& c) const;

    float n() const noexcept { return n_; }

private:
    float n_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/top_n_sigma.ipp>
#endif

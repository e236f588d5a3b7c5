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

#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/validate.hpp>

#include <cmath>
#include <cstddef>

namespace nexttok {

class top_n_sigma {
public:
    // Throws invalid_argument_error when n is NaN.
    explicit top_n_sigma(float n) : n_(n) { detail::require_not_nan(n, "top_n_sigma", "n"); }

    void apply(candidates& c) const {
        if (n_ <= 0.0f || c.size() <= 1) return;
        float max = -INFINITY;
        float sum = 0.0f;
        std::size_t n_finite = 0;
        for (float l : c.logits) {
            if (l == -INFINITY) continue;
            max = l > max ? l : max;
            sum += l;
            ++n_finite;
        }
        if (n_finite == 0) return;
        const float mean = sum / static_cast<float>(n_finite);
        float acc = 0.0f;
        for (float l : c.logits)
            if (l != -INFINITY) acc += (l - mean) * (l - mean);
        const float sigma = std::sqrt(acc / static_cast<float>(n_finite));
        const float threshold = max - n_ * sigma;
        c.keep_if([&](std::size_t i) { return c.logits[i] >= threshold; });
    }

    float n() const noexcept { return n_; }

private:
    float n_;
};

}  // namespace nexttok

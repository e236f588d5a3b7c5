// Eta sampling (Hewitt, Manning & Liang 2022, "Truncation Sampling as Language Model Desmoothing"):
// an entropy-dependent epsilon, eta = min(epsilon, sqrt(epsilon) * exp(-H)), H the entropy of the
// distribution in nats; remove the candidates with p < eta.
//
// Reproduces Hugging Face's EtaLogitsWarper: probs = softmax of the current set, H = -sum p ln p
// (double here; terms with p = 0 contribute 0), a candidate is removed when p < eta AND its logit is
// below the min_keep-th largest logit (ties with it are kept, see epsilon_cutoff.hpp). epsilon <= 0
// disables the stage. The set keeps its order; probs_valid is cleared when any is removed. llama.cpp
// has no eta sampler.
#pragma once

#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/kth_logit.hpp>
#include <nexttok/sampling/detail/validate.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace nexttok {

class eta_cutoff {
public:
    // Throws invalid_argument_error when epsilon is NaN.
    explicit eta_cutoff(float epsilon, std::size_t min_keep = 1) : epsilon_(epsilon), min_keep_(min_keep) {
        detail::require_not_nan(epsilon, "eta_cutoff", "epsilon");
    }

    void apply(candidates& c) {
        if (epsilon_ <= 0.0f || c.empty()) return;
        detail::keep_probable_or_top(c, eta(c), min_keep_, scratch_);  // eta() computes the softmax
    }

    // The cutoff eta for the current probabilities of c (computes a softmax).
    float eta(candidates& c) const {
        c.softmax();
        double entropy = 0.0;
        for (float p : c.probs)
            if (p > 0.0f) entropy -= static_cast<double>(p) * std::log(static_cast<double>(p));
        const double eps = epsilon_;
        return static_cast<float>(std::min(eps, std::sqrt(eps) * std::exp(-entropy)));
    }

    float epsilon() const noexcept { return epsilon_; }
    std::size_t min_keep() const noexcept { return min_keep_; }

private:
    float epsilon_;
    std::size_t min_keep_;
    std::vector<float> scratch_;
};

}  // namespace nexttok

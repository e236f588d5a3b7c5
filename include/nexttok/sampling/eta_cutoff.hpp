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

#include <nexttok/detail/config.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/validate.hpp>

#include <cstddef>
#include <vector>

namespace nexttok {

class eta_cutoff {
public:
    // Throws invalid_argument_error when epsilon is NaN.
    explicit eta_cutoff(float epsilon, std::size_t min_keep = 1) : epsilon_(epsilon), min_keep_(min_keep) {
        detail::require_not_nan(epsilon, "eta_cutoff", "epsilon");
    }

    NEXTTOK_DECL void apply(candidates& c);

    // The cutoff eta for the current probabilities of c (computes a softmax).
    NEXTTOK_DECL float eta(candidates& c) const;

    float epsilon() const noexcept { return epsilon_; }
    std::size_t min_keep() const noexcept { return min_keep_; }

private:
    float epsilon_;
    std::size_t min_keep_;
    std::vector<float> scratch_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/eta_cutoff.ipp>
#endif

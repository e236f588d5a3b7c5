// Epsilon sampling (Hewitt, Manning & Liang 2022, "Truncation Sampling as Language Model Desmoothing",
// Findings of EMNLP; arXiv 2210.15191): remove the candidates whose probability is below epsilon.
//
// Reproduces Hugging Face's EpsilonLogitsWarper: probs = softmax of the current set; a candidate is
// removed when p < epsilon AND its logit is below the min_keep-th largest logit. So p == epsilon is
// kept, and the min_keep most likely candidates always are, together with every candidate tied with
// the min_keep-th logit (HF's topk threshold keeps ties; contrast top_k, which keeps exactly k).
// epsilon <= 0 disables the stage. The set keeps its order; probs_valid is cleared when any is removed.
// llama.cpp has no epsilon sampler.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/validate.hpp>

#include <cstddef>
#include <vector>

namespace nexttok {

class epsilon_cutoff {
public:
    // Throws invalid_argument_error when epsilon is NaN.
    explicit epsilon_cutoff(float epsilon, std::size_t min_keep = 1) : epsilon_(epsilon), min_keep_(min_keep) {
        detail::require_not_nan(epsilon, "epsilon_cutoff", "epsilon");
    }

    NEXTTOK_DECL void apply(candidates& c);

    float epsilon() const noexcept { return epsilon_; }
    std::size_t min_keep() const noexcept { return min_keep_; }

private:
    float epsilon_;
    std::size_t min_keep_;
    std::vector<float> scratch_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/epsilon_cutoff.ipp>
#endif

// Locally typical sampling (Meister, Pimentel, Wiher & Cotterell 2023, "Locally Typical Sampling",
// TACL; arXiv 2202.00666): keep the tokens whose information content -log p is closest to the
// entropy H of the distribution, until their mass exceeds p.
//
// Reproduces llama.cpp's typical sampler (llama_sampler_typical_apply):
//   - p >= 1: no-op.
//   - probs = softmax of the current set (float), H = -sum p log p (float; terms with p = 0 are
//     skipped, where llama.cpp would produce NaN), score_i = |-log p_i - H|.
//   - candidates are ordered by score ascending; the cumulative probability is summed in that order and
//     the set is cut after the first position i where cum > p (strictly) and i + 1 >= min_keep.
//   - the result is left in that order (not sorted by logit: `sorted` is cleared), probs not renormalized.
// The engines disagree at the boundary: Hugging Face's TypicalLogitsWarper cuts at the first cum >= p
// and keeps every candidate tied in score with the last one kept. We follow llama.cpp: with four equal
// logits and p = 0.5, llama.cpp (and we) keep three, HF keeps all four. Ties in score (llama.cpp's
// std::sort leaves them unspecified) are broken by the candidates' sorted order (higher logit, then
// lower id first), so the result is defined.
// Cost: O(n log n). Scratch buffers are members: no allocation once warm. Not thread-safe.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/validate.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nexttok {

class typical_p {
public:
    // Throws invalid_argument_error when p is NaN.
    explicit typical_p(float p, std::size_t min_keep = 1) : p_(p), min_keep_(min_keep) {
        detail::require_not_nan(p, "typical_p", "p");
    }

    NEXTTOK_DECL void apply(candidates& c);

    float p() const noexcept { return p_; }
    std::size_t min_keep() const noexcept { return min_keep_; }

private:
    float p_;
    std::size_t min_keep_;
    // Scratch, (candidates) each.
    std::vector<float> score_;
    std::vector<std::uint32_t> order_;
    std::vector<token_id> ids_;
    std::vector<float> logits_, probs_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/typical_p.ipp>
#endif

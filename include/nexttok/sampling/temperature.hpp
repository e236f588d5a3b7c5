// Temperature scaling (Ackley, Hinton & Sejnowski 1985): logits / t, which sharpens (t < 1) or
// flattens (t > 1) the distribution the selector draws from.
//
// Reproduces llama.cpp's temp sampler (llama_sampler_temp_impl):
//   - t > 0: every logit is divided by t. Order is preserved, so `sorted` stays true unless two
//     distinct logits round to the same quotient (then the order is re-checked, see below).
//   - t <= 0: only the maximum logit survives (ties: the lowest id). llama.cpp sets the other logits
//     to -inf and keeps them in the array; we remove them. Every selector draws the same token either
//     way (a -inf logit has probability 0), and the surviving set has one candidate, so the chain
//     reports a log-probability of 0 (the limit t -> 0 is a point mass).
// probs_valid is cleared.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/validate.hpp>

#include <cstddef>

namespace nexttok {

class temperature {
public:
    // Throws invalid_argument_error when t is NaN.
    explicit temperature(float t) : t_(t) { detail::require_not_nan(t, "temperature", "t"); }

    NEXTTOK_DECL void apply(candidates& c) const;

    float t() const noexcept { return t_; }

private:
    NEXTTOK_DECL static void keep_only_max(candidates& c);

    float t_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/temperature.ipp>
#endif

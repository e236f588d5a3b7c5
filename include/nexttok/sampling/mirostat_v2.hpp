// Mirostat v2 (Basu et al. 2021, "Mirostat", ICLR, section on the simplified algorithm), a selector:
// keep the tokens whose surprise -log2 p is at most mu, draw one, and move mu towards the target
// surprise tau by the observed error.
//
// Reproduces llama.cpp's mirostat-v2 sampler (llama_sampler_mirostat_v2_apply):
//   - the set is sorted, probs = softmax; it is cut before the first candidate with -log2 p > mu (at
//     least one is kept); softmax over the survivors; draw;
//   - mu -= eta * (-log2 p_chosen - tau), p_chosen under the truncated distribution. mu starts at 2 tau.
// One candidate left: returned without drawing. The draw is our xoshiro256** walk (categorical.hpp).
// reset() restores mu and the seed. Not thread-safe. No distribution(), as mirostat v1 (mirostat.hpp).
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/validate.hpp>
#include <nexttok/sampling/rng.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>

namespace nexttok {

class mirostat_v2 {
public:
    // Throws invalid_argument_error for a NaN tau or eta.
    mirostat_v2(float tau, float eta, std::uint64_t seed)
            : tau_(tau), eta_(eta), seed_(seed), mu_(2.0f * tau), rng_(seed) {
        detail::require_not_nan(tau, "mirostat_v2", "tau");
        detail::require_not_nan(eta, "mirostat_v2", "eta");
    }

    NEXTTOK_DECL token_id select(candidates& c);

    void reset() noexcept {
        mu_ = 2.0f * tau_;
        rng_.seed(seed_);
    }

    float mu() const noexcept { return mu_; }
    float tau() const noexcept { return tau_; }
    float eta() const noexcept { return eta_; }

private:
    float tau_, eta_;
    std::uint64_t seed_;
    float mu_;
    xoshiro256ss rng_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/mirostat_v2.ipp>
#endif

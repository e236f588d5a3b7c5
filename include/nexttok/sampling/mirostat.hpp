// Mirostat v1 (Basu, Ramachandran, Keskar & Varshney 2021, "Mirostat: A Neural Text Decoding
// Algorithm that Directly Controls Perplexity", ICLR; arXiv 2007.14966), a selector: it truncates to
// the top k tokens with k chosen so that the expected surprise approaches tau, draws one, and adapts k
// through mu from the surprise it observed.
//
// Reproduces llama.cpp's mirostat sampler (llama_sampler_mirostat_apply):
//   - the set is sorted, probs = softmax; the Zipf exponent s_hat is estimated by least squares over
//     the m most likely tokens: t_i = ln((i + 2) / (i + 1)), b_i = ln(p_i / p_(i+1)), i < m - 1,
//     s_hat = sum(t_i b_i) / sum(t_i^2) (float);
//   - eps_hat = s_hat - 1, k = (eps_hat * 2^mu / (1 - n_vocab^-eps_hat))^(1 / s_hat), keep the top
//     max(int(k), 1) candidates (at most all: a non-finite k keeps all), softmax, draw;
//   - mu -= eta * (-log2 p_chosen - tau), p_chosen under the truncated distribution. mu starts at 2 tau.
// n_vocab: the vocabulary size in the formula; 0 uses the size of the candidate set at select(),
// which is the vocabulary when mirostat follows only penalties and temperature (llama.cpp's chain).
// One candidate: returned without drawing (surprise 0). The draw is our xoshiro256** inverse-CDF walk
// (categorical.hpp), not llama.cpp's std::discrete_distribution. reset() restores mu and the seed.
// No distribution() (concepts.hpp): select() truncates by mu and updates mu from the token it draws,
// in one call, so a chain ending in mirostat cannot state its distribution; speculative decoding
// refuses it.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/rng.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>

namespace nexttok {

class mirostat {
public:
    // Throws invalid_argument_error for a NaN tau or eta, or m < 1.
    NEXTTOK_DECL mirostat(float tau, float eta, std::uint64_t seed, std::int32_t m = 100, std::int64_t n_vocab = 0);

    NEXTTOK_DECL token_id select(candidates& c);

    void reset() noexcept {
        mu_ = 2.0f * tau_;
        rng_.seed(seed_);
    }

    float mu() const noexcept { return mu_; }
    std::size_t last_k() const noexcept { return last_k_; }
    float tau() const noexcept { return tau_; }
    float eta() const noexcept { return eta_; }

private:
    float tau_, eta_;
    std::int32_t m_;
    std::int64_t n_vocab_;
    std::uint64_t seed_;
    float mu_;
    std::size_t last_k_ = 0;
    xoshiro256ss rng_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/mirostat.ipp>
#endif

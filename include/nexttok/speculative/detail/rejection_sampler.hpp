// The verification of speculative decoding: modified rejection sampling (Leviathan, Kalman & Matias
// 2023, "Fast Inference from Transformers via Speculative Decoding", ICML, Algorithm 1 and Theorem 1;
// Chen et al. 2023, "Accelerating Large Language Model Decoding with Speculative Sampling", Algorithm
// 2). For a drafted token x drawn from q, with p the target's distribution at that position:
//   accept x with probability min(1, p(x) / q(x))    (one uniform u: accept when u q(x) < p(x));
//   on rejection draw from normalize(max(0, p - q)),
// so that the token kept is distributed exactly as p. After every draft of a round was accepted, the
// next token is drawn from p itself. A one-hot p (greedy, or one survivor) needs no draw: x is kept
// when it is p's token, which is the token otherwise; so greedy verification is "accept while the
// target's argmax equals the draft" and consumes no randomness.
//
// p and q are float probabilities after the sampler's processors; the arithmetic of the decision is
// double. When p == q bitwise (a draft identical to the target) every draft is accepted.
//
// Owns two scratch rows of vocab_size floats and its random stream (xoshiro256**, seeded); allocates
// nothing per call. Not thread-safe.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/sampling/rng.hpp>
#include <nexttok/sampling/token_distribution.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nexttok::detail {

// Uniform on [0, 1) with 53 bits: one output of the stream.
inline double uniform_double(xoshiro256ss& rng) noexcept { return static_cast<double>(rng.next() >> 11) * 0x1.0p-53; }

// Position i with probability w[i] / sum(w), by an inverse-CDF walk in array order (sums in double);
// positions of weight 0 are never drawn. One value of the stream. Precondition: some w[i] > 0.
NEXTTOK_DECL std::size_t draw_weighted(std::span<const float> w, xoshiro256ss& rng) noexcept;

class rejection_sampler {
public:
    rejection_sampler(std::int64_t vocab_size, std::uint64_t seed)
            : p_(static_cast<std::size_t>(vocab_size)), residual_(static_cast<std::size_t>(vocab_size)), rng_(seed) {}

    // Verifies draft token x against the target's p. q: the draft's distribution as a dense row
    // (vocab_size), or empty for a deterministic drafter (q one-hot on x). Sets `accepted` and returns
    // x when accepted, else the token drawn from the residual.
    NEXTTOK_DECL token_id verify(token_distribution p, token_id x, std::span<const float> q, bool& accepted);

    // A token drawn from p (after a round's drafts were all accepted, or when there were none).
    NEXTTOK_DECL token_id draw(token_distribution p);

private:
    // p_ = p as a dense row over the vocabulary.
    NEXTTOK_DECL void scatter_(token_distribution p);

    std::vector<float> p_;         // (vocab_size) the target's distribution at the position verified
    std::vector<float> residual_;  // (vocab_size) max(0, p - q)
    xoshiro256ss rng_;
};

}  // namespace nexttok::detail

#if NEXTTOK_HEADER_ONLY
#include <nexttok/speculative/impl/rejection_sampler.ipp>
#endif

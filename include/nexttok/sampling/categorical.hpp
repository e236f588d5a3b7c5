// Categorical selection: draws one candidate with probability softmax(logits) over the current set,
// from a seeded xoshiro256** stream (llama.cpp's "dist" sampler, llama_sampler_dist_apply).
//
// Reproduced from llama.cpp:
//   - empty set: returns no_token. One candidate: returns it without drawing (the stream does not
//     advance) and sets its probability to 1.
//   - otherwise probs = softmax (float, max-subtracted) and the draw is an inverse-CDF walk in
//     array order: u uniform on [0, 1), target = u * sum(probs) (accumulated in double), the first
//     candidate whose running sum (double) exceeds the target is chosen. probs stay valid.
//   - reset() reseeds the stream with the construction seed, so the sequence starts over.
// Differences, on purpose: llama.cpp draws with std::mt19937 + std::uniform_real_distribution, whose
// output is library-specific; we use xoshiro256** and a 24-bit uniform float (rng.hpp), identical on
// every platform. llama.cpp stops at running sum >= target, which for u = 0 can pick a leading
// zero-probability candidate (a -inf logit); we use >, so a candidate of probability 0 is never drawn.
// distribution(): the softmax it draws from (probs, computed without drawing).
// Same seed and same candidate sets -> same tokens (the softmax uses std::exp, so bitwise identity
// across platforms also needs the same libm).
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/rng.hpp>
#include <nexttok/sampling/token_distribution.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>

namespace nexttok {

class categorical {
public:
    explicit categorical(std::uint64_t seed) noexcept : seed_(seed), rng_(seed) {}

    NEXTTOK_DECL token_id select(candidates& c);

    token_distribution distribution(candidates& c) const {
        c.softmax();
        return {c.ids, c.probs};
    }

    void reset() noexcept { rng_.seed(seed_); }

    std::uint64_t seed() const noexcept { return seed_; }
    const xoshiro256ss& rng() const noexcept { return rng_; }

private:
    std::uint64_t seed_;
    xoshiro256ss rng_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/categorical.ipp>
#endif

// XTC, "Exclude Top Choices" (p-e-w, text-generation-webui PR #6335, 2024), as llama.cpp's xtc sampler
// (llama_sample_xtc_apply): with probability `probability`, remove every candidate at least as likely
// as `threshold` except the least likely of them, steering away from the most predictable tokens
// while keeping one viable choice.
//   - no-op when probability <= 0, threshold > 0.5 (then at most one candidate can pass) or fewer
//     than two candidates; no random number is drawn then.
//   - otherwise one uniform u in [0, 1) is drawn; u > probability: no-op.
//   - the set is sorted, probs = softmax; with m = the number of leading candidates with p >= threshold,
//     the first m - 1 are removed when m >= 2 and the remainder keeps >= min_keep candidates.
// The draw uses our xoshiro256** stream (llama.cpp: std::mt19937 with uniform_real_distribution),
// seeded independently of the categorical selector's: make_sampler derives XTC's seed from the options'
// seed, where llama.cpp gives both generators the same seed and so correlates their draws.
// reset() reseeds. Copyable (copies the stream position); not thread-safe. Because apply() draws, a
// chain with XTC cannot state its distribution without drawing (draws_random_numbers, concepts.hpp):
// speculative decoding refuses it.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/validate.hpp>
#include <nexttok/sampling/rng.hpp>

#include <cstddef>
#include <cstdint>

namespace nexttok {

class xtc {
public:
    static constexpr bool draws_random_numbers = true;

    // Throws invalid_argument_error when probability or threshold is NaN.
    xtc(float probability, float threshold, std::size_t min_keep, std::uint64_t seed)
            : probability_(probability), threshold_(threshold), min_keep_(min_keep), seed_(seed), rng_(seed) {
        detail::require_not_nan(probability, "xtc", "probability");
        detail::require_not_nan(threshold, "xtc", "threshold");
    }

    NEXTTOK_DECL void apply(candidates& c);

    void reset() noexcept { rng_.seed(seed_); }

    float probability() const noexcept { return probability_; }
    float threshold() const noexcept { return threshold_; }

private:
    float probability_, threshold_;
    std::size_t min_keep_;
    std::uint64_t seed_;
    xoshiro256ss rng_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/xtc.ipp>
#endif

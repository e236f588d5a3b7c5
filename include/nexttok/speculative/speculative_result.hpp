// What generate_speculative() returns: everything generate() does (the tokens, the text, the finish
// reason, log-probabilities, timings) and how the speculation went.
#pragma once

#include <nexttok/generation/generation_result.hpp>

#include <cstdint>

namespace nexttok {

struct speculative_stats {
    // Drafted tokens the target examined. When a stopping criterion ends generation inside an accepted
    // run, the drafts after that token are not counted (they were neither accepted nor rejected).
    std::int64_t n_drafted = 0;
    std::int64_t n_accepted = 0;      // of those, the tokens kept
    std::int64_t n_rounds = 0;        // draft-and-verify rounds: one target forward call each
    std::int64_t n_target_calls = 0;  // n_rounds, plus the prefill when the prompt has 2 tokens or more

    // n_accepted / n_drafted; 0 when nothing was drafted.
    double acceptance_rate() const noexcept {
        return n_drafted > 0 ? static_cast<double>(n_accepted) / static_cast<double>(n_drafted) : 0.0;
    }
};

// Derives from generation_result, so r.tokens, r.text, r.reason... read as generate()'s. timings count
// as generate() does (n_decode_steps: generated tokens but the first), not forward calls: those are in
// `speculation`.
struct speculative_result : generation_result {
    speculative_stats speculation;

    // Generated tokens per round (the figure of merit E of the speedup); 0 before any round.
    double tokens_per_round() const noexcept {
        return speculation.n_rounds > 0 ? static_cast<double>(tokens.size()) / static_cast<double>(speculation.n_rounds)
                                        : 0.0;
    }
};

}  // namespace nexttok

// How speculative decoding drafts: how many tokens per round (fixed, or adapted to how many the target
// keeps), whether a model drafter samples or takes its most likely token, and the seed of the draws.
// Each field says its default; the names of examples/generate's flags are given where they exist.
#pragma once

#include <nexttok/error.hpp>

#include <cstdint>
#include <string>

namespace nexttok {

struct speculative_options {
    // 8: most tokens drafted per round (--draft-max); every round drafts this many when adaptive is
    // false. Must be in [1, 1024].
    std::int64_t draft_max = 8;
    // 1: fewest tokens drafted per round when k adapts (--draft-min). Must be in [1, draft_max].
    std::int64_t draft_min = 1;
    // true: k starts at draft_max, grows by 2 after a round whose drafts were all accepted and shrinks
    // by 1 after a rejection, within [draft_min, draft_max] (Hugging Face transformers' "heuristic"
    // schedule of num_assistant_tokens); false: k = draft_max every round.
    bool adaptive = true;
    // false: a model drafter samples each token from its distribution q after the sampler's processors
    // (the acceptance rate is then as high as the draft allows); true: it proposes its most likely
    // token (q one-hot: no draw in the draft). Greedy generation drafts greedily either way.
    bool greedy_draft = false;
    // 0: the seed of the verification's draws (acceptance, the residual and the bonus token) and of
    // the draft's, for the overloads that take a sampler; generate_speculative(..., generation_options,
    // ...) takes options.sampling.seed instead. Same seed and inputs, same tokens, whatever the number
    // of threads.
    std::uint64_t seed = 0;

    // Throws invalid_argument_error naming the first bad field and its value.
    void validate() const {
        if (draft_max < 1 || draft_max > 1024) fail_("draft_max", std::to_string(draft_max), "must be in [1, 1024]");
        if (draft_min < 1) fail_("draft_min", std::to_string(draft_min), "must be >= 1");
        if (draft_min > draft_max)
            fail_("draft_min", std::to_string(draft_min), "must be <= draft_max = " + std::to_string(draft_max));
    }

private:
    [[noreturn]] static void fail_(const char* field, const std::string& value, const std::string& rule) {
        throw invalid_argument_error(std::string("speculative_options: ") + field + " = " + value + ": " + rule);
    }
};

}  // namespace nexttok

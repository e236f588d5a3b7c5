// The pick a model drafter calls for each drafted token (drafter.hpp): the target sampler's processors
// on the draft's logits give q (distribution()), a token is drawn from q (or its most likely token
// taken, with greedy_draft), and q is kept as a dense row for the verification. The processors see the
// drafted tokens (choose()) as they will see them in the target if they are kept, so history-based
// ones (penalties, DRY, no-repeat-n-gram) give q its full meaning.
//
// The sampler is copied from the target's at the first pick of each round (the draft's state must
// start from the tokens kept so far): for a type-erased sampler that copy allocates (one clone per
// stage), the only allocation of a round. A deterministic drafter never picks, so never copies.
//
// Owns the copy, (max_tokens, vocab_size) floats of q rows and its random stream. Not thread-safe.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/sampling/rng.hpp>
#include <nexttok/sampling/token_distribution.hpp>
#include <nexttok/speculative/detail/rejection_sampler.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nexttok::detail {

template <distribution_sampler Sampler>
class draft_picker {
public:
    draft_picker(std::int64_t vocab_size, std::int64_t max_tokens, bool greedy_draft, std::uint64_t seed)
            : vocab_size_(static_cast<std::size_t>(vocab_size)),
              max_tokens_(max_tokens),
              q_(static_cast<std::size_t>(max_tokens) * static_cast<std::size_t>(vocab_size)),
              greedy_(greedy_draft),
              rng_(seed) {}

    // A new round: drafts continue from the state of `target` (referenced until the next round).
    void begin_round(const Sampler& target) noexcept {
        target_ = &target;
        n_picked_ = 0;
    }

    // Throws invalid_argument_error when called more than max_tokens times in a round (a drafter that
    // proposes more than it was asked for).
    token_id operator()(std::span<const float> logits) {
        if (n_picked_ >= max_tokens_)
            throw invalid_argument_error("draft_picker: the drafter picked more than the " +
                                         std::to_string(max_tokens_) + " tokens it was asked for");
        if (n_picked_ == 0) {
            if (copy_)
                *copy_ = *target_;
            else
                copy_.emplace(*target_);
        }
        const token_distribution q = copy_->distribution(logits);
        const std::size_t pos = q.size() == 1 ? 0 : greedy_ ? most_likely_(q) : draw_weighted(q.probs, rng_);
        const token_id t = q.ids[pos];
        float* row = q_.data() + static_cast<std::size_t>(n_picked_) * vocab_size_;
        std::fill(row, row + vocab_size_, 0.0f);
        if (greedy_ || q.size() == 1)
            row[static_cast<std::size_t>(t)] = 1.0f;
        else
            for (std::size_t i = 0; i < q.size(); ++i) row[static_cast<std::size_t>(q.ids[i])] = q.probs[i];
        copy_->choose(t);
        ++n_picked_;
        return t;
    }

    // Picks of this round, and the distribution the i-th was drawn from (vocab_size).
    std::int64_t n_picked() const noexcept { return n_picked_; }
    std::span<const float> q(std::int64_t i) const noexcept {
        return {q_.data() + static_cast<std::size_t>(i) * vocab_size_, vocab_size_};
    }

private:
    // The most probable entry, the lower id among ties.
    static std::size_t most_likely_(token_distribution q) noexcept {
        std::size_t best = 0;
        for (std::size_t i = 1; i < q.size(); ++i)
            if (q.probs[i] > q.probs[best] || (q.probs[i] == q.probs[best] && q.ids[i] < q.ids[best])) best = i;
        return best;
    }

    std::size_t vocab_size_;
    std::int64_t max_tokens_;
    std::vector<float> q_;  // (max_tokens, vocab_size): row i is the i-th pick's q
    bool greedy_;
    xoshiro256ss rng_;
    const Sampler* target_ = nullptr;  // non-owning
    std::optional<Sampler> copy_;      // the draft's sampler state during a round
    std::int64_t n_picked_ = 0;
};

}  // namespace nexttok::detail

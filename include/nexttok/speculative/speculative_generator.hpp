// One speculative generation, round by round: what generate_speculative() drives, exposed so that a
// caller (a test, a benchmark) can look at the caches and statistics between rounds.
//
//   speculative_generator g(dec, cache, drafter, &tok, prompt, sample, stop, on_token, options);
//   if (g.start()) while (g.step()) {}
//   speculative_result r = g.finish();
//
// start(): the prompt but its last token runs in one forward call (no logits), so that every round,
// the first included, has the same shape. step(), one round:
//   1. the drafter proposes up to k tokens x1..xm after the sequence s (length L);
//   2. the target runs [s[L-1], x1..xm] at positions L-1.. in ONE forward call with logits for all
//      m + 1 rows (row i: the distribution after x1..xi);
//   3. row by row, the sampler states p (distribution()), the rejection sampler keeps x(i+1) or
//      draws the replacement (detail/rejection_sampler.hpp), the sampler takes the token (choose()),
//      and sequence_generator::next_token() records, detokenizes, checks the stopping criteria and
//      streams it: exactly generate()'s per-token logic, so criteria and callback see the kept tokens
//      one at a time and a stop inside a run ends generation at that token. The round ends at the
//      first rejection (its replacement is the round's last token), or after xm with one more token
//      drawn from row m;
//   4. rollback: the target's cache and the drafter keep the positions of the kept tokens but the
//      last (which the next round runs first): cache.truncate(L' - 1) with L' the new length.
// k adapts as speculative_options says. Rounds never draft beyond the cache's capacity, nor beyond
// max_new_tokens when it is given.
//
// Exactness: the kept tokens are distributed as plain sampling with the same sampler (the processors
// see every kept token through choose(), as through sample()); with a greedy sampler they are
// generate()'s tokens. Determinism: the draws come from two seeded streams (verification, draft) and
// the decoder's logits do not depend on the thread count or on how tokens are grouped in a call.
//
// Ownership: refers to the decoder, the cache, the drafter, the tokenizer, the sampler, the criteria
// and the callback (all must outlive it). Buffers are sized at construction: logits for draft_max + 1
// rows, draft_max dense q rows; a round allocates only through the sampler copy a model drafter needs
// (draft_picker.hpp) and sequence_generator's short strings. Not thread-safe; not copyable.
#pragma once

#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/detail/check_logits.hpp>
#include <nexttok/detail/loop_settings.hpp>
#include <nexttok/detail/splitmix64.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/sequence_generator.hpp>
#include <nexttok/generation/token_decoder.hpp>
#include <nexttok/generation/token_event.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/speculative/detail/draft_picker.hpp>
#include <nexttok/speculative/detail/rejection_sampler.hpp>
#include <nexttok/speculative/drafter.hpp>
#include <nexttok/speculative/speculative_options.hpp>
#include <nexttok/speculative/speculative_result.hpp>
#include <nexttok/stopping/concepts.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace nexttok {

namespace detail {

// The draft's stream: one splitmix64 step away from the verification's seed.
inline std::uint64_t draft_seed(std::uint64_t seed) noexcept {
    std::uint64_t state = seed ^ 0x4452414654ULL;  // "DRAFT"
    return splitmix64_next(state);
}

}  // namespace detail

template <class Decoder, class Cache, drafter Drafter, distribution_sampler Sampler, stopping_criterion Stop>
requires token_decoder<Decoder, Cache> && rewindable_kv_storage<Cache, typename Decoder::scalar_type> &&
    std::copyable<Sampler>
class speculative_generator {
public:
    // tok: null for tokens only (no text). max_new_tokens: a bound the criteria enforce anyway, given
    // so that rounds do not draft tokens that could never be kept (-1: none). n_logprobs: the top
    // alternatives recorded per token, as generation_options::n_logprobs. Throws
    // invalid_argument_error for bad options, a sampler that cannot state its distribution, a drafter
    // of another vocabulary, or an empty prompt or one longer than the cache.
    speculative_generator(Decoder& dec, Cache& cache, Drafter& draft, const tokenizer* tok,
                          std::span<const token_id> prompt, Sampler& sample, Stop& stop, const token_callback& on_token,
                          const speculative_options& options, std::int64_t max_new_tokens = -1,
                          std::int64_t n_logprobs = 0)
            : dec_(&dec),
              cache_(&cache),
              draft_(&draft),
              sample_(&sample),
              options_(validated_(options, sample, prompt.size(), cache.capacity())),
              vocab_size_(dec.config().vocab_size),
              max_new_tokens_(max_new_tokens),
              gen_(tok, prompt, sample, stop, on_token, cache.capacity(),
                   detail::loop_settings{.n_logprobs = n_logprobs}),
              logits_(static_cast<std::size_t>((options_.draft_max + 1) * vocab_size_)),
              picker_(vocab_size_, options_.draft_max, options_.greedy_draft, detail::draft_seed(options_.seed)),
              verifier_(vocab_size_, options_.seed),
              k_(options_.draft_max) {
        draft.check_vocabulary(vocab_size_, detail::decoder_name(dec));
        drafted_.reserve(static_cast<std::size_t>(options_.draft_max));
        batch_.reserve(static_cast<std::size_t>(options_.draft_max + 1));
    }

    speculative_generator(Decoder&, Cache&, Drafter&, const tokenizer*, std::span<const token_id>, Sampler&, Stop&,
                          token_callback&&, const speculative_options&, std::int64_t = -1,
                          std::int64_t = 0) = delete;  // would dangle

    speculative_generator(const speculative_generator&) = delete;
    speculative_generator& operator=(const speculative_generator&) = delete;

    // Clears the cache, starts the drafter and the sequence (sequence_generator::start()), and runs
    // the prompt but its last token. True when rounds follow; false when generation already ended.
    bool start() {
        cache_->clear();
        if (!gen_.start()) return false;
        const std::span<const token_id> prompt(gen_.sequence());
        const auto n_prompt = static_cast<std::int64_t>(prompt.size());
        dec_->reserve(std::max(n_prompt - 1, options_.draft_max + 1), cache_->capacity());
        draft_->begin(prompt);
        if (n_prompt > 1) {
            dec_->forward(prompt.first(prompt.size() - 1), 0, *cache_, logits_, logits_for::none);
            ++stats_.n_target_calls;
        }
        return true;
    }

    // One draft-and-verify round (see the top of the file). True when another round follows.
    // Precondition: start() returned true and no step() returned false.
    bool step() {
        const std::span<const token_id> seq(gen_.sequence());
        const auto n_seq = static_cast<std::int64_t>(seq.size());
        const std::int64_t k = round_length_(n_seq);

        drafted_.clear();
        picker_.begin_round(*sample_);
        if (k > 0) draft_->propose(seq, k, picker_, drafted_);
        const auto m = static_cast<std::int64_t>(drafted_.size());
        if (m > k || (picker_.n_picked() != 0 && picker_.n_picked() != m))
            throw invalid_argument_error("speculative_generator: the drafter proposed " + std::to_string(m) +
                                         " tokens (" + std::to_string(picker_.n_picked()) +
                                         " picked) when asked for at most " + std::to_string(k) +
                                         ", all picked or none");
        const bool dense_q = picker_.n_picked() > 0;

        batch_.assign(1, seq.back());
        batch_.insert(batch_.end(), drafted_.begin(), drafted_.end());
        dec_->forward(batch_, n_seq - 1, *cache_, logits_, m > 0 ? logits_for::all : logits_for::last);
        ++stats_.n_target_calls;
        ++stats_.n_rounds;

        bool more = true;
        std::int64_t n_examined = 0, n_kept = 0;
        for (std::int64_t i = 0; i <= m && more; ++i) {
            const std::span<const float> row(logits_.data() + i * vocab_size_, static_cast<std::size_t>(vocab_size_));
            detail::check_logits(row, n_seq - 1 + i, "speculative decoding");
            const token_distribution p = sample_->distribution(row);
            bool accepted = false;
            token_id t;
            if (i < m) {
                ++n_examined;
                t = verifier_.verify(p, drafted_[static_cast<std::size_t>(i)],
                                     dense_q ? picker_.q(i) : std::span<const float>(), accepted);
            } else {
                t = verifier_.draw(p);
            }
            sample_->choose(t);
            more = gen_.next_token(t, row);
            if (!accepted) break;
            ++n_kept;
        }
        stats_.n_drafted += n_examined;
        stats_.n_accepted += n_kept;

        // Rollback: both caches keep the kept tokens' positions but the newest one's.
        const auto n_cached = static_cast<std::int64_t>(gen_.sequence().size()) - 1;
        cache_->truncate(n_cached);
        draft_->rollback(n_cached);

        if (options_.adaptive && more && m > 0) {
            if (n_kept == m)
                k_ = std::min(k_ + 2, options_.draft_max);
            else
                k_ = std::max(k_ - 1, options_.draft_min);
        }
        return more;
    }

    // The result (sequence_generator::finish(), with the statistics). Precondition: generation ended
    // (start() or step() returned false). Call once.
    speculative_result finish() {
        speculative_result r;
        static_cast<generation_result&>(r) = gen_.finish();
        r.speculation = stats_;
        return r;
    }

    // Prompt + kept tokens; the target's cache holds the positions of all but the last.
    const std::vector<token_id>& sequence() const noexcept { return gen_.sequence(); }
    const speculative_stats& stats() const noexcept { return stats_; }
    // Tokens the next round drafts at most (before the capacity and max_new_tokens bounds).
    std::int64_t draft_length() const noexcept { return k_; }
    bool finished() const noexcept { return gen_.finished(); }

private:
    static const speculative_options& validated_(const speculative_options& options, const Sampler& sample,
                                                 std::size_t n_prompt, std::int64_t capacity) {
        detail::check_prompt(n_prompt, capacity, "generate_speculative");
        options.validate();
        if (!sample.has_distribution())
            throw invalid_argument_error(
                "generate_speculative: the sampler cannot state the distribution it draws from "
                "(mirostat, XTC, or a stage without distribution()), which exact verification needs");
        return options;
    }

    // This round's k: the positions left in the cache (the target runs positions n_seq - 1 ..
    // n_seq - 1 + k), and the tokens left to generate but one (a round adds one more than it keeps).
    std::int64_t round_length_(std::int64_t n_seq) const noexcept {
        std::int64_t k = std::min(k_, cache_->capacity() - n_seq);
        if (max_new_tokens_ >= 0) k = std::min(k, max_new_tokens_ - gen_.n_generated() - 1);
        return std::max<std::int64_t>(k, 0);
    }

    Decoder* dec_;     // non-owning
    Cache* cache_;     // non-owning
    Drafter* draft_;   // non-owning
    Sampler* sample_;  // non-owning
    speculative_options options_;
    std::int64_t vocab_size_;
    std::int64_t max_new_tokens_;
    sequence_generator<Sampler, Stop> gen_;
    std::vector<float> logits_;      // (draft_max + 1, vocab_size): the target's rows of a round
    std::vector<token_id> drafted_;  // (<= draft_max) this round's drafts
    std::vector<token_id> batch_;    // (<= draft_max + 1) the last kept token and the drafts
    detail::draft_picker<Sampler> picker_;
    detail::rejection_sampler verifier_;
    speculative_stats stats_;
    std::int64_t k_;  // drafts per round, adapted
};

}  // namespace nexttok

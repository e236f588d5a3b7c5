// A drafter that runs a smaller model of the same vocabulary (or the same model quantized more
// coarsely: "self-speculation") on its own KV cache. Each round it first runs the tokens of the
// sequence its cache does not hold yet (after a round: the last kept draft and the target's token; at
// the start: the prompt) in one forward call, then one token per drafted position; every token comes
// from the generation loop's pick (the target sampler's processors on the draft's logits, then a draw
// or the argmax), so q is the distribution after the same processors as the target's p.
//
// The cache mirrors the sequence: after rollback(n) it holds at most the sequence's first n positions,
// exactly the ones the target's cache holds (or fewer: the last drafted token is never run).
//
// Ownership: refers to the decoder and the cache (both must outlive it; the decoder may be the
// target's own decoder object, used with this second cache, since a round runs one model after the
// other). Owns one logits row. Not thread-safe.
#pragma once

#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/detail/check_logits.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/token_decoder.hpp>
#include <nexttok/speculative/drafter.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

template <class Decoder, class Cache>
requires token_decoder<Decoder, Cache> && rewindable_kv_storage<Cache, typename Decoder::scalar_type>
class model_drafter {
public:
    model_drafter(Decoder& dec, Cache& cache)
            : dec_(&dec), cache_(&cache), logits_(static_cast<std::size_t>(dec.config().vocab_size)) {}

    // Throws invalid_argument_error naming both models unless the vocabularies have the same size.
    void check_vocabulary(std::int64_t target_vocab_size, std::string_view target_name) const {
        const std::int64_t own = dec_->config().vocab_size;
        if (own == target_vocab_size) return;
        throw invalid_argument_error("model_drafter: the draft model " + detail::decoder_name(*dec_) +
                                     " has vocab_size " + std::to_string(own) + ", the target " +
                                     std::string(target_name) + " has vocab_size " + std::to_string(target_vocab_size) +
                                     ": a draft must share the target's vocabulary");
    }

    // A new generation: the cache is cleared and the decoder's scratch sized for the prompt.
    void begin(std::span<const token_id> prompt) {
        cache_->clear();
        dec_->reserve(static_cast<std::int64_t>(prompt.size()), cache_->capacity());
    }

    // Appends at most k tokens, fewer when the cache cannot hold the positions (none when it cannot
    // hold the sequence). Runs sequence[cache.size()..) in one call, then k - 1 single tokens.
    template <class Pick>
    void propose(std::span<const token_id> sequence, std::int64_t k, Pick& pick, std::vector<token_id>& out) {
        const auto n_seq = static_cast<std::int64_t>(sequence.size());
        // The drafts run at positions n_seq .. n_seq + k - 2 (the last one is not run).
        k = std::min(k, cache_->capacity() - n_seq + 1);
        if (k <= 0 || n_seq == 0) return;
        const std::int64_t n_cached = std::min(cache_->size(), n_seq - 1);
        cache_->truncate(n_cached);
        dec_->forward(sequence.subspan(static_cast<std::size_t>(n_cached)), n_cached, *cache_, logits_,
                      logits_for::last);
        for (std::int64_t i = 0; i < k; ++i) {
            detail::check_logits(logits_, n_seq - 1 + i, "speculative decoding: the draft model");
            const token_id t = pick(std::span<const float>(logits_));
            out.push_back(t);
            if (i + 1 < k)
                dec_->forward(std::span<const token_id>(&out.back(), 1), n_seq + i, *cache_, logits_, logits_for::last);
        }
    }

    // Keeps the cache's first n positions (all of them when it holds fewer).
    void rollback(std::int64_t n) { cache_->truncate(n); }

    Decoder& draft_decoder() const noexcept { return *dec_; }
    Cache& cache() const noexcept { return *cache_; }

private:
    Decoder* dec_;               // non-owning
    Cache* cache_;               // non-owning
    std::vector<float> logits_;  // (vocab_size): the draft's next-token logits
};

}  // namespace nexttok

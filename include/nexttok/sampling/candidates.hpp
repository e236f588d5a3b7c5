// The candidate set that flows through a sampler chain: the tokens still in play, their (processed)
// logits and, when computed, their probabilities. Structure of arrays, as llama.cpp's
// llama_token_data_array but with three parallel vectors instead of an array of {id, logit, p}.
//
// Order. "sorted" means: logit descending, ties broken by the lower token id first. Because token
// ids are unique this key is a strict total order, so every sort or partial sort here has exactly one
// result whatever the algorithm or the standard library; it equals a stable sort by logit of a set
// held in id order (the order assign() produces). llama.cpp sorts with std::partial_sort and a bucket
// sort and leaves ties in unspecified order; we define them. Operations that do not sort keep the
// current relative order (filters compact in place), so an unsorted set stays in id order unless a
// user processor permutes it.
//
// Memory. assign() sizes every buffer, scratch included, to the vocabulary on the first call; later
// calls of the same (or a smaller) size never allocate, so a chain can own one candidates object and
// reuse it for every token. Not thread-safe: one chain, one thread at a time.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace nexttok {

struct candidates {
    // Parallel arrays, one entry per candidate: (size()) each, always the same length.
    std::vector<token_id> ids;
    std::vector<float> logits;
    std::vector<float> probs;  // meaningful only while probs_valid
    // True when the entries are in the order described above (logit desc, then id asc).
    bool sorted = false;
    // True when probs == softmax(logits) over exactly the current set. Anything that changes a logit
    // or removes a candidate clears it; sorting keeps it (probs move with their entries).
    bool probs_valid = false;

    // Loads a fresh set: ids 0..V-1 with the given logits (V = vocab_logits.size()), unsorted, no
    // probabilities. Precondition: no logit is NaN (checked by a debug assertion only, hot path).
    NEXTTOK_DECL void assign(std::span<const float> vocab_logits);

    std::size_t size() const noexcept { return ids.size(); }
    bool empty() const noexcept { return ids.empty(); }

    // probs = softmax(logits) over the current set, in float with the maximum subtracted first
    // (llama.cpp's llama_sampler_softmax_impl, without its sort). Summation runs in array order.
    NEXTTOK_DECL void softmax();

    // Largest logit of the current set; -inf when empty.
    float max_logit() const noexcept {
        if (empty()) return -std::numeric_limits<float>::infinity();
        if (sorted) return logits[0];
        return *std::max_element(logits.begin(), logits.end());
    }

    // Position of the first candidate in sorted order (maximum logit, lowest id among ties);
    // size() when empty. O(n) unless already sorted.
    std::size_t argmax() const noexcept {
        if (empty()) return size();
        if (sorted) return 0;
        std::size_t best = 0;
        for (std::size_t i = 1; i < size(); ++i)
            if (ranks_before_(i, best)) best = i;
        return best;
    }

    // Position of token `id` in the current set, or size() when absent. O(1) while the set is still the
    // whole vocabulary in id order (ids[id] == id, as assign() leaves it), O(n) otherwise.
    std::size_t position_of(token_id id) const noexcept {
        const auto i = static_cast<std::size_t>(id);
        if (id >= 0 && i < size() && ids[i] == id) return i;
        return static_cast<std::size_t>(std::find(ids.begin(), ids.end(), id) - ids.begin());
    }

    // Sorts the whole set into the order above. O(n log n); no-op when already sorted.
    NEXTTOK_DECL void sort();

    // Puts the n first entries of the sorted order at the front, in order, and leaves the others
    // behind them in their previous relative order (so the result is defined, not library-dependent).
    // O(n_total + n log n). Sets `sorted` only when n covers the whole set.
    NEXTTOK_DECL void sort_prefix(std::size_t n);

    // Keeps the k first entries of the sorted order, sorted (llama.cpp's top-k partial sort).
    // k >= size() sorts everything and removes nothing. O(n + k log k).
    NEXTTOK_DECL void keep_top(std::size_t k);

    // Keeps the first n entries of the current order (never allocates: erase, not resize).
    void truncate(std::size_t n) {
        if (n >= size()) return;
        const auto cut = static_cast<std::ptrdiff_t>(n);
        ids.erase(ids.begin() + cut, ids.end());
        logits.erase(logits.begin() + cut, logits.end());
        probs.erase(probs.begin() + cut, probs.end());
        probs_valid = false;
    }

    // Keeps the candidates at the positions where keep(position) is true, in their current order
    // (a sorted set stays sorted). keep(i) is called once per position, in increasing order; when it
    // is called, ids[i] and logits[i] still hold candidate i (compaction only writes below i).
    template <class Keep>
    void keep_if(Keep keep) {
        std::size_t out = 0;
        for (std::size_t i = 0; i < size(); ++i) {
            if (!keep(i)) continue;
            if (out != i) {
                ids[out] = ids[i];
                logits[out] = logits[i];
                probs[out] = probs[i];
            }
            ++out;
        }
        truncate(out);
    }

private:
    // Scratch for sorting: a permutation of positions, and the gathered arrays it is applied into
    // (swapped with the public vectors afterwards). Sized to the vocabulary by assign().
    std::vector<std::uint32_t> order_;
    std::vector<token_id> ids_scratch_;
    std::vector<float> logits_scratch_;
    std::vector<float> probs_scratch_;

    NEXTTOK_DECL void reserve_(std::size_t n);

    // True when position a comes before position b in the sorted order.
    bool ranks_before_(std::size_t a, std::size_t b) const noexcept {
        return logits[a] > logits[b] || (logits[a] == logits[b] && ids[a] < ids[b]);
    }
    struct rank_order_ {
        const candidates* c;
        bool operator()(std::uint32_t a, std::uint32_t b) const noexcept { return c->ranks_before_(a, b); }
    };

    NEXTTOK_DECL void fill_order_();

    // order_[0..n) = the n top positions, in sorted order; order_[n..) unspecified. Precondition:
    // 0 < n < size().
    NEXTTOK_DECL void select_top_(std::size_t n);

    // For n much smaller than the set (top-k 40 of a 128k vocabulary): one pass keeping a heap of the
    // n best, whose root is the worst of them. Most candidates fail one float comparison against the
    // root's logit, so this costs O(size) cheap steps instead of nth_element's indirect shuffling.
    static constexpr std::size_t heap_ratio_ = 8;
    NEXTTOK_DECL void select_top_heap_(std::size_t n);

    // The set becomes entries order_[0..n_out), in that order.
    NEXTTOK_DECL void gather_(std::size_t n_out);
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/candidates.ipp>
#endif

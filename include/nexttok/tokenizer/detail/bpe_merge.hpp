// The ranked merge of byte-level BPE over one pre-token, as GPT-2's encoder.py, HF tokenizers and
// llama.cpp's llm_tokenizer_bpe_session do it: start from one symbol per byte, then repeatedly merge
// the adjacent pair whose merge rule has the lowest rank (ties: the leftmost pair), until no adjacent
// pair has a rule. Rules are looked up by token id pairs, not by strings.
//
// Cost: O(n log n) for a word of n bytes, with a heap of candidate pairs that goes stale lazily.
// The scratch buffers live in a bpe_word_merger made once per encode call and reused for every word.
#pragma once

#include <nexttok/tokenizer/bpe_merge.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace nexttok::detail {

// (left, right) -> (rank, result). A pair listed twice keeps its first (lowest) rank, as llama.cpp
// does (encoder.py and HF keep the last; the merge lists of real models list each pair once);
// a rule whose left or right is no_token is a placeholder that keeps the ranks of the others.
class bpe_ranks {
public:
    struct entry {
        std::int32_t rank;
        token_id result;
    };

    explicit bpe_ranks(const std::vector<bpe_merge>& merges) {
        map_.reserve(merges.size());
        for (std::size_t i = 0; i < merges.size(); ++i)
            if (merges[i].left != no_token && merges[i].right != no_token)
                map_.try_emplace(key(merges[i].left, merges[i].right),
                                 entry{static_cast<std::int32_t>(i), merges[i].result});
    }

    const entry* find(token_id left, token_id right) const {
        const auto it = map_.find(key(left, right));
        return it == map_.end() ? nullptr : &it->second;
    }
    std::size_t size() const noexcept { return map_.size(); }

private:
    static std::uint64_t key(token_id left, token_id right) noexcept {
        return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
    }
    std::unordered_map<std::uint64_t, entry> map_;
};

// Not thread-safe: one per encode call.
class bpe_word_merger {
public:
    explicit bpe_word_merger(const bpe_ranks& ranks) : ranks_(ranks) {}

    // The symbols of the next word: clear(), push() each initial symbol, then merge_into().
    void clear() {
        symbols_.clear();
        heap_.clear();  // keeps its capacity for the next word
    }
    void push(token_id id) {
        const int i = static_cast<int>(symbols_.size());
        symbols_.push_back({id, i - 1, -1});
        if (i > 0) symbols_[static_cast<std::size_t>(i - 1)].next = i;
    }

    // Merges the word and appends its final symbols to out.
    void merge_into(std::vector<token_id>& out) {
        if (symbols_.empty()) return;
        for (int i = 0; i + 1 < static_cast<int>(symbols_.size()); ++i) push_pair(i, i + 1);
        while (!heap_.empty()) {
            std::pop_heap(heap_.begin(), heap_.end(), later{});
            const candidate c = heap_.back();
            heap_.pop_back();
            symbol& l = at(c.left);
            // Stale when either side has changed since the pair was queued: a merge changes the left
            // symbol's id (to a longer token) and retires the right one.
            if (l.id != c.left_id || l.next != c.right || at(c.right).id != c.right_id) continue;
            symbol& r = at(c.right);
            l.id = c.result;
            l.next = r.next;
            if (r.next >= 0) at(r.next).prev = c.left;
            r.id = no_token;
            push_pair(l.prev, c.left);
            push_pair(c.left, l.next);
        }
        // Symbol 0 is never retired (a merge keeps its left symbol), so the list starts there.
        for (int i = 0; i >= 0; i = at(i).next) out.push_back(at(i).id);
    }

private:
    struct symbol {
        token_id id;
        int prev, next;  // neighbours in the current segmentation, -1 at the ends
    };
    struct candidate {
        std::int32_t rank;
        int left, right;  // symbol indices; the left index orders pairs by position in the word
        token_id left_id, right_id, result;
    };
    struct later {
        bool operator()(const candidate& a, const candidate& b) const noexcept {
            return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
        }
    };

    symbol& at(int i) { return symbols_[static_cast<std::size_t>(i)]; }

    void push_pair(int left, int right) {
        if (left < 0 || right < 0) return;
        const token_id l = at(left).id, r = at(right).id;
        if (const bpe_ranks::entry* e = ranks_.find(l, r)) {
            heap_.push_back({e->rank, left, right, l, r, e->result});
            std::push_heap(heap_.begin(), heap_.end(), later{});
        }
    }

    const bpe_ranks& ranks_;
    std::vector<symbol> symbols_;
    std::vector<candidate> heap_;  // a heap under `later`: its front is the pair to merge next
};

}  // namespace nexttok::detail

// Prompt lookup decoding (Saxena 2023, "Prompt Lookup Decoding"; Hugging Face's prompt_lookup_num_tokens,
// llama.cpp's lookup): a drafter without a model. It takes the last n tokens of the sequence (prompt +
// generated), finds their latest earlier occurrence, and proposes the tokens that followed it; without
// a match it tries n - 1, down to n_min; with none it proposes nothing (the round is a plain decode
// step). Pays off where the output repeats the input: summaries, code edits, quoted passages.
//
// Deterministic: q is one-hot on each proposed token, so a sampling target accepts token x with
// probability p(x) and draws from p without x at a rejection; a greedy target accepts it when it is
// the target's argmax. Holds no state between rounds; the search costs O(sequence length * n) per
// round and allocates nothing. Stateless and cheap to copy; thread-safe for concurrent const use.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

class ngram_drafter {
public:
    // n_max: the longest n-gram looked up first (--lookup-ngram); n_min: the shortest it falls back to.
    // Throws invalid_argument_error unless 1 <= n_min <= n_max.
    explicit ngram_drafter(std::int64_t n_max = 3, std::int64_t n_min = 1) : n_max_(n_max), n_min_(n_min) {
        if (n_min < 1)
            throw invalid_argument_error("ngram_drafter: n_min = " + std::to_string(n_min) + ": must be >= 1");
        if (n_max < n_min)
            throw invalid_argument_error("ngram_drafter: n_max = " + std::to_string(n_max) +
                                         ": must be >= n_min = " + std::to_string(n_min));
    }

    // Proposes ids taken from the sequence itself, so any vocabulary fits.
    void check_vocabulary(std::int64_t, std::string_view) const noexcept {}
    void begin(std::span<const token_id>) noexcept {}
    void rollback(std::int64_t) noexcept {}

    // Appends to `out` k tokens, or none without a match: those that followed the latest earlier
    // occurrence of the longest suffix of `sequence` of n_max..n_min tokens that occurred before,
    // and past the end of the sequence the tokens just proposed, as if the match went on (an LZ77
    // copy that overlaps itself): a sequence that loops with period p proposes k tokens of the loop,
    // not only the p after the match. Never calls pick.
    template <class Pick>
    void propose(std::span<const token_id> sequence, std::int64_t k, Pick&, std::vector<token_id>& out) const {
        const auto n_seq = static_cast<std::int64_t>(sequence.size());
        const std::int64_t start = find(sequence);
        if (start < 0) return;
        const std::size_t base = out.size();
        for (std::int64_t i = 0; i < k; ++i) {
            const std::int64_t from = start + i;  // start < n_seq, so a proposed token is always behind
            out.push_back(from < n_seq ? sequence[static_cast<std::size_t>(from)]
                                       : out[base + static_cast<std::size_t>(from - n_seq)]);
        }
    }

    // The position of the token that followed the match propose() uses, or -1 without one.
    std::int64_t find(std::span<const token_id> sequence) const noexcept {
        const auto n_seq = static_cast<std::int64_t>(sequence.size());
        for (std::int64_t n = std::min(n_max_, n_seq - 1); n >= n_min_; --n) {
            const token_id* key = sequence.data() + (n_seq - n);
            // Candidates start at j <= n_seq - n - 1, so that a token follows the occurrence.
            for (std::int64_t j = n_seq - n - 1; j >= 0; --j)
                if (std::equal(key, key + n, sequence.data() + j)) return j + n;
        }
        return -1;
    }

    std::int64_t n_max() const noexcept { return n_max_; }
    std::int64_t n_min() const noexcept { return n_min_; }

private:
    std::int64_t n_max_;
    std::int64_t n_min_;
};

}  // namespace nexttok

// DRY, "Don't Repeat Yourself" (p-e-w, text-generation-webui PR #5677, 2024), as llama.cpp implements
// it (llama_sampler_dry, ported from koboldcpp): penalize a token that would extend a repetition of
// the recent text, the more the longer the repetition.
//
// For the last N accepted tokens (N = last_n; -1 = all of them; 0 disables the stage):
//   1. Sequence breakers (e.g. "\n", ":", "\"", "*") bound how far back a repetition may reach: the
//      most recent occurrence of a breaker, ending r tokens before the end, caps repetition lengths at r
//      (r = N without one). When r < allowed_length nothing is penalized.
//   2. For every earlier position j, len(j) = min(r, length of the longest common suffix of the text
//      ending at j and the text ending at the newest token) (a Z-function over the reversed window).
//   3. The token that followed position j would extend that repetition: it gets the largest len(j)
//      over all such j, if len(j) >= allowed_length.
//   4. Its logit -= multiplier * base^(len - allowed_length), the exponent capped so that the power
//      stays below FLT_MAX (llama.cpp's 88.7228391 / ln(base) when base > 1.000001). A token that is a
//      sequence breaker by itself is never penalized.
// Disabled (no-op, accept() records nothing) when multiplier == 0, base < 1 or last_n == 0, as llama.cpp.
//
// Breakers are token sequences: head token + tail tokens that must follow it. dry_sequence_breakers()
// turns strings into them the way llama.cpp does: every token whose text contains the string is a
// breaker by itself; a token whose text ends with a proper prefix of the string is a head whose tail
// is the tokenization of the rest of the string (at most 20 tokens; strings cut at 40 bytes).
// Differences: llama.cpp's penalty window is also capped by the training context; ours is not (last_n
// = -1 is the whole sequence). Control tokens have no text here (llama.cpp matches their "<s>" text).
//
// Prompt tokens: as penalties.hpp (tokens accepted before the first apply() are the prompt; they
// count when include_prompt, the default, as llama.cpp's CLI and server feed the prompt to DRY).
// Cost per apply: O(N) for the Z-function plus O(candidates). Memory: the window and its scratch
// (allocated at construction when last_n > 0) and one int per vocabulary entry (at the first apply); no
// allocation after that, except that with last_n = -1 the history grows with the sequence (amortized).
// Copyable; not thread-safe.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/token_history.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

class dry {
public:
    // breakers: token sequences (head first); empty sequences are ignored. Throws
    // invalid_argument_error for a NaN or infinite multiplier or base, allowed_length < 1, last_n < -1.
    dry(float multiplier, float base, std::int32_t allowed_length, std::int32_t last_n,
        std::vector<std::vector<token_id>> breakers = {}, bool include_prompt = true)
            : multiplier_(multiplier),
              base_(base),
              allowed_length_(allowed_length),
              last_n_(last_n),
              include_prompt_(include_prompt),
              history_(last_n) {
        if (!std::isfinite(multiplier) || !std::isfinite(base))
            throw invalid_argument_error("dry: multiplier and base must be finite");
        if (allowed_length < 1)
            throw invalid_argument_error("dry: allowed_length = " + std::to_string(allowed_length) + ": must be >= 1");
        if (last_n < -1)
            throw invalid_argument_error("dry: last_n = " + std::to_string(last_n) +
                                         ": must be >= -1 (-1 = all, 0 = off)");
        for (auto& b : breakers) {
            if (b.empty()) continue;
            breakers_.push_back({b.front(), std::vector<token_id>(b.begin() + 1, b.end())});
        }
        std::sort(breakers_.begin(), breakers_.end());
        breakers_.erase(std::unique(breakers_.begin(), breakers_.end()), breakers_.end());
        if (base_ > 1.000001f) max_exponent_ = static_cast<std::int32_t>(88.7228391f / std::log(base_));
        if (last_n > 0 && enabled()) {  // a bounded window: every buffer reaches its size here
            z_.reserve(static_cast<std::size_t>(last_n));
            touched_.reserve(static_cast<std::size_t>(last_n));
        }
    }

    bool enabled() const noexcept { return multiplier_ != 0.0f && base_ >= 1.0f && last_n_ != 0; }

    void apply(candidates& c) {
        in_prompt_ = false;
        if (!enabled()) return;
        if (max_len_.size() < c.size()) max_len_.resize(c.size(), 0);  // once: the vocabulary
        const std::size_t n = history_.size();
        if (n <= static_cast<std::size_t>(allowed_length_)) return;
        const std::size_t limit = repetition_limit_(n);
        if (limit < static_cast<std::size_t>(allowed_length_)) return;
        longest_repeats_(n, limit);
        if (touched_.empty()) return;
        for (std::size_t i = 0; i < c.size(); ++i) {
            const token_id id = c.ids[i];
            const auto k = static_cast<std::size_t>(id);
            if (k >= max_len_.size() || max_len_[k] == 0 || is_single_breaker_(id)) continue;
            std::int32_t exponent = max_len_[k] - allowed_length_;
            if (max_exponent_ > 0 && exponent > max_exponent_) exponent = max_exponent_;
            c.logits[i] -= multiplier_ * std::pow(base_, static_cast<float>(exponent));
        }
        for (token_id id : touched_) max_len_[static_cast<std::size_t>(id)] = 0;
        touched_.clear();
        c.sorted = false;
        c.probs_valid = false;
    }

    void accept(token_id t) {
        if (!enabled() || (in_prompt_ && !include_prompt_)) return;
        history_.push(t);
    }

    void reset() {
        history_.clear();
        in_prompt_ = true;
    }

    // The breakers as (head, tail) pairs, sorted.
    const std::vector<std::pair<token_id, std::vector<token_id>>>& breakers() const noexcept { return breakers_; }

private:
    // Step 1: the cap r on repetition lengths from the most recent complete breaker occurrence.
    std::size_t repetition_limit_(std::size_t n) const {
        for (std::size_t i = 0; i < n; ++i) {  // i: distance of a candidate head from the newest token
            const token_id head = history_.from_end(i);
            auto it = std::lower_bound(breakers_.begin(), breakers_.end(), head,
                                       [](const auto& b, token_id h) { return b.first < h; });
            std::int64_t longest = -1;
            for (; it != breakers_.end() && it->first == head; ++it) {
                const std::size_t tail = it->second.size();
                if (static_cast<std::int64_t>(tail) <= longest || tail > i) continue;
                bool match = true;
                for (std::size_t j = 0; j < tail && match; ++j) match = it->second[j] == history_.from_end(i - 1 - j);
                if (match) longest = static_cast<std::int64_t>(tail);
            }
            if (longest >= 0) return i - static_cast<std::size_t>(longest);
        }
        return n;
    }

    // Steps 2 and 3: z_[k] = longest common prefix of s and s[k..), s[k] = the k-th newest token; the
    // token after the position at distance k (the (k-1)-th newest) may extend a repeat of that length.
    void longest_repeats_(std::size_t n, std::size_t limit) {
        z_.assign(n, 0);
        std::size_t left = 0, right = 0;  // the rightmost match window [left, right) found so far
        for (std::size_t k = 1; k < n; ++k) {
            std::size_t len = 0;
            if (k < right) len = std::min(right - k, z_[k - left]);
            while (k + len < n && history_.from_end(len) == history_.from_end(k + len)) ++len;
            z_[k] = len;
            if (k + len > right) {
                left = k;
                right = k + len;
            }
            const std::size_t capped = std::min(len, limit);
            if (capped < static_cast<std::size_t>(allowed_length_)) continue;
            const token_id next = history_.from_end(k - 1);
            const auto id = static_cast<std::size_t>(next);
            if (id >= max_len_.size()) max_len_.resize(id + 1, 0);
            if (max_len_[id] == 0) touched_.push_back(next);
            max_len_[id] = std::max(max_len_[id], static_cast<std::int32_t>(capped));
        }
    }

    bool is_single_breaker_(token_id id) const {
        auto it = std::lower_bound(breakers_.begin(), breakers_.end(), id,
                                   [](const auto& b, token_id h) { return b.first < h; });
        return it != breakers_.end() && it->first == id && it->second.empty();  // empty tails sort first
    }

    float multiplier_, base_;
    std::int32_t allowed_length_, last_n_;
    bool include_prompt_;
    bool in_prompt_ = true;
    std::int32_t max_exponent_ = 0;                                     // 0: uncapped (base <= 1.000001)
    std::vector<std::pair<token_id, std::vector<token_id>>> breakers_;  // (head, tail), sorted
    detail::token_history history_;                                     // the last last_n accepted tokens
    std::vector<std::size_t> z_;                                        // (window) scratch of the Z-function
    std::vector<std::int32_t> max_len_;  // (largest id seen + 1) longest repeat each token would extend
    std::vector<token_id> touched_;      // ids with max_len_ != 0
};

// What dry_sequence_breakers needs of a tokenizer (nexttok::tokenizer has it): the vocabulary's
// pieces and the encoding of a text without special tokens.
template <class T>
concept piece_tokenizer = requires(const T& tok, token_id id, std::string_view text) {
    { tok.vocab_size() } -> std::convertible_to<std::size_t>;
    { tok.token_to_piece(id) } -> std::convertible_to<std::string>;
    { tok.encode(text, false) } -> std::convertible_to<std::vector<token_id>>;
};

// The breakers for `strings` in tok's vocabulary, built as llama.cpp's llama_sampler_init_dry does
// (see above). llama.cpp's defaults are {"\n", ":", "\"", "*"}. Cost: one token_to_piece per
// vocabulary entry and string, at setup.
template <piece_tokenizer Tokenizer>
std::vector<std::vector<token_id>> dry_sequence_breakers(const Tokenizer& tok, std::span<const std::string> strings) {
    constexpr std::size_t max_chars = 40;
    constexpr std::size_t max_tail = 20;
    std::vector<std::vector<token_id>> out;
    const auto n_vocab = static_cast<token_id>(tok.vocab_size());
    std::vector<std::string> pieces(static_cast<std::size_t>(n_vocab));
    for (token_id id = 0; id < n_vocab; ++id) pieces[static_cast<std::size_t>(id)] = tok.token_to_piece(id);
    for (std::string s : strings) {
        if (s.empty()) continue;
        if (s.size() > max_chars) s.resize(max_chars);
        for (token_id id = 0; id < n_vocab; ++id) {
            const std::string_view word = pieces[static_cast<std::size_t>(id)];
            if (word.find(s) != std::string_view::npos) {
                out.push_back({id});
                continue;
            }
            // Positions where the word ends with a proper prefix of s: the rest of s is the tail.
            for (std::size_t pos = word.find(s[0]); pos != std::string_view::npos; pos = word.find(s[0], pos + 1)) {
                const std::size_t n_match = word.size() - pos;
                if (n_match >= s.size() || word.substr(pos) != std::string_view(s).substr(0, n_match)) continue;
                std::vector<token_id> seq{id};
                std::vector<token_id> tail = tok.encode(std::string_view(s).substr(n_match), false);
                if (tail.size() > max_tail) tail.resize(max_tail);
                seq.insert(seq.end(), tail.begin(), tail.end());
                if (std::find(out.begin(), out.end(), seq) == out.end()) out.push_back(std::move(seq));
            }
        }
    }
    return out;
}

}  // namespace nexttok

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

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/token_history.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
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
    NEXTTOK_DECL dry(float multiplier, float base, std::int32_t allowed_length, std::int32_t last_n,
                     std::vector<std::vector<token_id>> breakers = {}, bool include_prompt = true);

    bool enabled() const noexcept { return multiplier_ != 0.0f && base_ >= 1.0f && last_n_ != 0; }

    NEXTTOK_DECL void apply(candidates& c);

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
    NEXTTOK_DECL std::size_t repetition_limit_(std::size_t n) const;

    // Steps 2 and 3: z_[k] = longest common prefix of s and s[k..), s[k] = the k-th newest token; the
    // token after the position at distance k (the (k-1)-th newest) may extend a repeat of that length.
    NEXTTOK_DECL void longest_repeats_(std::size_t n, std::size_t limit);

    NEXTTOK_DECL bool is_single_breaker_(token_id id) const;

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

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/dry.ipp>
#endif

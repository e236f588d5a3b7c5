// The pre-tokenizer of byte-level BPE: regular expressions cut the text into pieces (words, numbers,
// punctuation runs, whitespace) and BPE merges never cross a piece boundary. Each expression cuts
// every piece of the one before it, as a subject of its own; the pieces are the matches and, between
// them, any text the expression does not match (HF's Split with behaviour "Isolated"), so their
// concatenation is always the text, byte for byte, even invalid UTF-8. An empty match is a cut
// (SuperBPE's (?=(\d{3})+(?!\d)) cuts a number before each group of three digits).
//
// The built-in kinds are llama.cpp's lists (pre_tokenizer_kind.hpp; gpt2, llama3 and qwen2 are the
// expressions of GPT-2, Llama 3 and Qwen2); "custom" is any other list (tokenizer.json Splits).
//
// Cost: the expressions are compiled (and JIT-compiled) once per pre_tokenizer; matching needs one
// PCRE2 match data (a scratch), which the caller keeps across calls. Thread-safety: immutable;
// concurrent split() calls are safe, each with its own scratch.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/detail/utf8.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tokenizer/detail/pcre2_regex.hpp>
#include <nexttok/tokenizer/detail/pre_tokenizer_patterns.hpp>
#include <nexttok/tokenizer/gguf_pre_tokenizers.hpp>
#include <nexttok/tokenizer/pre_tokenizer_kind.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

class pre_tokenizer {
public:
    static constexpr std::string_view gpt2_pattern = detail::pre_patterns::gpt2;
    static constexpr std::string_view llama3_pattern = detail::pre_patterns::llama3;
    static constexpr std::string_view qwen2_pattern = detail::pre_patterns::qwen2;

    // One of the built-in kinds; invalid_argument_error for custom (use from_pattern).
    NEXTTOK_DECL explicit pre_tokenizer(pre_tokenizer_kind kind);

    // Any expression PCRE2 accepts (with UTF and UCP). The kind is that of a built-in kind when the
    // pattern is its whole list, else custom. invalid_argument_error when it does not compile.
    NEXTTOK_DECL static pre_tokenizer from_pattern(std::string pattern);

    // Several expressions applied in order (a tokenizer.json Sequence of Splits). At least one.
    NEXTTOK_DECL static pre_tokenizer from_patterns(std::vector<std::string> patterns);

    pre_tokenizer_kind kind() const noexcept { return kind_; }
    std::size_t n_patterns() const noexcept { return regexes_.size(); }
    // The i-th expression (0 <= i < n_patterns()), in the order they apply.
    const std::string& pattern(std::size_t i = 0) const { return regexes_.at(i).pattern(); }

    // PCRE2's per-thread matching state: an empty scratch is allocated on first use, then reused.
    using scratch = detail::pcre2_regex::match_data;

    // Calls piece(std::string_view) for each piece of text, in order. Never calls it with an empty
    // piece; the pieces concatenate to text.
    template <class F>
    void for_each_piece(std::string_view text, scratch& md, F&& piece) const {
        if (text.empty()) return;
        if (!md) md = detail::pcre2_regex::make_match_data();
        cut(0, text, md, piece);
    }

    // The pieces of text, in order (for_each_piece into a vector).
    NEXTTOK_DECL std::vector<std::string_view> split(std::string_view text) const;

private:
    NEXTTOK_DECL explicit pre_tokenizer(std::vector<std::string> patterns);

    // Cuts `text` (non-empty) with expression `level` and hands each piece to the next level; the
    // recursion is as deep as the list is long (at most six).
    template <class F>
    void cut(std::size_t level, std::string_view text, scratch& md, F& piece) const {
        if (level == regexes_.size()) {
            piece(text);
            return;
        }
        const auto next = [&](std::size_t from, std::size_t to) {
            cut(level + 1, text.substr(from, to - from), md, piece);
        };
        const detail::pcre2_regex& regex = regexes_[level];
        std::size_t pos = 0;     // the end of the last piece
        std::size_t search = 0;  // where the next search starts
        std::size_t begin = 0, end = 0;
        while (search < text.size() && regex.find(text, search, md, begin, end, /*allow_empty=*/true)) {
            if (begin > pos) next(pos, begin);  // text the expression does not match, or a cut
            if (end > begin) {
                next(begin, end);
                pos = search = end;
            } else {
                // An empty match cuts here; look again one character further.
                pos = begin;
                search = begin + char_length(text.substr(begin));
            }
        }
        if (pos < text.size()) next(pos, text.size());
    }

    // The length of the character at the start of s (1 for a byte that starts none), so that a
    // search never starts inside a character.
    static std::size_t char_length(std::string_view s) noexcept {
        if (s.empty()) return 1;
        const detail::utf8_scan c = detail::scan_utf8(s);
        return c.status == detail::utf8_status::valid ? c.length : 1;
    }

    pre_tokenizer_kind kind_;
    std::vector<detail::pcre2_regex> regexes_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/pre_tokenizer.ipp>
#endif

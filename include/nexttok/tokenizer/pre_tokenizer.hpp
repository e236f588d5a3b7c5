// The pre-tokenizer of byte-level BPE: a regular expression cuts the text into pieces (words,
// numbers, punctuation runs, whitespace) and BPE merges never cross a piece boundary. The pieces are
// the matches and, between them, any text the expression does not match (HF's Split with behaviour
// "Isolated"), so their concatenation is always the text, byte for byte, even invalid UTF-8.
//
// The three expressions of the models we support, as their tokenizer.json / tiktoken define them:
//   gpt2    GPT-2 (also GGUF pre "default"), HF's ByteLevel(use_regex = true)
//   llama3  Llama 3: case-insensitive contractions, letters with one leading non-letter, digits in
//           groups of at most 3, newlines kept with the punctuation or whitespace before them
//   qwen2   Qwen2: as Llama 3 but one digit per piece
// and "custom" for any other expression (a tokenizer.json Split pattern).
//
// Cost: the expression is compiled (and JIT-compiled) once per pre_tokenizer; matching needs one
// PCRE2 match data (a scratch), which the caller keeps across calls. Thread-safety: immutable; concurrent split() calls are safe.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/tokenizer/detail/pcre2_regex.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

enum class pre_tokenizer_kind { gpt2, llama3, qwen2, custom };

inline std::string_view to_string(pre_tokenizer_kind kind) noexcept {
    switch (kind) {
        case pre_tokenizer_kind::gpt2: return "gpt2";
        case pre_tokenizer_kind::llama3: return "llama3";
        case pre_tokenizer_kind::qwen2: return "qwen2";
        case pre_tokenizer_kind::custom: return "custom";
    }
    return "?";
}

// The kind that GGUF's tokenizer.ggml.pre names (llama.cpp's names), or nullopt when we do not
// implement it. An absent key means "default" (llama.cpp warns and uses its default expressions).
inline std::optional<pre_tokenizer_kind> pre_tokenizer_kind_from_gguf(std::string_view pre) noexcept {
    if (pre == "gpt-2" || pre == "default") return pre_tokenizer_kind::gpt2;
    if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3") return pre_tokenizer_kind::llama3;
    if (pre == "qwen2") return pre_tokenizer_kind::qwen2;
    return std::nullopt;
}

class pre_tokenizer {
public:
    static constexpr std::string_view gpt2_pattern =
        R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";
    static constexpr std::string_view llama3_pattern =
        R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
    static constexpr std::string_view qwen2_pattern =
        R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

    // One of the built-in kinds; invalid_argument_error for custom (use from_pattern).
    explicit pre_tokenizer(pre_tokenizer_kind kind) : kind_(kind), regex_(std::string(pattern_of(kind))) {}

    // Any expression PCRE2 accepts (with UTF and UCP). The kind is that of a built-in expression when
    // the pattern is one of them, else custom. invalid_argument_error when it does not compile.
    static pre_tokenizer from_pattern(std::string pattern) {
        for (const pre_tokenizer_kind k : {pre_tokenizer_kind::gpt2, pre_tokenizer_kind::llama3, pre_tokenizer_kind::qwen2})
            if (pattern == pattern_of(k)) return pre_tokenizer(k);
        return pre_tokenizer(pre_tokenizer_kind::custom, std::move(pattern));
    }

    pre_tokenizer_kind kind() const noexcept { return kind_; }
    const std::string& pattern() const noexcept { return regex_.pattern(); }

    // PCRE2's per-thread matching state: an empty scratch is allocated on first use, then reused.
    using scratch = detail::pcre2_regex::match_data;

    // Calls piece(std::string_view) for each piece of text, in order. Never calls it with an empty
    // piece; the pieces concatenate to text.
    template <class F>
    void for_each_piece(std::string_view text, scratch& md, F&& piece) const {
        if (text.empty()) return;
        if (!md) md = regex_.make_match_data();
        std::size_t pos = 0, begin = 0, end = 0;
        while (pos < text.size() && regex_.find(text, pos, md, begin, end)) {
            if (begin > pos) piece(text.substr(pos, begin - pos));  // text the expression does not match
            piece(text.substr(begin, end - begin));
            pos = end;
        }
        if (pos < text.size()) piece(text.substr(pos));
    }

    std::vector<std::string_view> split(std::string_view text) const {
        std::vector<std::string_view> pieces;
        scratch md;
        for_each_piece(text, md, [&](std::string_view p) { pieces.push_back(p); });
        return pieces;
    }

private:
    pre_tokenizer(pre_tokenizer_kind kind, std::string pattern) : kind_(kind), regex_(std::move(pattern)) {}

    static std::string_view pattern_of(pre_tokenizer_kind kind) {
        switch (kind) {
            case pre_tokenizer_kind::gpt2: return gpt2_pattern;
            case pre_tokenizer_kind::llama3: return llama3_pattern;
            case pre_tokenizer_kind::qwen2: return qwen2_pattern;
            case pre_tokenizer_kind::custom: break;
        }
        throw invalid_argument_error("pre_tokenizer: a custom pre-tokenizer needs its pattern (from_pattern)");
    }

    pre_tokenizer_kind kind_;
    detail::pcre2_regex regex_;
};

}  // namespace nexttok

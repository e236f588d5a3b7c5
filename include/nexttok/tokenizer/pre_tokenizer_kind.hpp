// The pre-tokenizers of byte-level BPE, as llama.cpp knows them: each kind is one list of regular
// expressions, applied in order (the pieces of one are cut again by the next, each piece on its own,
// so a lookahead or `$` sees the end of the piece), keeping both the matches and the text between
// them (HF's Split with behaviour "Isolated").
//
// Source: llama.cpp src/llama-vocab.cpp, the switch over LLAMA_VOCAB_PRE_TYPE_* in the constructor of
// llm_tokenizer_bpe (ggml-org/llama.cpp at 00ad355e: every byte-level type it had), and unicode.cpp.
// One kind per distinct list; the llama.cpp types that share a list share a kind (STARCODER, REFACT,
// COMMAND_R, SMOLLM, ... are all `starcoder`). The expressions are that data, with three kinds of
// deliberate differences, each chosen so that we cut what the model's own tokenizer.json (the
// Hugging Face tokenizers library, from which llama.cpp's test vectors are generated) cuts:
//   - where llama.cpp rewrote an expression for std::regex and kept the tokenizer.json original in a
//     comment ((?i:'s|...) spelled '[sS]|..., possessive ?+ and ++ made greedy, \p{Lu} emulated by
//     lookaheads over [^a-z]), we use the original: PCRE2 reads it as written. (llama.cpp maps every
//     \p{L..} subcategory to \p{L}; PCRE2 does not, as tokenizers does not.)
//   - kimi-k2's class intersection [...&&[^\p{Han}]] (which PCRE2 10.42 lacks) is a lookahead
//     (?:(?!\p{Han})[...]), and afmoe's custom digit splitter (\p{AFMoE_digits}: a run of digits in
//     groups of three from the right) is the equivalent expression.
//   - gpt2 is GPT-2's full expression with its final |\s+, which llama.cpp drops: the only text \s+
//     alone matches is one whitespace character before a non-space, which stays a piece of its own
//     either way (tested). The lists that contain the GPT-2 expression use the full form too, as
//     their tokenizer.json files do (a ByteLevel step).
// llama.cpp also has hand-written splitters for the gpt2 and llama3 expressions and kimi-k2
// (unicode_regex_split_custom_*, chosen by comparing the expression's text): they follow the
// expressions, so PCRE2 runs the expressions themselves.
// \p{L}, \p{N}, \s are Unicode (PCRE2_UCP), as in tokenizers; llama.cpp approximates them by
// collapsing each non-ASCII character to its category.
//
// Which GGUF names (tokenizer.ggml.pre) use which kind, and what else a name changes (ignore_merges,
// add_bos), is gguf_pre_tokenizers.hpp.
#pragma once

#include <nexttok/tokenizer/detail/pre_tokenizer_patterns.hpp>

#include <cstddef>
#include <iterator>
#include <span>
#include <string_view>

namespace nexttok {

enum class pre_tokenizer_kind {
    llama_cpp_default,  // llama.cpp's LLAMA_VOCAB_PRE_TYPE_DEFAULT (GGUF pre "default" or absent)
    gpt2,
    llama3,
    qwen2,
    jais2,
    deepseek_llm,
    deepseek_coder,
    deepseek_v3,
    spark2_5,
    youtu,
    falcon,
    starcoder,
    qwen35,
    bloom,
    viking,
    tekken,
    chameleon,
    gpt4o,
    tiny_aya,
    kimi_k2,
    superbpe,
    bailingmoe,
    seed_coder,
    ufakzeka,
    afmoe,
    laguna,
    exaone_moe,
    minicpm5,
    custom,  // any other expression (a tokenizer.json Split pattern)
};

namespace detail {

struct pre_tokenizer_row {
    pre_tokenizer_kind kind;
    std::string_view name;                       // llama.cpp's name of the type (lower case)
    std::span<const std::string_view> patterns;  // applied in this order
};

// One row per kind except custom, in enum order.
inline constexpr pre_tokenizer_row pre_tokenizer_rows[] = {
    {pre_tokenizer_kind::llama_cpp_default, "default", pre_patterns::llama_cpp_default},
    {pre_tokenizer_kind::gpt2, "gpt2", pre_patterns::gpt2_list},
    {pre_tokenizer_kind::llama3, "llama3", pre_patterns::llama3_list},
    {pre_tokenizer_kind::qwen2, "qwen2", pre_patterns::qwen2_list},
    {pre_tokenizer_kind::jais2, "jais2", pre_patterns::jais2},
    {pre_tokenizer_kind::deepseek_llm, "deepseek-llm", pre_patterns::deepseek_llm},
    {pre_tokenizer_kind::deepseek_coder, "deepseek-coder", pre_patterns::deepseek_coder},
    {pre_tokenizer_kind::deepseek_v3, "deepseek-v3", pre_patterns::deepseek_v3},
    {pre_tokenizer_kind::spark2_5, "spark2_5", pre_patterns::spark2_5},
    {pre_tokenizer_kind::youtu, "youtu", pre_patterns::youtu},
    {pre_tokenizer_kind::falcon, "falcon", pre_patterns::falcon},
    {pre_tokenizer_kind::starcoder, "starcoder", pre_patterns::starcoder},
    {pre_tokenizer_kind::qwen35, "qwen35", pre_patterns::qwen35},
    {pre_tokenizer_kind::bloom, "bloom", pre_patterns::bloom},
    {pre_tokenizer_kind::viking, "viking", pre_patterns::viking},
    {pre_tokenizer_kind::tekken, "tekken", pre_patterns::tekken},
    {pre_tokenizer_kind::chameleon, "chameleon", pre_patterns::chameleon},
    {pre_tokenizer_kind::gpt4o, "gpt-4o", pre_patterns::gpt4o_list},
    {pre_tokenizer_kind::tiny_aya, "tiny_aya", pre_patterns::tiny_aya},
    {pre_tokenizer_kind::kimi_k2, "kimi-k2", pre_patterns::kimi_k2},
    {pre_tokenizer_kind::superbpe, "superbpe", pre_patterns::superbpe},
    {pre_tokenizer_kind::bailingmoe, "bailingmoe", pre_patterns::bailingmoe},
    {pre_tokenizer_kind::seed_coder, "seed-coder", pre_patterns::seed_coder},
    {pre_tokenizer_kind::ufakzeka, "ufakzeka", pre_patterns::ufakzeka},
    {pre_tokenizer_kind::afmoe, "afmoe", pre_patterns::afmoe},
    {pre_tokenizer_kind::laguna, "laguna", pre_patterns::laguna},
    {pre_tokenizer_kind::exaone_moe, "exaone-moe", pre_patterns::exaone_moe},
    {pre_tokenizer_kind::minicpm5, "minicpm5", pre_patterns::minicpm5},
};

inline constexpr bool pre_tokenizer_rows_in_enum_order() {
    for (std::size_t i = 0; i < std::size(pre_tokenizer_rows); ++i)
        if (static_cast<std::size_t>(pre_tokenizer_rows[i].kind) != i) return false;
    return std::size(pre_tokenizer_rows) == static_cast<std::size_t>(pre_tokenizer_kind::custom);
}
static_assert(pre_tokenizer_rows_in_enum_order(), "one row per kind, in enum order");

}  // namespace detail

// Every built-in kind (all but custom), in enum order.
inline constexpr std::span<const detail::pre_tokenizer_row> built_in_pre_tokenizers() noexcept {
    return detail::pre_tokenizer_rows;
}

// llama.cpp's name of the kind ("deepseek-llm", "gpt-4o", ...); "custom" for custom.
inline constexpr std::string_view to_string(pre_tokenizer_kind kind) noexcept {
    return kind == pre_tokenizer_kind::custom ? "custom"
                                              : detail::pre_tokenizer_rows[static_cast<std::size_t>(kind)].name;
}

// The expressions of a built-in kind, in the order they apply; empty for custom.
inline constexpr std::span<const std::string_view> pre_tokenizer_patterns(pre_tokenizer_kind kind) noexcept {
    if (kind == pre_tokenizer_kind::custom) return {};
    return detail::pre_tokenizer_rows[static_cast<std::size_t>(kind)].patterns;
}

}  // namespace nexttok

// The definitions of gguf_vocab.hpp.
#pragma once

#include <nexttok/tokenizer/gguf_vocab.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/tokenizer/bpe_tokenizer.hpp>
#include <nexttok/tokenizer/detail/merge_rules.hpp>
#include <nexttok/tokenizer/gguf_pre_tokenizers.hpp>
#include <nexttok/tokenizer/pre_tokenizer.hpp>
#include <nexttok/tokenizer/spm_tokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

namespace detail {

[[noreturn]] inline void fail_gguf_key(const gguf_file& file, std::string_view key, const std::string& expected) {
    const gguf_value* v = file.find(key);
    throw format_error(file.name() + ": metadata key '" + std::string(key) + "' at offset " +
                       hex_offset(v != nullptr ? v->offset : 0) + ": expected " + expected);
}

inline token_id gguf_special_id(const gguf_file& file, std::string_view key, token_id fallback, std::size_t n_tokens) {
    const std::optional<std::int64_t> v = file.find_int(key);
    if (!v) return fallback;
    if (*v == -1 || *v == 0xFFFFFFFF) return no_token;  // the converters' spelling of "none"
    if (*v < 0 || static_cast<std::uint64_t>(*v) >= n_tokens)
        fail_gguf_key(file, key, "a token id below " + std::to_string(n_tokens) + ", found " + std::to_string(*v));
    return static_cast<token_id>(*v);
}

}  // namespace detail

NEXTTOK_DECL vocabulary load_gguf_vocabulary(const gguf_file& file, special_token_ids defaults) {
    constexpr std::string_view tokens_key = "tokenizer.ggml.tokens";
    constexpr std::string_view scores_key = "tokenizer.ggml.scores";
    constexpr std::string_view types_key = "tokenizer.ggml.token_type";

    const std::vector<std::string_view> texts = file.get_string_array(tokens_key);
    const std::size_t n = texts.size();
    if (n == 0) detail::fail_gguf_key(file, tokens_key, "at least one token");
    if (n > static_cast<std::size_t>(INT32_MAX))
        detail::fail_gguf_key(file, tokens_key, "at most 2^31-1 tokens, found " + std::to_string(n));

    std::vector<float> scores;
    if (file.find(scores_key) != nullptr) {
        scores = file.get_f32_array(scores_key);
        if (scores.size() != n)
            detail::fail_gguf_key(
                file, scores_key,
                std::to_string(n) + " scores (one per token), found " + std::to_string(scores.size()));
    }
    std::vector<std::int32_t> types;
    if (file.find(types_key) != nullptr) {
        types = file.get_i32_array(types_key);
        if (types.size() != n)
            detail::fail_gguf_key(
                file, types_key,
                std::to_string(n) + " token types (one per token), found " + std::to_string(types.size()));
    }

    std::vector<token_data> tokens(n);
    for (std::size_t i = 0; i < n; ++i) {
        token_data& t = tokens[i];
        t.text = std::string(texts[i]);
        if (!scores.empty()) t.score = scores[i];
        if (!types.empty()) {
            if (!is_valid_token_type(types[i]))
                detail::fail_gguf_key(
                    file, types_key,
                    "token types 1..6, token " + std::to_string(i) + " has type " + std::to_string(types[i]));
            t.type = static_cast<token_type>(types[i]);
        }
        if (t.type == token_type::byte && !detail::parse_byte_token(t.text))
            detail::fail_gguf_key(file, tokens_key,
                                  "byte token " + std::to_string(i) + " to read <0xNN>, found '" + t.text + "'");
    }

    special_token_ids special;
    special.bos = detail::gguf_special_id(file, "tokenizer.ggml.bos_token_id", defaults.bos, n);
    special.eos = detail::gguf_special_id(file, "tokenizer.ggml.eos_token_id", defaults.eos, n);
    special.unk = detail::gguf_special_id(file, "tokenizer.ggml.unknown_token_id", defaults.unk, n);
    return vocabulary(std::move(tokens), special);
}

NEXTTOK_DECL bpe_tokenizer load_gguf_bpe_tokenizer(const gguf_file& file) {
    constexpr std::string_view pre_key = "tokenizer.ggml.pre";
    constexpr std::string_view merges_key = "tokenizer.ggml.merges";

    // llama.cpp reads an absent pre as "default" (with a warning that quality may degrade).
    const std::string_view pre_name = file.find_string(pre_key).value_or("default");
    const gguf_pre_tokenizer* pre = find_gguf_pre_tokenizer(pre_name);
    if (pre == nullptr) {
        const gguf_value* v = file.find(pre_key);
        throw unsupported_error(file.name() + ": metadata key '" + std::string(pre_key) + "' at offset " +
                                detail::hex_offset(v != nullptr ? v->offset : 0) + ": pre-tokenizer '" +
                                std::string(pre_name) + "' is not supported (supported: " + gguf_pre_tokenizer_names() +
                                ")");
    }

    vocabulary vocab = load_gguf_vocabulary(file, special_token_ids{});  // no default special ids
    const std::vector<std::string_view> lines = file.get_string_array(merges_key);
    std::vector<bpe_merge> merges;
    merges.reserve(lines.size());
    std::string problem;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto parts = detail::split_merge_line(lines[i]);
        if (!parts)
            detail::fail_gguf_key(
                file, merges_key,
                "merge " + std::to_string(i) + " to read '<left> <right>', found '" + std::string(lines[i]) + "'");
        const auto m = detail::resolve_bpe_merge(vocab, parts->first, parts->second, problem);
        if (!m)
            detail::fail_gguf_key(file, merges_key,
                                  "merge " + std::to_string(i) + " ('" + std::string(lines[i]) + "'): " + problem);
        merges.push_back(*m);
    }

    bpe_options options;
    options.ignore_merges = pre->ignore_merges;
    const std::optional<bool> add_bos = file.find_bool("tokenizer.ggml.add_bos_token");
    const std::optional<bool> add_eos = file.find_bool("tokenizer.ggml.add_eos_token");
    // As llama.cpp's check_add_special_token: asking for BOS/EOS without its id is an error.
    if (add_bos.value_or(false) && vocab.bos() == no_token)
        detail::fail_gguf_key(file, "tokenizer.ggml.add_bos_token",
                              "false, since tokenizer.ggml.bos_token_id is not set");
    if (add_eos.value_or(false) && vocab.eos() == no_token)
        detail::fail_gguf_key(file, "tokenizer.ggml.add_eos_token",
                              "false, since tokenizer.ggml.eos_token_id is not set");
    options.add_bos = add_bos.value_or(pre->add_bos && vocab.bos() != no_token);
    options.add_eos = add_eos.value_or(false);
    return bpe_tokenizer(std::move(vocab), merges, pre_tokenizer(pre->kind), options);
}

NEXTTOK_DECL tokenizer load_tokenizer(const gguf_file& file) {
    constexpr std::string_view model_key = "tokenizer.ggml.model";
    const std::optional<std::string_view> model = file.find_string(model_key);
    if (!model) throw format_error(file.name() + ": metadata key '" + std::string(model_key) + "' is missing");
    if (*model == "gpt2") return tokenizer(load_gguf_bpe_tokenizer(file));
    if (*model != "llama")
        throw unsupported_error(file.name() + ": metadata key '" + std::string(model_key) + "': tokenizer model '" +
                                std::string(*model) + "' is not supported (supported: 'llama', 'gpt2')");

    spm_options options;
    options.add_bos = file.find_bool("tokenizer.ggml.add_bos_token").value_or(options.add_bos);
    options.add_eos = file.find_bool("tokenizer.ggml.add_eos_token").value_or(options.add_eos);
    options.add_space_prefix = file.find_bool("tokenizer.ggml.add_space_prefix").value_or(options.add_space_prefix);
    return tokenizer(spm_tokenizer(load_gguf_vocabulary(file), options));
}

}  // namespace nexttok

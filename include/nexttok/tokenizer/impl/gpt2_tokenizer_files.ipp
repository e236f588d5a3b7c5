// The definitions of gpt2_tokenizer_files.hpp.
#pragma once

#include <nexttok/tokenizer/gpt2_tokenizer_files.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/json_file.hpp>
#include <nexttok/io/json_limits.hpp>
#include <nexttok/io/mapped_file.hpp>
#include <nexttok/tokenizer/bpe_tokenizer.hpp>
#include <nexttok/tokenizer/detail/merge_rules.hpp>
#include <nexttok/tokenizer/pre_tokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

NEXTTOK_DECL gpt2_files_options gpt2_files_defaults(pre_tokenizer_kind kind) {
    gpt2_files_options o;
    o.pre = kind;
    switch (kind) {
        case pre_tokenizer_kind::llama3:
            o.control_tokens = {"<|begin_of_text|>", "<|end_of_text|>"};
            o.bos = "<|begin_of_text|>";
            o.eos = "<|end_of_text|>";
            o.add_bos = true;
            break;
        case pre_tokenizer_kind::qwen2:
            o.control_tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
            o.eos = "<|endoftext|>";
            break;
        default:
            o.control_tokens = {"<|endoftext|>"};
            o.bos = o.eos = "<|endoftext|>";
            break;
    }
    return o;
}

namespace detail {

// encoder.json: text -> id, checked to be a permutation of 0..n-1.
inline std::vector<token_data> read_gpt2_encoder(const std::filesystem::path& path) {
    const nlohmann::json j = read_json_file(path);
    const json_fields f(path.filename().string());
    f.object(j, "");
    std::vector<token_data> tokens(j.size());
    std::vector<bool> seen(j.size(), false);
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& text = it.key();
        const std::int32_t id = f.id(*it, text);
        if (static_cast<std::size_t>(id) >= tokens.size() || seen[static_cast<std::size_t>(id)])
            f.fail(text, "ids 0.." + std::to_string(tokens.size() - 1) + ", each once (" +
                             std::to_string(tokens.size()) + " entries), found " + std::to_string(id) +
                             (static_cast<std::size_t>(id) < tokens.size() ? " again" : ""));
        seen[static_cast<std::size_t>(id)] = true;
        tokens[static_cast<std::size_t>(id)].text = text;
    }
    if (tokens.empty()) f.fail("", "at least one token");
    return tokens;
}

// vocab.bpe: the merge rules, resolved against vocab.
inline std::vector<bpe_merge> read_gpt2_merges(const std::filesystem::path& path, const vocabulary& vocab) {
    const mapped_file file(path);
    const std::string_view text(reinterpret_cast<const char*>(file.data()), file.size());
    std::vector<bpe_merge> merges;
    std::string problem;
    std::size_t line_number = 0;
    for (std::size_t begin = 0; begin < text.size();) {
        std::size_t end = text.find('\n', begin);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(begin, end - begin);
        const std::size_t offset = begin;
        begin = end + 1;
        ++line_number;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // a file saved with CRLF
        if (line.empty() || (line_number == 1 && line.starts_with("#version"))) continue;

        const auto fail = [&](const std::string& what) {
            throw format_error(file.name() + ": line " + std::to_string(line_number) + " at offset " +
                               hex_offset(offset) + ": " + what);
        };
        const auto parts = split_merge_line(line);
        if (!parts) fail("expected a merge '<left> <right>', found '" + quote_text(line) + "'");
        const auto m = resolve_bpe_merge(vocab, parts->first, parts->second, problem);
        if (!m) fail("merge '" + quote_text(line) + "': " + quote_text(problem, 2 * max_quote_bytes));
        merges.push_back(*m);
    }
    return merges;
}

}  // namespace detail

NEXTTOK_DECL tokenizer load_gpt2_tokenizer(const std::filesystem::path& encoder_json,
                                           const std::filesystem::path& vocab_bpe, const gpt2_files_options& options) {
    if (options.pre == pre_tokenizer_kind::custom)
        throw invalid_argument_error(
            "load_gpt2_tokenizer: a custom pre-tokenizer needs its pattern; use bpe_tokenizer directly");
    std::vector<token_data> tokens = detail::read_gpt2_encoder(encoder_json);
    for (const std::string& text : options.control_tokens) {
        const auto it = std::ranges::find(tokens, text, &token_data::text);
        if (it != tokens.end()) {
            it->type = token_type::control;
        } else {
            tokens.push_back({text, 0.0f, token_type::control});
        }
    }
    const auto id_of = [&](const std::string& text, const char* what) {
        if (text.empty()) return no_token;
        const auto it = std::ranges::find(tokens, text, &token_data::text);
        if (it == tokens.end())
            throw invalid_argument_error(std::string("load_gpt2_tokenizer: the ") + what + " text '" + text +
                                         "' is neither in " + encoder_json.filename().string() +
                                         " nor a control token");
        return static_cast<token_id>(it - tokens.begin());
    };
    special_token_ids special;
    special.bos = id_of(options.bos, "BOS");
    special.eos = id_of(options.eos, "EOS");
    if (options.add_bos && special.bos == no_token)
        throw invalid_argument_error("load_gpt2_tokenizer: add_bos without a BOS text");

    vocabulary vocab(std::move(tokens), special);
    const std::vector<bpe_merge> merges = detail::read_gpt2_merges(vocab_bpe, vocab);
    bpe_options bpe;
    bpe.ignore_merges = options.pre == pre_tokenizer_kind::llama3;
    bpe.add_bos = options.add_bos;
    return tokenizer(bpe_tokenizer(std::move(vocab), merges, pre_tokenizer(options.pre), bpe));
}

NEXTTOK_DECL tokenizer load_gpt2_tokenizer(const std::filesystem::path& encoder_json,
                                           const std::filesystem::path& vocab_bpe, pre_tokenizer_kind pre) {
    return load_gpt2_tokenizer(encoder_json, vocab_bpe, gpt2_files_defaults(pre));
}

}  // namespace nexttok

// The definitions of llama2c_tokenizer_file.hpp.
#pragma once

#include <nexttok/tokenizer/llama2c_tokenizer_file.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/byte_reader.hpp>
#include <nexttok/io/mapped_file.hpp>
#include <nexttok/tokenizer/spm_tokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

namespace detail {

// The largest max_token_length we accept: llama2.c keeps a buffer of twice this per encode, and real
// vocabularies stay under a few hundred bytes per piece.
inline constexpr std::int32_t llama2c_max_token_length_limit = 1 << 16;

inline token_data llama2c_token(std::size_t id, std::string_view raw, float score) {
    token_data t;
    t.score = score;
    if (id == 0) {
        t.text = "<unk>";
        t.type = token_type::unknown;
        return t;
    }
    if (id == 1 || id == 2) {
        t.text = id == 1 ? "<s>" : "</s>";
        t.type = token_type::control;
        return t;
    }
    if (raw.empty()) {
        t.type = token_type::control;
    } else if (parse_byte_token(raw)) {
        t.type = token_type::byte;
    }
    t.text.reserve(raw.size());
    for (const char c : raw) {
        if (c == ' ')
            t.text += spm_tokenizer::space_symbol;
        else
            t.text += c;
    }
    return t;
}

}  // namespace detail

NEXTTOK_DECL vocabulary load_llama2c_vocabulary(const std::filesystem::path& path,
                                                std::optional<std::size_t> vocab_size) {
    const mapped_file file(path);
    byte_reader r(file.bytes(), file.name());

    const auto max_length = r.read<std::int32_t>("max_token_length");
    if (max_length <= 0 || max_length > detail::llama2c_max_token_length_limit)
        r.fail_at(0, "max_token_length",
                  "expected 1.." + std::to_string(detail::llama2c_max_token_length_limit) + ", found " +
                      std::to_string(max_length));
    if (vocab_size && (*vocab_size < 3 || *vocab_size > static_cast<std::size_t>(INT32_MAX)))
        throw invalid_argument_error("load_llama2c_vocabulary: vocab_size must be 3..2^31-1, got " +
                                     std::to_string(*vocab_size));

    std::vector<token_data> tokens;
    // Each token takes at least 8 bytes: the file size bounds the reservation, whatever vocab_size says.
    tokens.reserve(std::min(vocab_size.value_or(SIZE_MAX), r.remaining() / 8));
    while (vocab_size ? tokens.size() < *vocab_size : r.remaining() > 0) {
        const std::string field = "token " + std::to_string(tokens.size());
        const auto score = r.read<float>(field + " score");
        const std::size_t length_offset = r.offset();
        const auto length = r.read<std::int32_t>(field + " length");
        if (length < 0 || length > max_length)
            r.fail_at(
                length_offset, field + " length",
                "expected 0..max_token_length (" + std::to_string(max_length) + "), found " + std::to_string(length));
        const std::string_view raw = r.read_string_view(static_cast<std::uint64_t>(length), field + " text");
        tokens.push_back(detail::llama2c_token(tokens.size(), raw, score));
    }
    if (tokens.size() < 3)
        r.fail("token count", "at least 3 tokens (<unk>, <s>, </s>), found " + std::to_string(tokens.size()));

    return vocabulary(std::move(tokens), special_token_ids{.bos = 1, .eos = 2, .unk = 0});
}

NEXTTOK_DECL tokenizer load_llama2c_tokenizer(const std::filesystem::path& path,
                                              std::optional<std::size_t> vocab_size) {
    spm_options options;  // llama2.c: dummy prefix, BOS before the prompt, no EOS
    return tokenizer(spm_tokenizer(load_llama2c_vocabulary(path, vocab_size), options));
}

}  // namespace nexttok

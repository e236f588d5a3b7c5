// The definitions of spm_tokenizer.hpp.
#pragma once

#include <nexttok/tokenizer/spm_tokenizer.hpp>
#include <nexttok/tokenizer/detail/piece_tokenizer.hpp>
#include <nexttok/tokenizer/detail/special_partition.hpp>
#include <nexttok/tokenizer/detail/spm_merge.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

NEXTTOK_DECL spm_tokenizer::spm_tokenizer(vocabulary vocab, spm_options options)
        : piece_tokenizer(std::move(vocab), make_piece,
                          [&](const token_data& t) { return options.add_space_prefix && has_dummy_prefix(t); }),
          options_(options) {}

NEXTTOK_DECL std::vector<token_id> spm_tokenizer::encode(std::string_view text, bool add_bos,
                                                         bool parse_special) const {
    std::vector<token_id> out = bos_prefix(add_bos);
    // An empty text has no fragment, so no dummy prefix either (llama.cpp, and SentencePiece: "" -> []).
    if (text.empty()) return out;

    bool after_special = true;  // the first fragment gets the dummy prefix
    std::string escaped;
    for (const detail::text_fragment& f : detail::partition_special(vocab_, text, parse_special)) {
        if (f.id != no_token) {
            out.push_back(f.id);
            after_special = true;
            continue;
        }
        escaped.clear();
        if (options_.add_space_prefix && after_special) escaped += space_symbol;
        for (const char c : text.substr(f.begin, f.length)) {
            if (c == ' ')
                escaped += space_symbol;
            else
                escaped += c;
        }
        detail::spm_merge(vocab_, escaped).run(out);
        after_special = false;
    }
    return out;
}

NEXTTOK_DECL bool spm_tokenizer::has_dummy_prefix(const token_data& t) noexcept {
    return t.type != token_type::byte && t.type != token_type::control && t.type != token_type::unknown &&
           t.text.starts_with(space_symbol);
}

NEXTTOK_DECL std::string spm_tokenizer::make_piece(const token_data& t) {
    switch (t.type) {
        case token_type::control:
            return {};
        case token_type::unknown:
            return std::string(unknown_surface);
        case token_type::byte:
            return std::string(1, static_cast<char>(*detail::parse_byte_token(t.text)));
        default:
            break;
    }
    std::string piece;
    piece.reserve(t.text.size());
    for (std::size_t i = 0; i < t.text.size();) {
        if (std::string_view(t.text).substr(i).starts_with(space_symbol)) {
            piece += ' ';
            i += space_symbol.size();
        } else {
            piece += t.text[i++];
        }
    }
    return piece;
}

}  // namespace nexttok

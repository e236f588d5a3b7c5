// The definitions of vocabulary.hpp.
#pragma once

#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/error.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

NEXTTOK_DECL vocabulary::vocabulary(std::vector<token_data> tokens, special_token_ids special)
        : tokens_(std::move(tokens)), special_(special) {
    if (tokens_.empty()) throw invalid_argument_error("vocabulary: no tokens");
    if (tokens_.size() > static_cast<std::size_t>(INT32_MAX))
        throw invalid_argument_error("vocabulary: " + std::to_string(tokens_.size()) + " tokens do not fit token_id");
    check_special("bos", special_.bos);
    check_special("eos", special_.eos);
    check_special("unk", special_.unk);

    byte_tokens_.fill(no_token);
    by_text_.reserve(tokens_.size());
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
        const auto id = static_cast<token_id>(i);
        const token_data& t = tokens_[i];
        by_text_.emplace(t.text, id);  // a duplicate text keeps its first id
        if (t.type == token_type::byte) {
            const auto b = detail::parse_byte_token(t.text);
            if (!b)
                throw invalid_argument_error("vocabulary: token " + std::to_string(i) +
                                             " is a byte token but its text '" + t.text + "' is not <0xNN>");
            if (byte_tokens_[*b] == no_token) byte_tokens_[*b] = id;
        }
        if ((t.type == token_type::control || t.type == token_type::user_defined || t.type == token_type::unknown) &&
            !t.text.empty())
            special_texts_.push_back(id);
    }
    has_byte_fallback_ = std::ranges::none_of(byte_tokens_, [](token_id id) { return id == no_token; });
    // Longest first, so that "<s>" never pre-empts a longer special text that contains it.
    std::ranges::stable_sort(special_texts_, std::greater<>{},
                             [this](token_id id) { return tokens_[static_cast<std::size_t>(id)].text.size(); });
}

NEXTTOK_DECL token_id vocabulary::find(std::string_view text) const {
    const auto it = by_text_.find(text);
    return it == by_text_.end() ? no_token : it->second;
}

NEXTTOK_DECL void vocabulary::check_special(const char* what, token_id id) const {
    if (id != no_token && !contains(id))
        throw invalid_argument_error(std::string("vocabulary: ") + what + " id " + std::to_string(id) +
                                     " is out of range (" + std::to_string(tokens_.size()) + " tokens)");
}

NEXTTOK_DECL void vocabulary::fail_id(token_id id) const {
    throw invalid_argument_error("token id " + std::to_string(id) + " is out of range (vocabulary of " +
                                 std::to_string(tokens_.size()) + " tokens)");
}

}  // namespace nexttok

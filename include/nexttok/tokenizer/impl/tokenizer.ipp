// The definitions of tokenizer.hpp.
#pragma once

#include <nexttok/tokenizer/tokenizer.hpp>

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace nexttok {

NEXTTOK_DECL tokenizer::tokenizer(spm_tokenizer impl) : impl_(std::move(impl)) {}
NEXTTOK_DECL tokenizer::tokenizer(bpe_tokenizer impl) : impl_(std::move(impl)) {}

NEXTTOK_DECL std::vector<token_id> tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
    return std::visit([&](const auto& t) { return t.encode(text, add_bos, parse_special); }, impl_);
}

NEXTTOK_DECL std::string tokenizer::decode(std::span<const token_id> tokens) const {
    return std::visit([&](const auto& t) { return t.decode(tokens); }, impl_);
}

NEXTTOK_DECL void tokenizer::decode_piece(token_id id, decode_state& state, std::string& out) const {
    std::visit([&](const auto& t) { t.decode_piece(id, state, out); }, impl_);
}

NEXTTOK_DECL std::string tokenizer::token_to_piece(token_id id) const {
    return std::visit([&](const auto& t) { return t.token_to_piece(id); }, impl_);
}

NEXTTOK_DECL bool tokenizer::default_add_bos() const noexcept {
    return std::visit([](const auto& t) { return t.options().add_bos; }, impl_);
}

NEXTTOK_DECL bool tokenizer::default_add_eos() const noexcept {
    return std::visit([](const auto& t) { return t.options().add_eos; }, impl_);
}

NEXTTOK_DECL const vocabulary& tokenizer::vocab() const noexcept {
    return std::visit([](const auto& t) -> const vocabulary& { return t.vocab(); }, impl_);
}

}  // namespace nexttok

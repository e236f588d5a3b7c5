// The definitions of gguf_pre_tokenizers.hpp.
#pragma once

#include <nexttok/tokenizer/gguf_pre_tokenizers.hpp>
#include <nexttok/tokenizer/pre_tokenizer_kind.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace nexttok {

NEXTTOK_DECL const gguf_pre_tokenizer* find_gguf_pre_tokenizer(std::string_view name) noexcept {
    for (const gguf_pre_tokenizer& p : detail::gguf_pre::table)
        if (p.name == name) return &p;
    return nullptr;
}

NEXTTOK_DECL std::optional<pre_tokenizer_kind> pre_tokenizer_kind_from_gguf(std::string_view name) noexcept {
    const gguf_pre_tokenizer* p = find_gguf_pre_tokenizer(name);
    return p != nullptr ? std::optional(p->kind) : std::nullopt;
}

NEXTTOK_DECL std::string gguf_pre_tokenizer_names() {
    std::string s;
    for (const gguf_pre_tokenizer& p : detail::gguf_pre::table) {
        if (!s.empty()) s += ", ";
        s += '\'';
        s += p.name;
        s += '\'';
    }
    return s;
}

}  // namespace nexttok

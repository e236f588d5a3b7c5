// The definitions of architecture.hpp: look-ups in the table of known architectures.
#pragma once

#include <nexttok/model/architecture.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace nexttok {

NEXTTOK_DECL std::optional<architecture_traits> find_architecture(std::string_view name) noexcept {
    for (const architecture_traits& a : known_architectures)
        if (a.name == name) return a;
    return std::nullopt;
}

NEXTTOK_DECL std::optional<architecture_traits> find_hf_architecture(std::string_view cls) noexcept {
    for (const architecture_traits& a : known_architectures)
        for (std::string_view c : a.hf.classes)
            if (!c.empty() && c == cls) return a;
    return std::nullopt;
}

NEXTTOK_DECL std::string known_architecture_names() {
    std::string s;
    for (const architecture_traits& a : known_architectures) s += (s.empty() ? "" : ", ") + std::string(a.name);
    return s;
}

NEXTTOK_DECL std::string known_hf_class_names() {
    std::string s;
    for (const architecture_traits& a : known_architectures)
        for (std::string_view c : a.hf.classes)
            if (!c.empty()) s += (s.empty() ? "" : ", ") + std::string(c);
    return s;
}

}  // namespace nexttok

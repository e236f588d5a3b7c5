// The definitions of json_limits.hpp (quote_text), and the JSON library its templates instantiate.
#pragma once

#include <nexttok/io/json_limits.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace nexttok {

NEXTTOK_DECL std::string quote_text(std::string_view s, std::size_t max_bytes) {
    const bool cut = s.size() > max_bytes;
    std::size_t n = cut ? max_bytes : s.size();
    if (cut)
        while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80) --n;  // s[n] continues a character
    std::string out;
    out.reserve(n + 3);
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c == 0x7f) {
            static constexpr char digits[] = "0123456789abcdef";
            out += "\\x";
            out += digits[c >> 4];
            out += digits[c & 0xf];
        } else {
            out += static_cast<char>(c);
        }
    }
    if (cut) out += "...";
    return out;
}

}  // namespace nexttok

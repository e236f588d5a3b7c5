// UTF-8 scanning for the tokenizers, the streaming detokenizer and stop strings. Strict: well-formed means the
// byte sequences of Unicode table 3-7 (no overlong forms, no surrogates, nothing above U+10FFFF).
// Ill-formed input is never an error here: callers decide (the encoder makes a stray byte its own
// symbol; the detokenizer replaces it by U+FFFD, one per maximal subpart as Unicode recommends).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nexttok::detail {

enum class utf8_status {
    valid,       // a whole well-formed character
    incomplete,  // a proper prefix of a well-formed character, cut by the end of the input
    invalid,     // cannot start a well-formed character
};

struct utf8_scan {
    utf8_status status;
    std::size_t length;  // valid: the character; incomplete: the bytes present; invalid: the maximal subpart (>= 1)
};

inline constexpr std::string_view utf8_replacement_character = "\xEF\xBF\xBD";  // U+FFFD

// Classifies the sequence at the start of s (s must not be empty).
inline utf8_scan scan_utf8(std::string_view s) noexcept {
    const auto byte = [&](std::size_t i) {
        return static_cast<unsigned char>(s[i]);
    };
    const unsigned char lead = byte(0);
    if (lead < 0x80) return {utf8_status::valid, 1};

    // The second byte's range depends on the lead (this excludes overlongs, surrogates and > U+10FFFF);
    // every later byte is 80..BF.
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        n = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        n = 3;
        if (lead == 0xE0) lo = 0xA0;
        if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        n = 4;
        if (lead == 0xF0) lo = 0x90;
        if (lead == 0xF4) hi = 0x8F;
    } else {
        return {utf8_status::invalid, 1};  // 80..C1 (continuation or overlong lead), F5..FF
    }

    for (std::size_t i = 1; i < n; ++i) {
        if (i == s.size()) return {utf8_status::incomplete, i};
        const unsigned char b = byte(i);
        const bool ok = i == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
        if (!ok) return {utf8_status::invalid, i};
    }
    return {utf8_status::valid, n};
}

inline bool is_valid_utf8(std::string_view s) noexcept {
    while (!s.empty()) {
        const utf8_scan c = scan_utf8(s);
        if (c.status != utf8_status::valid) return false;
        s.remove_prefix(c.length);
    }
    return true;
}

// Appends s to out with every ill-formed subpart replaced by U+FFFD. When keep_incomplete_tail is
// true, a trailing incomplete character is not appended; the number of bytes held back is returned.
inline std::size_t append_sanitized_utf8(std::string_view s, std::string& out, bool keep_incomplete_tail) {
    std::size_t i = 0;
    while (i < s.size()) {
        const utf8_scan c = scan_utf8(s.substr(i));
        if (c.status == utf8_status::valid) {
            out.append(s.substr(i, c.length));
        } else if (c.status == utf8_status::incomplete && keep_incomplete_tail) {
            return s.size() - i;
        } else {
            out.append(utf8_replacement_character);
        }
        i += c.length;
    }
    return 0;
}

}  // namespace nexttok::detail

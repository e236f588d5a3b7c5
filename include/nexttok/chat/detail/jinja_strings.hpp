// Python's str semantics over UTF-8 bytes, for the chat-template renderer: templates index, slice,
// measure, strip and split strings by code point, with Python's notion of whitespace, as Jinja2
// does on Python str. Invalid UTF-8 is taken byte by byte (each stray byte one code point), so no
// input fails here.
#pragma once

#include <clocale>
#include <cstddef>
#include <cstdint>
#include <cwctype>
#include <string>
#include <string_view>
#include <vector>

#include <locale.h>

namespace nexttok::detail::jinja {

// Byte length of the UTF-8 sequence starting at s[i] (1 for a stray or truncated byte).
inline std::size_t utf8_length_at(std::string_view s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 1;
    if (i + n > s.size()) return 1;
    for (std::size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 1;
    return n;
}

inline char32_t utf8_decode_at(std::string_view s, std::size_t i, std::size_t n) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (n == 1) return c;
    char32_t cp = c & (0x7f >> n);
    for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    return cp;
}

inline void utf8_append(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

// Byte offsets of the code points of s, plus s.size() at the end: (n_code_points + 1).
inline std::vector<std::size_t> code_point_offsets(std::string_view s) {
    std::vector<std::size_t> offsets;
    offsets.reserve(s.size() + 1);
    for (std::size_t i = 0; i < s.size(); i += utf8_length_at(s, i)) offsets.push_back(i);
    offsets.push_back(s.size());
    return offsets;
}

inline std::size_t code_point_count(std::string_view s) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size(); i += utf8_length_at(s, i)) ++n;
    return n;
}

// Python's str.isspace() for one code point.
inline bool is_python_space(char32_t c) {
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

// Python's str.strip / lstrip / rstrip: without chars, whitespace; with chars, any of its code points.
inline std::string_view python_strip(std::string_view s, bool left, bool right, const std::string* chars = nullptr) {
    const auto strip_me = [&](char32_t c) {
        if (chars == nullptr) return is_python_space(c);
        const std::string_view set = *chars;
        for (std::size_t i = 0; i < set.size();) {
            const std::size_t n = utf8_length_at(set, i);
            if (utf8_decode_at(set, i, n) == c) return true;
            i += n;
        }
        return false;
    };
    const std::vector<std::size_t> at = code_point_offsets(s);  // (n + 1) byte offsets
    std::size_t first = 0, last = at.size() - 1;                // code points [first, last)
    const auto code_point = [&](std::size_t k) {
        return utf8_decode_at(s, at[k], at[k + 1] - at[k]);
    };
    if (left)
        while (first < last && strip_me(code_point(first))) ++first;
    if (right)
        while (last > first && strip_me(code_point(last - 1))) --last;
    const std::size_t begin = at[first], end = at[last];
    return s.substr(begin, end - begin);
}

// Python's str.split(): with no separator, runs of whitespace, no empty pieces; with one, exact
// pieces. maxsplit < 0 means no limit.
inline std::vector<std::string> python_split(std::string_view s, const std::string* sep, long long maxsplit) {
    std::vector<std::string> parts;
    if (sep != nullptr) {
        std::size_t pos = 0;
        for (std::size_t hit; (maxsplit < 0 || static_cast<long long>(parts.size()) < maxsplit) &&
                              (hit = s.find(*sep, pos)) != std::string_view::npos;
             pos = hit + sep->size())
            parts.emplace_back(s.substr(pos, hit - pos));
        parts.emplace_back(s.substr(pos));
        return parts;
    }
    std::size_t i = 0;
    while (true) {
        while (i < s.size()) {  // skip whitespace
            const std::size_t n = utf8_length_at(s, i);
            if (!is_python_space(utf8_decode_at(s, i, n))) break;
            i += n;
        }
        if (i >= s.size()) break;
        if (maxsplit >= 0 && static_cast<long long>(parts.size()) == maxsplit) {
            parts.emplace_back(python_strip(s.substr(i), false, true));
            break;
        }
        const std::size_t start = i;
        while (i < s.size()) {
            const std::size_t n = utf8_length_at(s, i);
            if (is_python_space(utf8_decode_at(s, i, n))) break;
            i += n;
        }
        parts.emplace_back(s.substr(start, i - start));
    }
    return parts;
}

// Case mapping of one code point: ASCII directly, the rest through the C.UTF-8 locale's tables
// (one-to-one mappings only: Python's "ß".upper() == "SS" becomes "ß" here).
inline char32_t map_case(char32_t c, bool upper) {
    if (c < 0x80) {
        if (upper && c >= 'a' && c <= 'z') return c - 32;
        if (!upper && c >= 'A' && c <= 'Z') return c + 32;
        return c;
    }
    static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
    if (utf8 == static_cast<locale_t>(nullptr)) return c;
    const auto w = static_cast<wint_t>(c);
    return static_cast<char32_t>(upper ? towupper_l(w, utf8) : towlower_l(w, utf8));
}

// Python's str.upper / lower / capitalize / title.
enum class case_mode { upper, lower, capitalize, title };

inline std::string python_case(std::string_view s, case_mode mode) {
    std::string out;
    out.reserve(s.size());
    bool word_start = true;  // title: after a non-letter
    bool first = true;
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_length_at(s, i);
        const char32_t c = utf8_decode_at(s, i, n);
        bool up = false;
        switch (mode) {
            case case_mode::upper:
                up = true;
                break;
            case case_mode::lower:
                up = false;
                break;
            case case_mode::capitalize:
                up = first;
                break;
            case case_mode::title:
                up = word_start;
                break;
        }
        const char32_t mapped = map_case(c, up);
        utf8_append(out, mapped);
        const bool cased = map_case(c, true) != c || map_case(c, false) != c;
        word_start = !cased;
        first = false;
        i += n;
    }
    return out;
}

inline bool python_isdigit(std::string_view s) {
    if (s.empty()) return false;
    for (const char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

}  // namespace nexttok::detail::jinja

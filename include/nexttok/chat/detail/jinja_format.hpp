// Values as Python prints them: str() for {{ output }} and the string filter, repr() inside lists
// and dicts, and json.dumps(ensure_ascii=False) for the tojson filter that Hugging Face's
// apply_chat_template installs (Python's separators: ", " and ": ", or "," with an indent).
#pragma once

#include <nexttok/chat/detail/jinja_value.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace nexttok::detail::jinja {

// Python's repr(float): the shortest digits that round-trip, fixed notation for exponents -4..15,
// scientific with a two-digit exponent otherwise ("1e+16", "1e-05", "0.0001", "1.0").
inline std::string python_float(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::scientific);
    const std::string_view sci(buffer, static_cast<std::size_t>(end - buffer));  // "-d.ddde+XX"
    const std::size_t e_pos = sci.find('e');
    std::string_view mantissa = sci.substr(0, e_pos);
    const int exponent = std::stoi(std::string(sci.substr(e_pos + 1)));
    std::string sign;
    if (mantissa.front() == '-') {
        sign = "-";
        mantissa.remove_prefix(1);
    }
    std::string digits;
    for (const char c : mantissa)
        if (c != '.') digits += c;
    if (exponent >= -4 && exponent <= 15) {
        std::string out;
        if (exponent < 0) {
            out = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
        } else {
            const auto int_digits = static_cast<std::size_t>(exponent) + 1;
            if (digits.size() <= int_digits) {
                out = digits + std::string(int_digits - digits.size(), '0') + ".0";
            } else {
                out = digits.substr(0, int_digits) + "." + digits.substr(int_digits);
            }
        }
        return sign + out;
    }
    std::string out = sign + digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
    return out + exp;
}

// Python's repr(str): single quotes unless the text has ' and no ".
inline std::string python_repr_string(const std::string& s) {
    const bool double_quotes = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
    const char quote = double_quotes ? '"' : '\'';
    std::string out(1, quote);
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == quote || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (u < 0x20 || u == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", u);
            out += hex;
        } else {
            out += c;
        }
    }
    out += quote;
    return out;
}

inline std::string python_repr(const json& j);

// Python's str() of data.
inline std::string python_str(const json& j) {
    switch (j.type()) {
        case json::value_t::null:
            return "None";
        case json::value_t::boolean:
            return j.get<bool>() ? "True" : "False";
        case json::value_t::number_integer:
            return std::to_string(j.get<std::int64_t>());
        case json::value_t::number_unsigned:
            return std::to_string(j.get<std::uint64_t>());
        case json::value_t::number_float:
            return python_float(j.get<double>());
        case json::value_t::string:
            return j.get<std::string>();
        case json::value_t::array: {
            const bool tuple = is_tuple(j);
            std::string out = tuple ? "(" : "[";
            for (std::size_t i = 0; i < j.size(); ++i) {
                if (i) out += ", ";
                out += python_repr(j[i]);
            }
            if (tuple && j.size() == 1) out += ",";
            return out + (tuple ? ")" : "]");
        }
        case json::value_t::object: {
            std::string out = "{";
            bool first = true;
            for (const auto& [key, item] : j.items()) {
                out += (first ? "" : ", ") + python_repr_string(key) + ": " + python_repr(item);
                first = false;
            }
            return out + "}";
        }
        default:
            fail("cannot print a binary value");
    }
}

inline std::string python_repr(const json& j) {
    return j.is_string() ? python_repr_string(j.get<std::string>()) : python_str(j);
}

// str() of any value: undefined prints as nothing, as Jinja2's default Undefined does.
inline std::string to_output(const value& v) {
    if (v.is_undefined()) return "";
    if (v.is_callable()) return "<function " + v.function().name + ">";
    if (v.is_namespace()) return "<Namespace " + python_str(v.to_json()) + ">";
    return python_str(v.data());
}

inline void json_escape(std::string& out, const std::string& s) {
    out += '"';
    for (const char c : s) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char hex[8];
                    std::snprintf(hex, sizeof hex, "\\u%04x", static_cast<unsigned char>(c));
                    out += hex;
                } else {
                    out += c;
                }
        }
    }
    out += '"';
}

// The options of Python's json.dumps that tojson passes on.
struct json_style {
    int indent = -1;                    // < 0: everything on one line
    std::string item_separator = ", ";  // Python's default; "," when indenting
    std::string key_separator = ": ";
    bool sort_keys = false;
};

// Python's json.dumps(j, ensure_ascii=False, ...) with the given style.
inline void python_json_dumps(std::string& out, const json& j, const json_style& style, int depth = 0) {
    const int indent = style.indent;
    const bool sort_keys = style.sort_keys;
    const auto newline = [&](int level) {
        out += '\n';
        out.append(static_cast<std::size_t>(indent * level), ' ');
    };
    const std::string& item_separator = style.item_separator;
    switch (j.type()) {
        case json::value_t::null:
            out += "null";
            return;
        case json::value_t::boolean:
            out += j.get<bool>() ? "true" : "false";
            return;
        case json::value_t::number_float: {
            const double d = j.get<double>();
            out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : python_float(d);
            return;
        }
        case json::value_t::number_integer:
        case json::value_t::number_unsigned:
            out += python_str(j);
            return;
        case json::value_t::string:
            json_escape(out, j.get_ref<const std::string&>());
            return;
        case json::value_t::array:
            if (j.empty()) {
                out += "[]";
                return;
            }
            out += '[';
            for (std::size_t i = 0; i < j.size(); ++i) {
                if (i) out += item_separator;
                if (indent >= 0) newline(depth + 1);
                python_json_dumps(out, j[i], style, depth + 1);
            }
            if (indent >= 0) newline(depth);
            out += ']';
            return;
        case json::value_t::object: {
            if (j.empty()) {
                out += "{}";
                return;
            }
            std::vector<std::pair<const std::string*, const json*>> items;
            for (auto it = j.begin(); it != j.end(); ++it) items.emplace_back(&it.key(), &it.value());
            if (sort_keys) std::ranges::sort(items, [](const auto& a, const auto& b) { return *a.first < *b.first; });
            out += '{';
            for (std::size_t i = 0; i < items.size(); ++i) {
                if (i) out += item_separator;
                if (indent >= 0) newline(depth + 1);
                json_escape(out, *items[i].first);
                out += style.key_separator;
                python_json_dumps(out, *items[i].second, style, depth + 1);
            }
            if (indent >= 0) newline(depth);
            out += '}';
            return;
        }
        default:
            fail("tojson: cannot serialize a binary value");
    }
}

}  // namespace nexttok::detail::jinja

// Reading untrusted JSON (config.json, tokenizer.json, tokenizer_config.json, a safetensors header)
// with bounded nesting, and quoting what it holds in error messages with bounded length.
//
// Why: nlohmann's parser is iterative, but copying, comparing and dump() of a value recurse once
// per level, so a 2 MB file nested a million levels deep overflows the stack the first time anything
// recursive touches it; and an error message that prints the offending value can grow as large as
// the file. So the depth is refused WHILE parsing (no deep value ever exists), and error messages
// quote a short prefix only. Model and tokenizer files need fewer than 10 levels.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>

#include <nlohmann/json_fwd.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace nexttok {

// The deepest nesting of objects and arrays a file may hold ({"a": [1]} is 2 levels).
inline constexpr int max_json_depth = 64;

// The usual length of a quoted prefix in an error message, in bytes.
inline constexpr std::size_t max_quote_bytes = 80;

// Parses `text` as JSON, refusing more than `max_depth` nested objects/arrays before building them:
// a format_error "<where>: JSON nested deeper than 64 levels (objects and arrays)". `where` names the
// file (and the place in it). Syntax errors stay nlohmann::json::parse_error for the caller to word
// (quote their what() with quote_text: its "last read" part can hold a whole string literal).
template <class Json = nlohmann::json>
Json parse_json_bounded(std::string_view text, std::string_view where, int max_depth = max_json_depth) {
    // The callback sees a container's start with depth = the number of containers around it.
    const typename Json::parser_callback_t limit = [&](int depth, typename Json::parse_event_t event, Json&) {
        if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) &&
            depth >= max_depth)
            throw format_error(std::string(where) + ": JSON nested deeper than " + std::to_string(max_depth) +
                               " levels (objects and arrays)");
        return true;
    };
    return Json::parse(text.data(), text.data() + text.size(), limit);
}

// At most `max_bytes` of `s` (cut at a UTF-8 character boundary, then "..."), with control bytes
// written as \xNN so that a message stays on one line. Cost: O(max_bytes).
NEXTTOK_DECL std::string quote_text(std::string_view s, std::size_t max_bytes = max_quote_bytes);

namespace detail {

// Writes v as JSON into out, stopping once out holds more than `limit` bytes and writing "..." for
// containers deeper than 8 levels: the recursion is bounded whatever v holds.
template <class Json>
void quote_json_into(std::string& out, const Json& v, std::size_t limit, int depth) {
    constexpr int max_quoted_depth = 8;
    const auto dump_string = [&](std::string_view s) {
        // One more byte than fits, so that the caller sees the cut; invalid UTF-8 becomes U+FFFD.
        out += Json(std::string(s.substr(0, limit + 1 - std::min(out.size(), limit))))
                   .dump(-1, ' ', false, Json::error_handler_t::replace);
    };
    if (v.is_object() || v.is_array()) {
        const bool object = v.is_object();
        out += object ? '{' : '[';
        if (depth >= max_quoted_depth && !v.empty()) {
            out += "...";
        } else {
            bool first = true;
            for (auto it = v.begin(); it != v.end() && out.size() <= limit; ++it) {
                if (!first) out += ',';
                first = false;
                if (object) {
                    dump_string(it.key());
                    out += ':';
                }
                quote_json_into(out, *it, limit, depth + 1);
            }
        }
        out += object ? '}' : ']';
    } else if (v.is_string()) {
        dump_string(v.template get_ref<const typename Json::string_t&>());
    } else if (v.is_binary()) {
        out += "<binary>";
    } else if (v.is_discarded()) {
        out += "<discarded>";
    } else {
        out += v.dump();  // a number, true, false or null: short
    }
}

}  // namespace detail

// parse_json_bounded for a file's text, every error a format_error: a syntax error names `where`, the
// line and column (from 1) and the byte offset, then nlohmann's reason, quoted short ("config.json:
// not valid JSON at line 3, column 14 (byte offset 0x2a): syntax error while parsing object - ...");
// a number too large for a double is "<where>: not valid JSON: ...number overflow...".
template <class Json = nlohmann::json>
Json parse_json_text(std::string_view text, std::string_view where, int max_depth = max_json_depth) {
    try {
        return parse_json_bounded<Json>(text, where, max_depth);
    } catch (const typename Json::parse_error& e) {
        // e.byte counts from 1 and points at the character that could not be read.
        const std::size_t offset = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
        const std::string_view before = text.substr(0, offset);
        const std::size_t line = 1 + static_cast<std::size_t>(std::ranges::count(before, '\n'));
        const std::size_t last_newline = before.rfind('\n');
        const std::size_t line_start = last_newline == std::string_view::npos ? 0 : last_newline + 1;
        // what() is "[json.exception.parse_error.101] parse error at line L, column C: <reason>".
        std::string_view reason = e.what();
        if (const auto at = reason.find("column "); at != std::string_view::npos)
            if (const auto colon = reason.find(": ", at); colon != std::string_view::npos)
                reason.remove_prefix(colon + 2);
        throw format_error(std::string(where) + ": not valid JSON at line " + std::to_string(line) + ", column " +
                           std::to_string(offset - line_start + 1) + " (byte offset " + detail::hex_offset(offset) +
                           "): " + quote_text(reason, 2 * max_quote_bytes));
    } catch (const typename Json::exception& e) {
        throw format_error(std::string(where) + ": not valid JSON: " + quote_text(e.what(), 2 * max_quote_bytes));
    }
}

// v written as JSON, at most `max_bytes` of it (then "..."). Cost: O(max_bytes), whatever the size
// or depth of v; safe on values that were not parsed with a depth bound.
template <class Json>
std::string quote_json(const Json& v, std::size_t max_bytes = max_quote_bytes) {
    std::string out;
    detail::quote_json_into(out, v, max_bytes, 0);
    return out.size() > max_bytes ? quote_text(out, max_bytes) : quote_text(out, out.size());
}

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/io/impl/json_limits.ipp>
#endif

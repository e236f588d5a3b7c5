// The chat-template lexer: template source -> tokens, with Jinja2's whitespace rules as Hugging
// Face's apply_chat_template configures them: trim_blocks (the first newline after a block or
// comment tag is dropped), lstrip_blocks (spaces and tabs before a block or comment tag at the
// start of a line are dropped), "-" on a delimiter strips all whitespace on that side and "+"
// disables lstrip_blocks / trim_blocks; newlines normalized to "\n", one trailing newline of the
// source dropped (keep_trailing_newline off), {% raw %} bodies kept verbatim.
#pragma once

#include <nexttok/chat/chat_template_error.hpp>
#include <nexttok/chat/detail/jinja_strings.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok::detail::jinja {

enum class token_kind {
    text,
    variable_begin,
    variable_end,
    block_begin,
    block_end,
    name,
    string,
    integer,
    floating,
    op,
    end
};

struct token {
    token_kind kind = token_kind::end;
    std::string text;  // text: the data; string: the decoded literal; op: the operator; name, numbers: spelled
    source_location at;
};

class lexer {
public:
    lexer(std::string_view source, const std::string& template_name) : name_(template_name) {
        // Newlines: \r\n and \r become \n; one trailing newline goes (keep_trailing_newline=False).
        for (std::size_t i = 0; i < source.size(); ++i) {
            if (source[i] == '\r') {
                src_ += '\n';
                if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
            } else {
                src_ += source[i];
            }
        }
        if (!src_.empty() && src_.back() == '\n') src_.pop_back();
        line_starts_.push_back(0);
        for (std::size_t i = 0; i < src_.size(); ++i)
            if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }

    std::vector<token> run() {
        bool line_starting = true;  // the text to come starts a line (lstrip_blocks applies at its end)
        while (pos_ < src_.size()) {
            const std::size_t start = find_tag(pos_);
            std::string text = src_.substr(pos_, start - pos_);
            if (start == src_.size()) {
                emit_text(std::move(text), pos_);
                break;
            }
            const char kind = src_[start + 1];  // '{', '%' or '#'
            const char sign = start + 2 < src_.size() ? src_[start + 2] : '\0';
            strip_before_tag(text, kind, sign, line_starting);
            emit_text(std::move(text), pos_);
            pos_ = start + 2 + (sign == '-' || sign == '+' ? 1 : 0);
            if (kind == '#') {
                skip_comment(start);
            } else if (kind == '%' && raw_block(start)) {
                // handled
            } else {
                tag(kind, start);
            }
            line_starting = pos_ > 0 && src_[pos_ - 1] == '\n';
        }
        tokens_.push_back({token_kind::end, "", location(src_.size())});
        return std::move(tokens_);
    }

private:
    source_location location(std::size_t offset) const {
        const auto after = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
        const auto line = static_cast<std::size_t>(after - line_starts_.begin()) - 1;
        return {static_cast<int>(line) + 1, static_cast<int>(offset - line_starts_[line]) + 1};
    }

    [[noreturn]] void error(std::size_t offset, const std::string& message) const {
        throw chat_template_error(chat_template_where(name_, location(offset)) + message);
    }

    // The next "{{", "{%" or "{#" at or after from; src_.size() when none.
    std::size_t find_tag(std::size_t from) const {
        for (std::size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1))
            if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
        return src_.size();
    }

    static bool all_blank(std::string_view s) { return s.find_first_not_of(" \t") == std::string_view::npos; }

    // "{%-" strips all whitespace before the tag; lstrip_blocks strips a line's indentation before a
    // block or comment tag (not before "{{", and not with "{%+").
    static void strip_before_tag(std::string& text, char kind, char sign, bool line_starting) {
        if (sign == '-') {
            text.resize(python_strip(text, false, true).size());
        } else if (sign != '+' && kind != '{') {
            const std::size_t newline = text.rfind('\n');
            const std::size_t l_pos = newline == std::string::npos ? 0 : newline + 1;
            if ((l_pos > 0 || line_starting) && all_blank(std::string_view(text).substr(l_pos))) text.resize(l_pos);
        }
    }

    void emit_text(std::string text, std::size_t offset) {
        if (!text.empty()) tokens_.push_back({token_kind::text, std::move(text), location(offset)});
    }

    // After an end delimiter: "-" eats all whitespace, trim_blocks one newline after blocks and comments.
    void after_end(char sign, bool block_or_comment) {
        if (sign == '-') {
            const std::string_view rest = std::string_view(src_).substr(pos_);
            pos_ += rest.size() - python_strip(rest, true, false).size();
        } else if (sign != '+' && block_or_comment && pos_ < src_.size() && src_[pos_] == '\n') {
            ++pos_;
        }
    }

    void skip_comment(std::size_t start) {
        const std::size_t close = src_.find("#}", pos_);
        if (close == std::string::npos) error(start, "unexpected end of template: the comment is not closed with '#}'");
        const char sign = close > pos_ ? src_[close - 1] : '\0';
        pos_ = close + 2;
        after_end(sign, true);
    }

    // "{% raw %}...{% endraw %}": the body is text, whatever delimiters it holds.
    bool raw_block(std::size_t start) {
        std::size_t p = skip_spaces(pos_);
        if (src_.compare(p, 3, "raw") != 0) return false;
        p = skip_spaces(p + 3);
        char sign = '\0';
        if (p < src_.size() && src_[p] == '-') sign = src_[p++];
        if (src_.compare(p, 2, "%}") != 0) return false;
        pos_ = p + 2;
        after_end(sign, false);
        for (std::size_t tag = find_tag(pos_); tag < src_.size(); tag = find_tag(tag + 1)) {
            if (src_[tag + 1] != '%') continue;
            const char open_sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
            std::size_t q = skip_spaces(tag + 2 + (open_sign == '-' || open_sign == '+' ? 1 : 0));
            if (src_.compare(q, 6, "endraw") != 0) continue;
            q = skip_spaces(q + 6);
            char close_sign = '\0';
            if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) close_sign = src_[q++];
            if (src_.compare(q, 2, "%}") != 0) continue;
            std::string body = src_.substr(pos_, tag - pos_);
            strip_before_tag(body, '%', open_sign, false);
            emit_text(std::move(body), pos_);
            pos_ = q + 2;
            after_end(close_sign, true);
            return true;
        }
        error(start, "unexpected end of template: the raw block is not closed with '{% endraw %}'");
    }

    std::size_t skip_spaces(std::size_t p) const {
        while (p < src_.size() && is_space(src_[p])) ++p;
        return p;
    }

    static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
    static bool is_digit(char c) { return c >= '0' && c <= '9'; }
    static bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
    static bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

    // The tokens of one "{{ ... }}" or "{% ... %}" tag, up to its end delimiter (looked for only
    // while brackets are balanced, so "{{ {'a': {'b': 1}} }}" works).
    void tag(char kind, std::size_t start) {
        const bool block = kind == '%';
        tokens_.push_back({block ? token_kind::block_begin : token_kind::variable_begin, "", location(start)});
        std::string balance;  // the closing brackets expected, innermost last
        while (true) {
            pos_ = skip_spaces(pos_);
            if (pos_ >= src_.size())
                error(start, std::string("unexpected end of template: the tag is not closed with '") +
                                 (block ? "%}" : "}}") + "'");
            if (balance.empty()) {
                const char close = block ? '%' : '}';
                const char c = src_[pos_];
                const bool signed_end = (c == '-' || (block && c == '+')) && pos_ + 2 < src_.size() &&
                                        src_[pos_ + 1] == close && src_[pos_ + 2] == '}';
                if (signed_end || (c == close && pos_ + 1 < src_.size() && src_[pos_ + 1] == '}')) {
                    const std::size_t at = pos_;
                    pos_ += signed_end ? 3 : 2;
                    after_end(signed_end ? c : '\0', block);
                    tokens_.push_back({block ? token_kind::block_end : token_kind::variable_end, "", location(at)});
                    return;
                }
            }
            lex_token(balance);
        }
    }

    void lex_token(std::string& balance) {
        const std::size_t at = pos_;
        const char c = src_[pos_];
        if (is_digit(c)) return lex_number();
        if (is_name_start(c)) {
            while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
            tokens_.push_back({token_kind::name, src_.substr(at, pos_ - at), location(at)});
            return;
        }
        if (c == '\'' || c == '"') return lex_string();
        static constexpr std::string_view two_char[] = {"//", "**", "==", "!=", ">=", "<="};
        for (const std::string_view op : two_char) {
            if (src_.compare(pos_, 2, op) == 0) {
                pos_ += 2;
                tokens_.push_back({token_kind::op, std::string(op), location(at)});
                return;
            }
        }
        if (std::string_view("+-/*%~[](){}><=.:|,;").find(c) == std::string_view::npos)
            error(at, std::string("unexpected character '") + c + "'");
        if (c == '(' || c == '[' || c == '{') balance += c == '(' ? ')' : c == '[' ? ']' : '}';
        if (c == ')' || c == ']' || c == '}') {
            if (balance.empty() || balance.back() != c) error(at, std::string("unexpected '") + c + "'");
            balance.pop_back();
        }
        ++pos_;
        tokens_.push_back({token_kind::op, std::string(1, c), location(at)});
    }

    // Integers "42", "1_000"; floats "1.5", "2e3", "1.5e-3" (never "1." nor ".5").
    void lex_number() {
        const std::size_t at = pos_;
        const auto digits = [&] {
            while (pos_ < src_.size() &&
                   (is_digit(src_[pos_]) || (src_[pos_] == '_' && pos_ + 1 < src_.size() && is_digit(src_[pos_ + 1]))))
                ++pos_;
        };
        digits();
        bool floating = false;
        if (pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
            ++pos_;
            digits();
            floating = true;
        }
        if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
            std::size_t p = pos_ + 1;
            if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
            if (p < src_.size() && is_digit(src_[p])) {
                pos_ = p;
                digits();
                floating = true;
            }
        }
        std::string text;
        for (std::size_t i = at; i < pos_; ++i)
            if (src_[i] != '_') text += src_[i];
        tokens_.push_back({floating ? token_kind::floating : token_kind::integer, std::move(text), location(at)});
    }

    // A quoted literal with Python's escapes (\n, \t, \\, \', \", \xhh, \uhhhh, \Uhhhhhhhh, octal);
    // an unknown escape keeps its backslash, as Python does.
    void lex_string() {
        const std::size_t at = pos_;
        const char quote = src_[pos_++];
        std::string out;
        while (true) {
            if (pos_ >= src_.size()) error(at, "unexpected end of template: the string is not closed");
            const char c = src_[pos_++];
            if (c == quote) break;
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= src_.size()) error(at, "unexpected end of template: the string is not closed");
            const char e = src_[pos_++];
            switch (e) {
                case 'n':
                    out += '\n';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 'a':
                    out += '\a';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'v':
                    out += '\v';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '\'':
                    out += '\'';
                    break;
                case '"':
                    out += '"';
                    break;
                case '\n':
                    break;  // a backslash-newline continues the line
                case 'x':
                    out_code_point(out, 2, at);
                    break;
                case 'u':
                    out_code_point(out, 4, at);
                    break;
                case 'U':
                    out_code_point(out, 8, at);
                    break;
                default:
                    if (e >= '0' && e <= '7') {
                        char32_t cp = static_cast<char32_t>(e - '0');
                        for (int k = 0; k < 2 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7'; ++k)
                            cp = cp * 8 + static_cast<char32_t>(src_[pos_++] - '0');
                        utf8_append(out, cp);
                    } else {
                        out += '\\';
                        out += e;
                    }
            }
        }
        tokens_.push_back({token_kind::string, std::move(out), location(at)});
    }

    void out_code_point(std::string& out, int n_digits, std::size_t at) {
        char32_t cp = 0;
        for (int k = 0; k < n_digits; ++k) {
            const char h = pos_ < src_.size() ? src_[pos_] : '\0';
            const int d = h >= '0' && h <= '9'   ? h - '0'
                          : h >= 'a' && h <= 'f' ? h - 'a' + 10
                          : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                 : -1;
            if (d < 0) error(at, "truncated \\x, \\u or \\U escape in a string");
            cp = cp * 16 + static_cast<char32_t>(d);
            ++pos_;
        }
        if (cp > 0x10ffff) error(at, "a \\U escape beyond U+10FFFF in a string");
        utf8_append(out, cp);
    }

    const std::string& name_;
    std::string src_;
    std::vector<std::size_t> line_starts_;  // byte offset of each line's start
    std::size_t pos_ = 0;
    std::vector<token> tokens_;
};

}  // namespace nexttok::detail::jinja

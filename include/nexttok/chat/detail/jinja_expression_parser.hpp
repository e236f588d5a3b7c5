// Parsing Jinja2 expressions, with Jinja2's precedence (lowest first): "x if c else y", or, and,
// not, comparisons and in / not in, + -, ~, * / // %, **, unary - +, then postfix .attr, [index],
// [a:b:c], calls, | filters and "is" tests. The statement parser (jinja_parser.hpp) builds on it.
#pragma once

#include <nexttok/chat/chat_template_error.hpp>
#include <nexttok/chat/detail/jinja_ast.hpp>
#include <nexttok/chat/detail/jinja_lexer.hpp>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok::detail::jinja {

class expression_parser {
public:
    expression_parser(std::vector<token> tokens, const std::string& template_name)
            : tokens_(std::move(tokens)), name_(template_name) {}

protected:
    const token& current() const { return tokens_[pos_]; }
    const token& peek(std::size_t ahead = 1) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
    const token& advance() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }

    bool is_op(std::string_view op) const { return current().kind == token_kind::op && current().text == op; }
    bool is_name(std::string_view name) const { return current().kind == token_kind::name && current().text == name; }

    static std::string describe(const token& t) {
        switch (t.kind) {
            case token_kind::end:
                return "end of template";
            case token_kind::block_end:
                return "end of statement block";
            case token_kind::variable_end:
                return "end of print statement";
            case token_kind::text:
                return "template text";
            case token_kind::string:
                return "string";
            default:
                return "'" + t.text + "'";
        }
    }

    [[noreturn]] void error(source_location at, const std::string& message) const {
        throw chat_template_error(chat_template_where(name_, at) + message);
    }
    [[noreturn]] void unexpected(const std::string& expected) const {
        error(current().at, "expected " + expected + ", got " + describe(current()));
    }

    void expect_op(std::string_view op) {
        if (!is_op(op)) unexpected("'" + std::string(op) + "'");
        advance();
    }
    std::string expect_name() {
        if (current().kind != token_kind::name) unexpected("a name");
        return advance().text;
    }

    expression_ptr node(expression::kind type, source_location at) const {
        auto e = std::make_unique<expression>();
        e->type = type;
        e->at = at;
        return e;
    }

    // An expression, or a tuple of them without parentheses ("a, b"). with_condexpr false where an
    // "if" ends the expression ({% for x in xs if c %}).
    expression_ptr parse_tuple(bool with_condexpr = true) {
        const source_location at = current().at;
        expression_ptr first = parse_expression(with_condexpr);
        if (!is_op(",")) return first;
        auto tuple = node(expression::kind::tuple, at);
        tuple->items.push_back(std::move(first));
        while (is_op(",")) {
            advance();
            if (at_tuple_end()) break;
            tuple->items.push_back(parse_expression(with_condexpr));
        }
        return tuple;
    }

    bool at_tuple_end() const {
        const token_kind k = current().kind;
        return k == token_kind::block_end || k == token_kind::variable_end || k == token_kind::end || is_op(")") ||
               is_name("if") || is_name("recursive") || is_op("=");
    }

    expression_ptr parse_expression(bool with_condexpr = true) { return with_condexpr ? parse_condexpr() : parse_or(); }

    expression_ptr parse_condexpr() {
        expression_ptr then = parse_or();
        while (is_name("if")) {
            const source_location at = advance().at;
            auto e = node(expression::kind::conditional, at);
            e->b = parse_or();
            if (is_name("else")) {
                advance();
                e->c = parse_condexpr();
            }
            e->a = std::move(then);
            then = std::move(e);
        }
        return then;
    }

    expression_ptr binary(std::string op, expression_ptr left, expression_ptr right, source_location at,
                          expression::kind type = expression::kind::binary) const {
        auto e = node(type, at);
        e->text = std::move(op);
        e->a = std::move(left);
        e->b = std::move(right);
        return e;
    }

    expression_ptr parse_or() {
        expression_ptr left = parse_and();
        while (is_name("or")) {
            const source_location at = advance().at;
            left = binary("or", std::move(left), parse_and(), at);
        }
        return left;
    }

    expression_ptr parse_and() {
        expression_ptr left = parse_not();
        while (is_name("and")) {
            const source_location at = advance().at;
            left = binary("and", std::move(left), parse_not(), at);
        }
        return left;
    }

    // Every nested expression (parentheses, lists, dicts, unary operators, "not") recurses through
    // parse_unary or parse_not, which hold one of these: the bound keeps a hostile template from
    // overflowing the stack.
    static constexpr int max_nesting = 200;
    struct nesting_guard {
        expression_parser& p;
        explicit nesting_guard(expression_parser& parser) : p(parser) {
            if (p.nesting_ >= max_nesting)
                p.error(p.current().at, "expression nested deeper than " + std::to_string(max_nesting) + " levels");
            ++p.nesting_;
        }
        ~nesting_guard() { --p.nesting_; }
        nesting_guard(const nesting_guard&) = delete;
        nesting_guard& operator=(const nesting_guard&) = delete;
    };

    expression_ptr parse_not() {
        const nesting_guard guard(*this);
        if (!is_name("not")) return parse_compare();
        auto e = node(expression::kind::unary, advance().at);
        e->text = "not";
        e->a = parse_not();
        return e;
    }

    // Chained comparisons (a < b < c) become (a < b) and (b < c); the middle operands are re-read,
    // so only names and constants may stand there (anything else is reported as unsupported).
    expression_ptr parse_compare() {
        std::vector<expression_ptr> operands;
        std::vector<std::pair<std::string, source_location>> ops;
        operands.push_back(parse_math1());
        while (true) {
            const source_location at = current().at;
            if (is_op("==") || is_op("!=") || is_op("<") || is_op(">") || is_op("<=") || is_op(">=")) {
                ops.emplace_back(advance().text, at);
            } else if (is_name("in")) {
                advance();
                ops.emplace_back("in", at);
            } else if (is_name("not") && peek().kind == token_kind::name && peek().text == "in") {
                advance();
                advance();
                ops.emplace_back("not in", at);
            } else {
                break;
            }
            operands.push_back(parse_math1());
        }
        if (ops.empty()) return std::move(operands[0]);
        expression_ptr chain;
        for (std::size_t i = 0; i < ops.size(); ++i) {
            expression_ptr left = i == 0 ? std::move(operands[0]) : clone_operand(*operands[i], ops[i].second);
            expression_ptr compare = binary(ops[i].first, std::move(left), std::move(operands[i + 1]), ops[i].second,
                                            expression::kind::compare);
            if (i + 1 < ops.size()) operands[i + 1] = clone_operand(*compare->b, ops[i].second);
            chain = chain ? binary("and", std::move(chain), std::move(compare), ops[i].second) : std::move(compare);
        }
        return chain;
    }

    expression_ptr clone_operand(const expression& e, source_location at) const {
        if (e.type != expression::kind::literal && e.type != expression::kind::name)
            error(at, "a chained comparison whose middle operand is not a name or a constant is not supported");
        auto copy = node(e.type, e.at);
        copy->constant = e.constant;
        copy->text = e.text;
        return copy;
    }

    expression_ptr parse_math1() {
        expression_ptr left = parse_concat();
        while (is_op("+") || is_op("-")) {
            const token& op = advance();
            left = binary(op.text, std::move(left), parse_concat(), op.at);
        }
        return left;
    }

    expression_ptr parse_concat() {
        expression_ptr left = parse_math2();
        while (is_op("~")) {
            const source_location at = advance().at;
            left = binary("~", std::move(left), parse_math2(), at);
        }
        return left;
    }

    expression_ptr parse_math2() {
        expression_ptr left = parse_pow();
        while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
            const token& op = advance();
            left = binary(op.text, std::move(left), parse_pow(), op.at);
        }
        return left;
    }

    expression_ptr parse_pow() {
        expression_ptr left = parse_unary();
        while (is_op("**")) {
            const source_location at = advance().at;
            left = binary("**", std::move(left), parse_unary(), at);
        }
        return left;
    }

    expression_ptr parse_unary(bool with_filter = true) {
        const nesting_guard guard(*this);
        expression_ptr e;
        if (is_op("-") || is_op("+")) {
            const token& op = advance();
            e = node(expression::kind::unary, op.at);
            e->text = op.text;
            e->a = parse_unary(false);
        } else {
            e = parse_primary();
        }
        e = parse_postfix(std::move(e));
        return with_filter ? parse_filter_expression(std::move(e)) : std::move(e);
    }

    expression_ptr parse_primary() {
        const token& t = current();
        switch (t.kind) {
            case token_kind::name: {
                advance();
                if (t.text == "true" || t.text == "True") return literal(json(true), t.at);
                if (t.text == "false" || t.text == "False") return literal(json(false), t.at);
                if (t.text == "none" || t.text == "None") return literal(json(nullptr), t.at);
                auto e = node(expression::kind::name, t.at);
                e->text = t.text;
                return e;
            }
            case token_kind::string: {
                const source_location at = t.at;
                std::string s;
                while (current().kind == token_kind::string) s += advance().text;  // "a" "b" == "ab"
                return literal(json(std::move(s)), at);
            }
            case token_kind::integer: {
                advance();
                errno = 0;
                const long long v = std::strtoll(t.text.c_str(), nullptr, 10);
                if (errno == ERANGE) error(t.at, "integer literal " + t.text + " is out of range");
                return literal(json(static_cast<std::int64_t>(v)), t.at);
            }
            case token_kind::floating:
                advance();
                return literal(json(std::strtod(t.text.c_str(), nullptr)), t.at);
            case token_kind::op:
                if (t.text == "(") return parse_parenthesized();
                if (t.text == "[") return parse_list();
                if (t.text == "{") return parse_dict();
                break;
            default:
                break;
        }
        unexpected("an expression");
    }

    expression_ptr literal(json j, source_location at) const {
        auto e = node(expression::kind::literal, at);
        e->constant = value(std::move(j));
        return e;
    }

    expression_ptr parse_parenthesized() {
        const source_location at = advance().at;
        if (is_op(")")) {
            advance();
            return node(expression::kind::tuple, at);
        }
        expression_ptr first = parse_expression();
        if (is_op(")")) {
            advance();
            return first;
        }
        auto tuple = node(expression::kind::tuple, at);
        tuple->items.push_back(std::move(first));
        while (is_op(",")) {
            advance();
            if (is_op(")")) break;
            tuple->items.push_back(parse_expression());
        }
        expect_op(")");
        return tuple;
    }

    expression_ptr parse_list() {
        auto e = node(expression::kind::list, advance().at);
        while (!is_op("]")) {
            if (!e->items.empty()) expect_op(",");
            if (is_op("]")) break;
            e->items.push_back(parse_expression());
        }
        advance();
        return e;
    }

    expression_ptr parse_dict() {
        auto e = node(expression::kind::dict, advance().at);
        while (!is_op("}")) {
            if (!e->items.empty()) expect_op(",");
            if (is_op("}")) break;
            e->items.push_back(parse_expression());
            expect_op(":");
            e->items.push_back(parse_expression());
        }
        advance();
        return e;
    }

    expression_ptr parse_postfix(expression_ptr e) {
        while (true) {
            if (is_op(".")) {
                const source_location at = advance().at;
                if (current().kind == token_kind::integer) {  // x.0 is x[0]
                    auto index = node(expression::kind::subscript, at);
                    index->a = std::move(e);
                    index->b = literal(json(std::strtoll(advance().text.c_str(), nullptr, 10)), at);
                    e = std::move(index);
                    continue;
                }
                auto attribute = node(expression::kind::attribute, at);
                attribute->text = expect_name();
                attribute->a = std::move(e);
                e = std::move(attribute);
            } else if (is_op("[")) {
                e = parse_subscript(std::move(e));
            } else if (is_op("(")) {
                e = parse_call(std::move(e));
            } else {
                return e;
            }
        }
    }

    expression_ptr parse_subscript(expression_ptr object) {
        const source_location at = advance().at;
        expression_ptr parts[3];
        bool is_slice = false;
        for (int part = 0; part < 3; ++part) {
            if (!is_op(":") && !is_op("]")) parts[part] = parse_expression();
            if (!is_op(":") || part == 2) break;
            advance();
            is_slice = true;
        }
        expect_op("]");
        auto e = node(is_slice ? expression::kind::slice : expression::kind::subscript, at);
        e->a = std::move(object);
        e->b = std::move(parts[0]);
        e->c = std::move(parts[1]);
        e->d = std::move(parts[2]);
        if (!is_slice && !e->b) error(at, "expected an index between '[' and ']'");
        return e;
    }

    // "(a, b, key=value)" into e's items and keywords.
    void parse_call_arguments(expression& e) {
        expect_op("(");
        while (!is_op(")")) {
            if (!e.items.empty() || !e.keywords.empty()) expect_op(",");
            if (is_op(")")) break;
            if (is_op("*") || is_op("**")) error(current().at, "*args and **kwargs in calls are not supported");
            if (current().kind == token_kind::name && peek().kind == token_kind::op && peek().text == "=") {
                std::string key = advance().text;
                advance();
                e.keywords.push_back({std::move(key), parse_expression()});
            } else {
                if (!e.keywords.empty()) error(current().at, "a positional argument follows a keyword argument");
                e.items.push_back(parse_expression());
            }
        }
        advance();
    }

    expression_ptr parse_call(expression_ptr callee) {
        auto e = node(expression::kind::call, callee->at);
        e->a = std::move(callee);
        parse_call_arguments(*e);
        return e;
    }

    // "| name" or "| name(args)", repeatedly; and "is [not] test [arg]" (one argument without
    // parentheses, as Jinja2 allows: "x is divisibleby 3").
    expression_ptr parse_filter_expression(expression_ptr e) {
        while (true) {
            if (is_op("|")) {
                e = parse_filter(std::move(e));
            } else if (is_name("is")) {
                auto test = node(expression::kind::test, advance().at);
                if (is_name("not")) {
                    advance();
                    test->negated = true;
                }
                test->text = expect_name();
                test->a = std::move(e);
                if (is_op("(")) {
                    parse_call_arguments(*test);
                } else if ((current().kind == token_kind::name || current().kind == token_kind::string ||
                            current().kind == token_kind::integer || current().kind == token_kind::floating ||
                            is_op("(") || is_op("[") || is_op("{")) &&
                           !is_name("else") && !is_name("or") && !is_name("and")) {
                    if (is_name("is")) error(current().at, "tests cannot be chained with 'is'");
                    test->items.push_back(parse_postfix(parse_primary()));
                }
                e = std::move(test);
            } else if (is_op("(")) {
                e = parse_call(std::move(e));
            } else {
                return e;
            }
        }
    }

    expression_ptr parse_filter(expression_ptr object) {
        const source_location at = advance().at;  // '|'
        auto e = node(expression::kind::filter, at);
        e->text = expect_name();
        while (is_op(".")) {  // dotted filter names
            advance();
            e->text += '.';
            e->text += expect_name();
        }
        if (is_op("(")) parse_call_arguments(*e);
        e->a = std::move(object);
        return e;
    }

    std::vector<token> tokens_;
    std::size_t pos_ = 0;
    int nesting_ = 0;  // nesting_guard levels in progress
    const std::string& name_;
};

}  // namespace nexttok::detail::jinja

// Parsing a chat template's statements: text, {{ output }}, and the tags chat templates use: if /
// elif / else, for (with tuple targets, an "if" filter and an else branch), set (a name, a tuple,
// a namespace attribute, or a block set), macro, break / continue (the loopcontrols extension),
// filter blocks, with, and Hugging Face's generation tag. Any other tag (include, extends, call,
// do, ...) is an error naming it.
#pragma once

#include <nexttok/chat/detail/jinja_ast.hpp>
#include <nexttok/chat/detail/jinja_expression_parser.hpp>
#include <nexttok/chat/detail/jinja_lexer.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok::detail::jinja {

class parser : private expression_parser {
public:
    using expression_parser::expression_parser;

    statement_list parse_template() {
        std::string end_tag;
        statement_list body = parse_body({}, end_tag, "");
        return body;
    }

private:
    // Statements up to one of the end tags (consumed with its "{%" and name; the rest of that tag is
    // left to the caller), or to the end of the template when ends is empty.
    statement_list parse_body(std::initializer_list<std::string_view> ends, std::string& found,
                              std::string_view opened_by) {
        // Nested blocks recurse here (and when rendered): bounded so that a hostile template cannot
        // overflow the stack.
        static constexpr int max_block_depth = 200;
        if (block_depth_ >= max_block_depth)
            error(current().at, "blocks nested deeper than " + std::to_string(max_block_depth) + " levels");
        ++block_depth_;
        struct restore {
            int& depth;
            ~restore() { --depth; }
        } const restore_depth{block_depth_};
        statement_list body;
        while (true) {
            const token& t = current();
            if (t.kind == token_kind::end) {
                if (ends.size() == 0) return body;
                std::string wanted;
                for (const std::string_view e : ends) wanted += (wanted.empty() ? "'" : " or '") + std::string(e) + "'";
                error(t.at, "unexpected end of template: looking for " + wanted + " to close the '" +
                                std::string(opened_by) + "' block");
            }
            if (t.kind == token_kind::text) {
                auto s = make(statement::kind::text, t.at);
                s->text = advance().text;
                body.push_back(std::move(s));
            } else if (t.kind == token_kind::variable_begin) {
                auto s = make(statement::kind::output, advance().at);
                s->expr = parse_tuple();
                expect(token_kind::variable_end, "'}}'");
                body.push_back(std::move(s));
            } else if (t.kind == token_kind::block_begin) {
                const token& tag = peek();
                if (tag.kind != token_kind::name) error(tag.at, "expected a tag name after '{%', got " + describe(tag));
                for (const std::string_view e : ends) {
                    if (tag.text == e) {
                        advance();
                        found = advance().text;
                        return body;
                    }
                }
                advance();
                body.push_back(parse_statement());
            } else {
                unexpected("template text, '{{' or '{%'");
            }
        }
    }

    statement_ptr make(statement::kind type, source_location at) const {
        auto s = std::make_unique<statement>();
        s->type = type;
        s->at = at;
        return s;
    }

    void expect(token_kind kind, const std::string& what) {
        if (current().kind != kind) unexpected(what);
        advance();
    }

    void expect_block_end() { expect(token_kind::block_end, "'%}'"); }

    statement_ptr parse_statement() {
        const token tag = advance();
        if (tag.text == "if") return parse_if(tag.at);
        if (tag.text == "for") return parse_for(tag.at);
        if (tag.text == "set") return parse_set(tag.at);
        if (tag.text == "macro") return parse_macro(tag.at);
        if (tag.text == "break" || tag.text == "continue") {
            if (loop_depth_ == 0) error(tag.at, "'" + tag.text + "' outside of a loop");
            expect_block_end();
            return make(tag.text == "break" ? statement::kind::break_ : statement::kind::continue_, tag.at);
        }
        if (tag.text == "filter") return parse_filter_block(tag.at);
        if (tag.text == "with") return parse_with(tag.at);
        if (tag.text == "generation") {  // Hugging Face's AssistantTracker: renders its body in place
            expect_block_end();
            auto s = make(statement::kind::scope, tag.at);
            std::string end;
            s->body = parse_body({"endgeneration"}, end, "generation");
            expect_block_end();
            return s;
        }
        static constexpr std::string_view unsupported[] = {"include", "import", "from",       "extends", "block",
                                                           "call",    "do",     "autoescape", "trans"};
        for (const std::string_view u : unsupported)
            if (tag.text == u) error(tag.at, "the '" + tag.text + "' tag is not supported by this renderer");
        error(tag.at, "unknown or misplaced tag '" + tag.text + "'");
    }

    statement_ptr parse_if(source_location at) {
        auto s = make(statement::kind::if_, at);
        expression_ptr condition = parse_tuple(false);
        while (true) {
            expect_block_end();
            std::string end;
            statement_list body = parse_body({"elif", "else", "endif"}, end, "if");
            s->branches.emplace_back(std::move(condition), std::move(body));
            if (end == "elif") {
                condition = parse_tuple(false);
                continue;
            }
            if (end == "else") {
                expect_block_end();
                s->else_body = parse_body({"endif"}, end, "if");
            }
            expect_block_end();
            return s;
        }
    }

    // "a", "a, b" or "(a, b)": the names a for loop or a set binds.
    std::vector<std::string> parse_targets() {
        std::vector<std::string> names;
        const bool parenthesized = is_op("(");
        if (parenthesized) advance();
        names.push_back(expect_name());
        while (is_op(",")) {
            advance();
            if (current().kind != token_kind::name) break;
            names.push_back(expect_name());
        }
        if (parenthesized) expect_op(")");
        return names;
    }

    statement_ptr parse_for(source_location at) {
        auto s = make(statement::kind::for_, at);
        s->targets = parse_targets();
        if (!is_name("in")) unexpected("'in'");
        advance();
        s->expr = parse_tuple(false);
        if (is_name("if")) {
            advance();
            s->condition = parse_expression();
        }
        if (is_name("recursive")) error(current().at, "recursive for loops are not supported by this renderer");
        expect_block_end();
        ++loop_depth_;
        std::string end;
        s->body = parse_body({"endfor", "else"}, end, "for");
        --loop_depth_;
        if (end == "else") {
            expect_block_end();
            s->else_body = parse_body({"endfor"}, end, "for");
        }
        expect_block_end();
        return s;
    }

    statement_ptr parse_set(source_location at) {
        if (current().kind == token_kind::name && peek().kind == token_kind::op && peek().text == ".") {
            auto s = make(statement::kind::set, at);  // {% set ns.attribute = value %}
            s->targets.push_back(advance().text);
            advance();
            s->text = expect_name();
            expect_op("=");
            s->expr = parse_tuple();
            expect_block_end();
            return s;
        }
        std::vector<std::string> targets = parse_targets();
        if (is_op("=")) {
            advance();
            auto s = make(statement::kind::set, at);
            s->targets = std::move(targets);
            s->expr = parse_tuple();
            expect_block_end();
            return s;
        }
        auto s = make(statement::kind::set_block, at);
        if (targets.size() != 1) error(at, "a block set assigns one name");
        s->targets = std::move(targets);
        if (is_op("|")) s->filter = parse_filter_chain();
        expect_block_end();
        std::string end;
        s->body = parse_body({"endset"}, end, "set");
        expect_block_end();
        return s;
    }

    // "| f(args) | g" applied to a placeholder (null) object that the evaluator fills in.
    expression_ptr parse_filter_chain() {
        expression_ptr chain;
        while (is_op("|")) chain = parse_filter(std::move(chain));
        return chain;
    }

    statement_ptr parse_macro(source_location at) {
        auto s = make(statement::kind::macro, at);
        s->text = expect_name();
        expect_op("(");
        while (!is_op(")")) {
            if (!s->parameters.empty()) expect_op(",");
            if (is_op(")")) break;
            macro_parameter p;
            p.name = expect_name();
            if (is_op("=")) {
                advance();
                p.default_value = parse_expression();
            }
            s->parameters.push_back(std::move(p));
        }
        advance();
        expect_block_end();
        const int saved_depth = loop_depth_;
        loop_depth_ = 0;  // break in a macro cannot leave a caller's loop
        std::string end;
        s->body = parse_body({"endmacro"}, end, "macro");
        loop_depth_ = saved_depth;
        if (current().kind == token_kind::name && current().text == s->text) advance();
        expect_block_end();
        return s;
    }

    statement_ptr parse_filter_block(source_location at) {
        auto s = make(statement::kind::filter_block, at);
        // The first filter has no leading '|': parse it as "| name(...)".
        auto first = node(expression::kind::filter, current().at);
        first->text = expect_name();
        if (is_op("(")) parse_call_arguments(*first);
        expression_ptr chain = std::move(first);
        while (is_op("|")) chain = parse_filter(std::move(chain));
        s->filter = std::move(chain);
        expect_block_end();
        std::string end;
        s->body = parse_body({"endfilter"}, end, "filter");
        expect_block_end();
        return s;
    }

    statement_ptr parse_with(source_location at) {
        auto s = make(statement::kind::with_, at);
        while (current().kind != token_kind::block_end) {
            if (!s->targets.empty()) expect_op(",");
            s->targets.push_back(expect_name());
            expect_op("=");
            s->values.push_back(parse_expression());
        }
        expect_block_end();
        std::string end;
        s->body = parse_body({"endwith"}, end, "with");
        expect_block_end();
        return s;
    }

    int loop_depth_ = 0;
    int block_depth_ = 0;  // parse_body() calls in progress
};

}  // namespace nexttok::detail::jinja

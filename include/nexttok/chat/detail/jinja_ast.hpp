// The syntax tree of a chat template: expressions and statements as the parser builds them and
// the evaluator walks them. Each node owns its children and records where it starts, for errors.
#pragma once

#include <nexttok/chat/chat_template_error.hpp>
#include <nexttok/chat/detail/jinja_value.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace nexttok::detail::jinja {

struct expression;
using expression_ptr = std::unique_ptr<expression>;

struct keyword_argument {
    std::string name;
    expression_ptr value;
};

struct expression {
    enum class kind {
        literal,      // constant
        name,         // text: the variable
        list,         // items
        tuple,        // items
        dict,         // items: key, value, key, value, ...
        attribute,    // a.text
        subscript,    // a[b]
        slice,        // a[b:c:d], absent parts null
        call,         // a(items, keywords)
        filter,       // a | text(items, keywords); a null in a {% filter %} block
        test,         // a is [not] text(items, keywords); negated
        unary,        // text ("-", "+", "not") a
        binary,       // a text b: + - * / // % ** ~ and or
        compare,      // a text b: == != < > <= >= in "not in"
        conditional,  // a if b else c (c null: undefined)
    };

    kind type = kind::literal;
    source_location at;
    value constant;
    std::string text;
    bool negated = false;
    expression_ptr a, b, c, d;
    std::vector<expression_ptr> items;
    std::vector<keyword_argument> keywords;
};

struct statement;
using statement_ptr = std::unique_ptr<statement>;
using statement_list = std::vector<statement_ptr>;

struct macro_parameter {
    std::string name;
    expression_ptr default_value;  // null: required
};

struct statement {
    enum class kind {
        text,       // text: output verbatim
        output,     // {{ expr }}
        if_,        // branches (conditions + bodies), else_body
        for_,       // targets in expr [if condition]: body, else_body
        set,        // targets (or expr.attribute for a namespace) = expr
        set_block,  // {% set targets %}body{% endset %}, filter optional
        macro,      // text(parameters): body
        break_,
        continue_,
        filter_block,  // {% filter f %}body{% endfilter %}: filter is a filter expression on null
        with_,         // {% with a = x, ... %}body{% endwith %}: targets = values
        scope,         // body rendered in place ({% generation %})
    };

    kind type = kind::text;
    source_location at;
    std::string text;
    expression_ptr expr;                 // output, for_ iterable, set value, set attribute target's object
    expression_ptr condition;            // for_ filter
    expression_ptr filter;               // set_block / filter_block
    std::vector<std::string> targets;    // for_ / set / with_ names; set: ns attribute is text
    std::vector<expression_ptr> values;  // with_
    std::vector<std::pair<expression_ptr, statement_list>> branches;  // if_
    statement_list body, else_body;
    std::vector<macro_parameter> parameters;
};

}  // namespace nexttok::detail::jinja

// Jinja2's tests ("x is defined", "x is not none", "x is divisibleby 3", ...), the ones its
// default environment has. An unknown test fails, naming it.
#pragma once

#include <nexttok/chat/detail/jinja_arguments.hpp>
#include <nexttok/chat/detail/jinja_operators.hpp>
#include <nexttok/chat/detail/jinja_strings.hpp>
#include <nexttok/chat/detail/jinja_value.hpp>

#include <cmath>
#include <string>

namespace nexttok::detail::jinja {

inline bool apply_test(const std::string& name, const value& v, const call_args& args) {
    const std::string callee = "test '" + name + "'";
    const auto no_arguments = [&] {
        bind_arguments(args, {}, callee);
    };
    const auto other = [&] {
        return bind_arguments(args, {"other"}, callee)[0];
    };
    if (name == "defined") return no_arguments(), !v.is_undefined();
    if (name == "undefined") return no_arguments(), v.is_undefined();
    if (name == "none") return no_arguments(), v.is_none();
    if (name == "boolean") return no_arguments(), v.is_bool();
    if (name == "true") return no_arguments(), v.is_bool() && v.data().get<bool>();
    if (name == "false") return no_arguments(), v.is_bool() && !v.data().get<bool>();
    if (name == "integer") return no_arguments(), v.is_integer();
    if (name == "float") return no_arguments(), v.is_float();
    if (name == "number") return no_arguments(), is_numeric(v);  // Python's bool is a Number
    if (name == "string") return no_arguments(), v.is_string();
    if (name == "mapping") return no_arguments(), v.is_dict();
    if (name == "iterable") return no_arguments(), v.is_undefined() || v.is_string() || v.is_list() || v.is_dict();
    if (name == "sequence") return no_arguments(), v.is_undefined() || v.is_string() || v.is_list() || v.is_dict();
    if (name == "callable") return no_arguments(), v.is_callable();
    if (name == "lower" || name == "upper") {
        no_arguments();
        const std::string s = to_output(v);
        const std::string lower = python_case(s, case_mode::lower), upper = python_case(s, case_mode::upper);
        return name == "lower" ? (lower == s && upper != s) : (upper == s && lower != s);
    }
    if (name == "odd" || name == "even") {
        no_arguments();
        if (!v.is_integer() && !v.is_bool()) fail(callee + ": an integer is expected, not " + v.type_name());
        return (as_int(v) % 2 != 0) == (name == "odd");
    }
    if (name == "divisibleby") {
        const auto a = bind_arguments(args, {"num"}, callee);
        if (!is_numeric(v) || !is_numeric(a[0])) fail(callee + ": numbers are expected");
        if (as_double(a[0]) == 0.0) fail(callee + ": division by zero");
        if (v.is_float() || a[0].is_float()) return std::fmod(as_double(v), as_double(a[0])) == 0.0;
        return as_int(v) % as_int(a[0]) == 0;
    }
    if (name == "sameas") {
        const value o = other();
        if (v.is_none() || o.is_none()) return v.is_none() && o.is_none();
        if (v.is_bool() || o.is_bool()) return v.is_bool() && o.is_bool() && v.data() == o.data();
        if (v.is_data() && o.is_data()) return &v.data() == &o.data();
        return equal(v, o) && !v.is_data();
    }
    if (name == "eq" || name == "equalto" || name == "==") return equal(v, other());
    if (name == "ne" || name == "!=") return !equal(v, other());
    if (name == "lt" || name == "lessthan" || name == "<") return less(v, other());
    if (name == "gt" || name == "greaterthan" || name == ">") return less(other(), v);
    if (name == "le" || name == "<=") return !less(other(), v);
    if (name == "ge" || name == ">=") return !less(v, other());
    if (name == "in") return contains(bind_arguments(args, {"seq"}, callee)[0], v);
    fail("no test named '" + name + "'");
}

}  // namespace nexttok::detail::jinja

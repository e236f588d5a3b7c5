// The filters of Jinja2's default environment that chat templates use, with Hugging Face's tojson
// (json.dumps with ensure_ascii=False, so non-ASCII text stays as it is). A filter Jinja2 has but
// this renderer lacks fails, naming it, rather than guessing.
#pragma once

#include <nexttok/chat/detail/jinja_arguments.hpp>
#include <nexttok/chat/detail/jinja_format.hpp>
#include <nexttok/chat/detail/jinja_methods.hpp>
#include <nexttok/chat/detail/jinja_operators.hpp>
#include <nexttok/chat/detail/jinja_strings.hpp>
#include <nexttok/chat/detail/jinja_tests.hpp>
#include <nexttok/chat/detail/jinja_value.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace nexttok::detail::jinja {

value apply_filter(const std::string& name, const value& v, call_args& args);

// The attribute getter of map / selectattr / sort / ...: "a.b.0" reads item["a"]["b"][0], each step
// a key (or index) first and then an attribute, as Jinja2's environment.getitem.
inline value attribute_path(const value& item, const std::string& path) {
    value current = item;
    std::size_t pos = 0;
    while (true) {
        const std::size_t dot = path.find('.', pos);
        const std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
        json key_data = part;
        if (python_isdigit(part)) key_data = json(static_cast<std::int64_t>(std::strtoll(part.c_str(), nullptr, 10)));
        const value key(std::move(key_data));
        value next = subscript(current, key, part);
        if (next.is_undefined() && !python_isdigit(part)) next = get_attribute(current, part, part);
        current = std::move(next);
        if (dot == std::string::npos) return current;
        pos = dot + 1;
    }
}

inline json values_to_list(const std::vector<value>& items) {
    json out = json::array();
    for (const value& item : items) out.push_back(item.to_json());
    return out;
}

// Arguments after the first `skip` positional ones, for a test or filter named by a filter's argument.
inline call_args rest_arguments(const call_args& args, std::size_t skip) {
    call_args rest;
    rest.positional.assign(
        args.positional.begin() + static_cast<std::ptrdiff_t>(std::min(skip, args.positional.size())),
        args.positional.end());
    rest.keyword = args.keyword;
    return rest;
}

// select / reject / selectattr / rejectattr.
inline value select_filter(const value& v, const call_args& args, bool by_attribute, bool keep) {
    const std::string callee = "filter '" + std::string(keep ? "select" : "reject") + (by_attribute ? "attr'" : "'");
    std::size_t n_fixed = 0;
    std::string attribute;
    if (by_attribute) {
        if (args.positional.empty()) fail(callee + ": the attribute is missing");
        attribute = string_argument(args.positional[0], callee, "attribute");
        n_fixed = 1;
    }
    std::string test;
    if (args.positional.size() > n_fixed) test = string_argument(args.positional[n_fixed], callee, "test");
    const call_args test_args = rest_arguments(args, n_fixed + 1);
    json out = json::array();
    for (const value& item : iterate(v)) {
        const value subject = by_attribute ? attribute_path(item, attribute) : item;
        const bool pass = test.empty() ? subject.truthy() : apply_test(test, subject, test_args);
        if (pass == keep) out.push_back(item.to_json());
    }
    return out;
}

inline value map_filter(const value& v, call_args& args) {
    json out = json::array();
    for (const auto& [key, kv] : args.keyword) {
        if (key != "attribute" && key != "default") fail("filter 'map': unexpected keyword argument '" + key + "'");
    }
    const auto keyword = [&](const char* k) {
        for (const auto& [key, kv] : args.keyword)
            if (key == k) return kv;
        return value();
    };
    const value attribute = keyword("attribute");
    if (given(attribute)) {
        if (!args.positional.empty()) fail("filter 'map': positional arguments with attribute=");
        const value fallback = keyword("default");
        for (const value& item : iterate(v)) {
            value x = attribute_path(item, string_argument(attribute, "filter 'map'", "attribute"));
            out.push_back((x.is_undefined() && given(fallback) ? fallback : x).to_json());
        }
        return out;
    }
    if (args.positional.empty()) fail("filter 'map': a filter name or attribute= is expected");
    const std::string filter = string_argument(args.positional[0], "filter 'map'", "filter");
    call_args filter_args = rest_arguments(args, 1);
    for (const value& item : iterate(v)) out.push_back(apply_filter(filter, item, filter_args).to_json());
    return out;
}

// The sort key of sort / unique / min / max: the attribute if asked, lower-cased strings unless
// case_sensitive.
inline value sort_key(const value& item, const value& attribute, bool case_sensitive) {
    value key = given(attribute) && !attribute.is_none() ? attribute_path(item, to_output(attribute)) : item;
    if (!case_sensitive && key.is_string()) return json(python_case(key.string(), case_mode::lower));
    return key;
}

inline value sort_filter(const value& v, call_args& args, const std::string& name) {
    const std::string callee = "filter '" + name + "'";
    std::vector<value> items = iterate(v);
    if (name == "sort") {
        const auto a = bind_arguments(args, {"reverse", "case_sensitive", "attribute"}, callee);
        const bool case_sensitive = a[1].truthy();
        std::vector<std::pair<value, value>> keyed;
        for (value& item : items) keyed.emplace_back(sort_key(item, a[2], case_sensitive), std::move(item));
        const bool reverse = a[0].truthy();
        std::ranges::stable_sort(keyed, [&](const auto& x, const auto& y) {
            return reverse ? less(y.first, x.first) : less(x.first, y.first);
        });
        json out = json::array();
        for (const auto& [key, item] : keyed) out.push_back(item.to_json());
        return out;
    }
    if (name == "unique") {
        const auto a = bind_arguments(args, {"case_sensitive", "attribute"}, callee);
        std::vector<value> seen;
        json out = json::array();
        for (const value& item : items) {
            const value key = sort_key(item, a[1], a[0].truthy());
            if (std::ranges::any_of(seen, [&](const value& s) { return equal(s, key); })) continue;
            seen.push_back(key);
            out.push_back(item.to_json());
        }
        return out;
    }
    const auto a = bind_arguments(args, {"case_sensitive", "attribute"}, callee);  // min / max
    if (items.empty()) return value::make_undefined(name + " of an empty sequence");
    std::size_t best = 0;
    for (std::size_t i = 1; i < items.size(); ++i) {
        const value ki = sort_key(items[i], a[1], a[0].truthy()), kb = sort_key(items[best], a[1], a[0].truthy());
        if (name == "min" ? less(ki, kb) : less(kb, ki)) best = i;
    }
    return items[best];
}

inline value tojson_filter(const value& v, call_args& args) {
    const auto a = bind_arguments(args, {"ensure_ascii", "indent", "separators", "sort_keys"}, "filter 'tojson'");
    if (a[0].truthy()) fail("filter 'tojson': ensure_ascii=True is not supported by this renderer");
    json_style style;
    if (given(a[1]) && !a[1].is_none()) {
        const std::int64_t indent = int_argument(a[1], "filter 'tojson'", "indent");
        if (indent > 64) fail("filter 'tojson': indent = " + std::to_string(indent) + " (at most 64 in this renderer)");
        style.indent = static_cast<int>(indent);
        style.item_separator = ",";
    }
    if (given(a[2]) && !a[2].is_none()) {
        if (!a[2].is_list() || a[2].data().size() != 2 || !a[2].data()[0].is_string() || !a[2].data()[1].is_string())
            fail("filter 'tojson': separators must be a pair of strings");
        style.item_separator = a[2].data()[0].get<std::string>();
        style.key_separator = a[2].data()[1].get<std::string>();
    }
    style.sort_keys = a[3].truthy();
    std::string out;
    python_json_dumps(out, v.to_json(), style);
    check_string_size(out.size(), "filter 'tojson'");
    return json(std::move(out));
}

inline value indent_filter(const value& v, call_args& args) {
    const auto a = bind_arguments(args, {"width", "first", "blank"}, "filter 'indent'");
    const std::int64_t width = a[0].is_string() || !given(a[0]) ? 4 : int_argument(a[0], "filter 'indent'", "width");
    check_string_size(width < 0 ? 0 : static_cast<std::size_t>(width), "filter 'indent'");
    const std::string indentation =
        a[0].is_string() ? a[0].string() : std::string(width < 0 ? 0 : static_cast<std::size_t>(width), ' ');
    call_args none;
    const value lines = string_method(to_output(v) + "\n", "splitlines", none);
    std::string out;
    for (std::size_t i = 0; i < lines.data().size(); ++i) {
        const std::string& line = lines.data()[i].get_ref<const std::string&>();
        if (i > 0) out += '\n';
        if ((i > 0 || a[1].truthy()) && (a[2].truthy() || !line.empty())) out += indentation;
        out += line;
        check_string_size(out.size(), "filter 'indent'");
    }
    return json(std::move(out));
}

inline std::string html_escape(const std::string& s) {
    std::string out;
    for (const char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&#34;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

inline value number_filter(const value& v, call_args& args, bool to_int) {
    const std::string callee = to_int ? "filter 'int'" : "filter 'float'";
    const auto a =
        to_int ? bind_arguments(args, {"default", "base"}, callee) : bind_arguments(args, {"default"}, callee);
    const value fallback = given(a[0]) ? a[0] : to_int ? value(json(0)) : value(json(0.0));
    if (is_numeric(v) && to_int) return v.is_float() ? json(float_to_int(as_double(v), callee)) : json(as_int(v));
    if (is_numeric(v)) return json(as_double(v));
    if (!v.is_string()) return fallback;
    const std::string s(python_strip(v.string(), true, true));
    char* end = nullptr;
    if (to_int) {
        const int base = given(a[1]) ? static_cast<int>(int_argument(a[1], callee, "base")) : 10;
        const long long i = std::strtoll(s.c_str(), &end, base);
        if (!s.empty() && end == s.c_str() + s.size()) return json(static_cast<std::int64_t>(i));
    }
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return to_int ? json(float_to_int(d, callee)) : json(d);
    return fallback;
}

// The filters of apply_filter that take more than a few lines. `callee` names the filter as its
// errors do ("filter 'trim'"); those called after apply_filter has refused arguments take none.

// default(default_value = "", boolean = false), also named d.
inline value default_filter(const value& v, call_args& args, const std::string& callee) {
    const auto a = bind_arguments(args, {"default_value", "boolean"}, callee);
    const bool use_default = a[1].truthy() ? !v.truthy() : v.is_undefined();
    return use_default ? (given(a[0]) ? a[0] : value(json(""))) : v;
}

inline value trim_filter(const value& v, call_args& args, const std::string& callee) {
    const auto a = bind_arguments(args, {"chars"}, callee);
    const std::string s = to_output(v);
    const std::string* chars = given(a[0]) && !a[0].is_none() ? &string_argument(a[0], callee, "chars") : nullptr;
    return json(std::string(python_strip(s, true, true, chars)));
}

// upper / lower / capitalize / title: the str methods of the same names on the text of v.
inline value case_filter(const value& v, const std::string& name) {
    call_args none;
    return string_method(to_output(v), name, none);
}

inline value replace_filter(const value& v, call_args& args, const std::string& callee) {
    const auto a = bind_arguments(args, {"old", "new", "count"}, callee);
    return json(replace_all(to_output(v), string_argument(a[0], callee, "old"), string_argument(a[1], callee, "new"),
                            given(a[2]) && !a[2].is_none() ? int_argument(a[2], callee, "count") : -1));
}

// length / count: Python's len(), 0 for undefined.
inline value length_filter(const value& v) {
    if (v.is_undefined()) return json(0);
    if (v.is_string()) return json(static_cast<std::int64_t>(code_point_count(v.string())));
    if (v.is_list() || v.is_dict()) return json(static_cast<std::int64_t>(v.data().size()));
    if (v.is_namespace()) return json(static_cast<std::int64_t>(v.ns().attributes.size()));
    fail("object of type '" + v.type_name() + "' has no len()");
}

// first / last.
inline value first_or_last_filter(const value& v, const std::string& name) {
    const std::vector<value> items = iterate(v);
    if (items.empty()) return value::make_undefined(name + " of an empty sequence");
    return name == "first" ? items.front() : items.back();
}

inline value reverse_filter(const value& v) {
    if (v.is_string()) return slice(v, value(), value(), value(json(-1)));
    std::vector<value> items = iterate(v);
    std::ranges::reverse(items);
    return values_to_list(items);
}

inline value join_filter(const value& v, call_args& args, const std::string& callee) {
    const auto a = bind_arguments(args, {"d", "attribute"}, callee);
    const std::string separator = given(a[0]) ? to_output(a[0]) : "";
    std::string out;
    bool first = true;
    for (const value& item : iterate(v)) {
        out += (first ? "" : separator) +
               to_output(given(a[1]) && !a[1].is_none() ? attribute_path(item, to_output(a[1])) : item);
        check_string_size(out.size(), callee);
        first = false;
    }
    return json(std::move(out));
}

inline value items_filter(const value& v, const std::string& callee) {
    if (v.is_undefined()) return json::array();
    if (!v.is_dict()) fail(callee + ": a mapping is expected, not " + v.type_name());
    call_args none;
    return dict_method(v, "items", none);
}

inline value dictsort_filter(const value& v, call_args& args, const std::string& callee) {
    const auto a = bind_arguments(args, {"case_sensitive", "by", "reverse"}, callee);
    if (!v.is_dict()) fail(callee + ": a mapping is expected, not " + v.type_name());
    const bool by_value = given(a[1]) && to_output(a[1]) == "value";
    call_args none;
    std::vector<value> pairs = iterate(dict_method(v, "items", none));
    const auto key = [&](const value& pair) {
        const value k = pair.element(pair.data()[by_value ? 1 : 0]);
        return !a[0].truthy() && k.is_string() ? value(json(python_case(k.string(), case_mode::lower))) : k;
    };
    std::ranges::stable_sort(pairs, [&](const value& x, const value& y) {
        return a[2].truthy() ? less(key(y), key(x)) : less(key(x), key(y));
    });
    return values_to_list(pairs);
}

inline value sum_filter(const value& v, call_args& args, const std::string& callee) {
    const auto a = bind_arguments(args, {"attribute", "start"}, callee);
    value total = given(a[1]) ? a[1] : value(json(0));
    for (const value& item : iterate(v))
        total = arithmetic("+", total, given(a[0]) && !a[0].is_none() ? attribute_path(item, to_output(a[0])) : item);
    return total;
}

inline value abs_filter(const value& v, const std::string& callee) {
    if (!is_numeric(v)) fail(callee + ": a number is expected, not " + v.type_name());
    if (v.is_float()) return json(std::fabs(as_double(v)));
    return json(as_int(v) < 0 ? checked_negate(as_int(v), callee) : as_int(v));
}

inline value round_filter(const value& v, call_args& args, const std::string& callee) {
    const auto a = bind_arguments(args, {"precision", "method"}, callee);
    if (!is_numeric(v)) fail(callee + ": a number is expected, not " + v.type_name());
    if (v.is_integer() || v.is_bool()) return json(as_int(v));  // Python's round(int, n) is the int
    const double scale = std::pow(10.0, static_cast<double>(given(a[0]) ? int_argument(a[0], callee, "precision") : 0));
    const std::string method = given(a[1]) ? to_output(a[1]) : "common";
    const double x = as_double(v) * scale;
    const double r = method == "ceil" ? std::ceil(x) : method == "floor" ? std::floor(x) : std::nearbyint(x);
    if (method != "common" && method != "ceil" && method != "floor")
        fail(callee + ": method must be common, ceil or floor");
    return json(r / scale);
}

inline value apply_filter(const std::string& name, const value& v, call_args& args) {
    const std::string callee = "filter '" + name + "'";
    const auto no_arguments = [&] {
        bind_arguments(args, {}, callee);
    };
    if (name == "default" || name == "d") return default_filter(v, args, callee);
    if (name == "tojson") return tojson_filter(v, args);
    if (name == "string") return no_arguments(), value(json(to_output(v)));
    if (name == "safe") return no_arguments(), v;
    if (name == "e" || name == "escape" || name == "forceescape")
        return no_arguments(), value(json(html_escape(to_output(v))));
    if (name == "trim") return trim_filter(v, args, callee);
    if (name == "upper" || name == "lower" || name == "capitalize" || name == "title")
        return no_arguments(), case_filter(v, name);
    if (name == "replace") return replace_filter(v, args, callee);
    if (name == "length" || name == "count") return no_arguments(), length_filter(v);
    if (name == "first" || name == "last") return no_arguments(), first_or_last_filter(v, name);
    if (name == "list") return no_arguments(), value(values_to_list(iterate(v)));
    if (name == "reverse") return no_arguments(), reverse_filter(v);
    if (name == "join") return join_filter(v, args, callee);
    if (name == "items") return no_arguments(), items_filter(v, callee);
    if (name == "dictsort") return dictsort_filter(v, args, callee);
    if (name == "select") return select_filter(v, args, false, true);
    if (name == "reject") return select_filter(v, args, false, false);
    if (name == "selectattr") return select_filter(v, args, true, true);
    if (name == "rejectattr") return select_filter(v, args, true, false);
    if (name == "map") return map_filter(v, args);
    if (name == "sort" || name == "unique" || name == "min" || name == "max") return sort_filter(v, args, name);
    if (name == "sum") return sum_filter(v, args, callee);
    if (name == "abs") return no_arguments(), abs_filter(v, callee);
    if (name == "round") return round_filter(v, args, callee);
    if (name == "int") return number_filter(v, args, true);
    if (name == "float") return number_filter(v, args, false);
    if (name == "indent") return indent_filter(v, args);
    if (name == "attr")
        return get_attribute(v, string_argument(bind_arguments(args, {"name"}, callee)[0], callee, "name"), "attr");
    fail("no filter named '" + name + "' (or it is not supported by this renderer)");
}

}  // namespace nexttok::detail::jinja

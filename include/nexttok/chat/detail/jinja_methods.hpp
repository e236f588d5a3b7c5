// Attribute access and the Python methods chat templates call: obj.attr looks for a method first
// and then a key, as Jinja2's getattr does (so message.items is dict.items and message.role is
// message['role']). Only non-mutating methods exist: Hugging Face renders in Jinja2's immutable
// sandbox, where list.append and dict.update fail too.
#pragma once

#include <nexttok/chat/detail/jinja_arguments.hpp>
#include <nexttok/chat/detail/jinja_format.hpp>
#include <nexttok/chat/detail/jinja_operators.hpp>
#include <nexttok/chat/detail/jinja_strings.hpp>
#include <nexttok/chat/detail/jinja_value.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>

namespace nexttok::detail::jinja {

inline bool is_string_method(std::string_view n) {
    static constexpr std::string_view names[] = {
        "strip",   "lstrip",  "rstrip",     "split",   "rsplit",  "startswith", "endswith",   "upper",
        "lower",   "title",   "capitalize", "replace", "find",    "rfind",      "count",      "join",
        "isdigit", "isalpha", "isalnum",    "isspace", "islower", "isupper",    "splitlines", "format"};
    return std::ranges::find(names, n) != std::end(names);
}

inline bool is_dict_method(std::string_view n) { return n == "items" || n == "keys" || n == "values" || n == "get"; }
inline bool is_list_method(std::string_view n) { return n == "index" || n == "count"; }

// str.startswith / endswith with a string or a tuple of strings.
inline bool affix_match(const std::string& s, const value& affix, bool prefix, const std::string& callee) {
    const auto one = [&](const std::string& a) {
        return prefix ? s.starts_with(a) : s.ends_with(a);
    };
    if (affix.is_string()) return one(affix.string());
    if (affix.is_list()) {
        for (const json& a : affix.data()) {
            if (!a.is_string()) fail(callee + ": a tuple of strings is expected");
            if (one(a.get_ref<const std::string&>())) return true;
        }
        return false;
    }
    fail(callee + ": argument must be a string or a tuple of strings, not " + affix.type_name());
}

inline std::string replace_all(const std::string& s, const std::string& from, const std::string& to,
                               std::int64_t count) {
    std::string out;
    std::size_t pos = 0;
    std::int64_t n = 0;
    if (from.empty()) {  // Python inserts `to` between characters
        for (std::size_t i = 0; i <= s.size(); i += i < s.size() ? utf8_length_at(s, i) : 1) {
            if (count < 0 || n < count) {
                out += to;
                ++n;
            }
            if (i < s.size()) out.append(s, i, utf8_length_at(s, i));
            check_string_size(out.size(), "str.replace");
        }
        return out;
    }
    for (std::size_t hit; (count < 0 || n < count) && (hit = s.find(from, pos)) != std::string::npos;
         pos = hit + from.size(), ++n)
        check_string_size(out.append(s, pos, hit - pos).append(to).size(), "str.replace");
    check_string_size(out.size() + (s.size() - pos), "str.replace");
    return out.append(s, pos);
}

// The str methods of string_method that take more than a few lines, each with the callee its errors
// name ("str.split").

// str.strip / lstrip / rstrip.
inline value str_strip(const std::string& s, const std::string& name, call_args& args, const std::string& callee) {
    const auto a = bind_arguments(args, {"chars"}, callee);
    const std::string* chars = given(a[0]) && !a[0].is_none() ? &string_argument(a[0], callee, "chars") : nullptr;
    return json(std::string(python_strip(s, name != "rstrip", name != "lstrip", chars)));
}

// str.split / rsplit.
inline value str_split(const std::string& s, const std::string& name, call_args& args, const std::string& callee) {
    const auto a = bind_arguments(args, {"sep", "maxsplit"}, callee);
    const std::string* sep = given(a[0]) && !a[0].is_none() ? &string_argument(a[0], callee, "sep") : nullptr;
    if (sep != nullptr && sep->empty()) fail(callee + ": empty separator");
    const std::int64_t maxsplit = given(a[1]) ? int_argument(a[1], callee, "maxsplit") : -1;
    if (name == "rsplit" && maxsplit >= 0) fail("str.rsplit with maxsplit is not supported by this renderer");
    json out = json::array();
    for (std::string& part : python_split(s, sep, maxsplit)) out.push_back(std::move(part));
    return out;
}

// str.upper / lower / title / capitalize.
inline value str_case(const std::string& s, const std::string& name, call_args& args, const std::string& callee) {
    bind_arguments(args, {}, callee);
    const case_mode mode = name == "upper"   ? case_mode::upper
                           : name == "lower" ? case_mode::lower
                           : name == "title" ? case_mode::title
                                             : case_mode::capitalize;
    return json(python_case(mode == case_mode::capitalize ? python_case(s, case_mode::lower) : s, mode));
}

// str.find / rfind / count: positions and counts in code points, as Python's.
inline value str_find(const std::string& s, const std::string& name, call_args& args, const std::string& callee) {
    const auto a = bind_arguments(args, {"sub"}, callee);
    const std::string& sub = string_argument(a[0], callee, "sub");
    if (name == "count") {
        std::int64_t n = 0;
        if (sub.empty()) return json(static_cast<std::int64_t>(code_point_count(s)) + 1);
        for (std::size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
        return json(n);
    }
    const std::size_t p = name == "find" ? s.find(sub) : s.rfind(sub);
    return json(p == std::string::npos ? std::int64_t{-1}
                                       : static_cast<std::int64_t>(code_point_count(s.substr(0, p))));
}

// str.join.
inline value str_join(const std::string& s, call_args& args, const std::string& callee) {
    const auto a = bind_arguments(args, {"iterable"}, callee);
    std::string out;
    bool first = true;
    for (const value& item : iterate(a[0])) {
        if (!item.is_string()) fail("str.join: sequence item is " + item.type_name() + ", not str");
        out += (first ? "" : s) + item.string();
        check_string_size(out.size(), "str.join");
        first = false;
    }
    return json(std::move(out));
}

// str.splitlines: "\n", "\r" and "\r\n" end a line.
inline value str_splitlines(const std::string& s, call_args& args, const std::string& callee) {
    bind_arguments(args, {}, callee);
    json out = json::array();
    std::size_t pos = 0;
    while (pos < s.size()) {
        const std::size_t nl = s.find_first_of("\r\n", pos);
        if (nl == std::string::npos) {
            out.push_back(s.substr(pos));
            break;
        }
        out.push_back(s.substr(pos, nl - pos));
        pos = nl + (s[nl] == '\r' && nl + 1 < s.size() && s[nl + 1] == '\n' ? 2 : 1);
    }
    return out;
}

// str.isdigit / isalpha / isalnum / isspace / islower / isupper (ASCII), false for "" as Python's;
// any other name fails, after its arguments are checked.
inline value str_predicate(const std::string& s, const std::string& name, call_args& args, const std::string& callee) {
    bind_arguments(args, {}, callee);
    if (s.empty()) return json(false);
    const auto all = [&](auto predicate) {
        return json(std::ranges::all_of(s, predicate));
    };
    if (name == "isdigit") return all([](char c) { return c >= '0' && c <= '9'; });
    if (name == "isalpha") return all([](char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; });
    if (name == "isalnum")
        return all([](char c) { return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9'); });
    if (name == "isspace") return json(python_strip(s, true, false).empty());
    if (name == "islower") return json(python_case(s, case_mode::lower) == s && python_case(s, case_mode::upper) != s);
    if (name == "isupper") return json(python_case(s, case_mode::upper) == s && python_case(s, case_mode::lower) != s);
    fail("no method str." + name);
}

inline value string_method(const std::string& s, const std::string& name, call_args& args) {
    const std::string callee = "str." + name;
    if (name == "strip" || name == "lstrip" || name == "rstrip") return str_strip(s, name, args, callee);
    if (name == "split" || name == "rsplit") return str_split(s, name, args, callee);
    if (name == "startswith" || name == "endswith") {
        const auto a = bind_arguments(args, {"prefix"}, callee);
        return json(affix_match(s, a[0], name == "startswith", callee));
    }
    if (name == "upper" || name == "lower" || name == "title" || name == "capitalize")
        return str_case(s, name, args, callee);
    if (name == "replace") {
        const auto a = bind_arguments(args, {"old", "new", "count"}, callee);
        return json(replace_all(s, string_argument(a[0], callee, "old"), string_argument(a[1], callee, "new"),
                                given(a[2]) ? int_argument(a[2], callee, "count") : -1));
    }
    if (name == "find" || name == "rfind" || name == "count") return str_find(s, name, args, callee);
    if (name == "join") return str_join(s, args, callee);
    if (name == "splitlines") return str_splitlines(s, args, callee);
    if (name == "format") fail("str.format is not supported by this renderer");
    return str_predicate(s, name, args, callee);
}

inline value dict_method(const value& self, const std::string& name, call_args& args) {
    const json& d = self.data();
    const std::string callee = "dict." + name;
    if (name == "get") {
        const auto a = bind_arguments(args, {"key", "default"}, callee);
        if (a[0].is_string()) {
            const auto it = d.find(a[0].string());
            if (it != d.end()) return self.element(*it);
        }
        return given(a[1]) ? a[1] : value(json(nullptr));
    }
    bind_arguments(args, {}, callee);
    json out = json::array();
    for (auto it = d.begin(); it != d.end(); ++it) {
        if (name == "items") {
            json pair = make_tuple_json();
            pair.push_back(it.key());
            pair.push_back(it.value());
            out.push_back(std::move(pair));
        } else if (name == "keys")
            out.push_back(it.key());
        else
            out.push_back(it.value());
    }
    return out;
}

inline value list_method(const value& self, const std::string& name, call_args& args) {
    const auto a = bind_arguments(args, {"value"}, "list." + name);
    const json& l = self.data();
    if (name == "count") {
        return json(static_cast<std::int64_t>(
            std::ranges::count_if(l, [&](const json& e) { return a[0].is_data() && json_equal(e, a[0].data()); })));
    }
    for (std::size_t i = 0; i < l.size(); ++i)
        if (a[0].is_data() && json_equal(l[i], a[0].data())) return json(static_cast<std::int64_t>(i));
    fail("list.index: " + to_output(a[0]) + " is not in list");
}

inline value bound_method(const value& self, const std::string& name) {
    auto fn = std::make_shared<callable>();
    fn->name = self.type_name() + "." + name;
    fn->call = [self, name](call_args& args) -> value {
        if (self.is_string()) return string_method(self.string(), name, args);
        if (self.is_dict()) return dict_method(self, name, args);
        return list_method(self, name, args);
    };
    return value(std::shared_ptr<const callable>(std::move(fn)));
}

// obj.name as Jinja2 reads it: a method, else a key (or namespace attribute), else undefined.
inline value get_attribute(const value& object, const std::string& name, const std::string& description) {
    if (object.is_undefined()) fail_undefined(object);
    if (object.is_namespace()) {
        const auto it = object.ns().attributes.find(name);
        return it == object.ns().attributes.end() ? value::make_undefined(description) : it->second;
    }
    if (!object.is_data()) return value::make_undefined(description);
    if ((object.is_string() && is_string_method(name)) || (object.is_dict() && is_dict_method(name)) ||
        (object.is_list() && is_list_method(name)))
        return bound_method(object, name);
    if (object.is_dict()) {
        const auto it = object.data().find(name);
        if (it != object.data().end()) return object.element(*it);
    }
    return value::make_undefined(description);
}

}  // namespace nexttok::detail::jinja

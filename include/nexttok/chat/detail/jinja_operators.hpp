// Python's operators on template values: equality and ordering, arithmetic (+ - * / // % **),
// ~ concatenation, "in", indexing and slicing by code point for strings, and iteration, with
// Jinja2's rules for undefined (it compares unequal, iterates as empty and prints as nothing, and
// any other use of it fails).
#pragma once

#include <nexttok/chat/detail/jinja_format.hpp>
#include <nexttok/chat/detail/jinja_strings.hpp>
#include <nexttok/chat/detail/jinja_value.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nexttok::detail::jinja {

inline bool json_numeric(const json& j) { return j.is_number() || j.is_boolean(); }

inline double json_double(const json& j) {
    if (j.is_boolean()) return j.get<bool>() ? 1.0 : 0.0;
    return j.is_number_float() ? j.get<double>() : static_cast<double>(j.get<std::int64_t>());
}

// Python ==: numbers by value (True == 1), lists elementwise, dicts whatever their order.
inline bool json_equal(const json& a, const json& b) {
    if (json_numeric(a) && json_numeric(b)) {
        if (a.is_number_float() || b.is_number_float()) return json_double(a) == json_double(b);
        const auto as_i = [](const json& j) {
            return j.is_boolean() ? std::int64_t{j.get<bool>()} : j.get<std::int64_t>();
        };
        return as_i(a) == as_i(b);
    }
    if (a.type() != b.type()) return false;
    if (a.is_array()) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!json_equal(a[i], b[i])) return false;
        return true;
    }
    if (a.is_object()) {
        if (a.size() != b.size()) return false;
        for (auto it = a.begin(); it != a.end(); ++it) {
            const auto other = b.find(it.key());
            if (other == b.end() || !json_equal(it.value(), *other)) return false;
        }
        return true;
    }
    return a == b;
}

inline bool equal(const value& a, const value& b) {
    if (a.is_undefined() || b.is_undefined()) return a.is_undefined() && b.is_undefined();
    if (a.is_namespace() && b.is_namespace()) return &a.ns() == &b.ns();
    if (a.is_callable() && b.is_callable()) return &a.function() == &b.function();
    if (!a.is_data() || !b.is_data()) return false;
    return json_equal(a.data(), b.data());
}

// Python <: numbers, strings (UTF-8 byte order is code point order), lists lexicographically.
inline bool json_less(const json& a, const json& b) {
    if (json_numeric(a) && json_numeric(b)) return json_double(a) < json_double(b);
    if (a.is_string() && b.is_string()) return a.get_ref<const std::string&>() < b.get_ref<const std::string&>();
    if (a.is_array() && b.is_array()) {
        for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
            if (json_less(a[i], b[i])) return true;
            if (json_less(b[i], a[i])) return false;
        }
        return a.size() < b.size();
    }
    fail("'<' is not supported between instances of '" + value(a).type_name() + "' and '" + value(b).type_name() + "'");
}

inline void require_defined(const value& v) {
    if (v.is_undefined()) fail_undefined(v);
}

inline bool less(const value& a, const value& b) {
    require_defined(a);
    require_defined(b);
    if (!a.is_data() || !b.is_data())
        fail("'<' is not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'");
    return json_less(a.data(), b.data());
}

inline value compare(const std::string& op, const value& a, const value& b);

// The elements a for loop visits: a list's items, a dict's keys, a string's characters; nothing
// for undefined.
inline std::vector<value> iterate(const value& v) {
    std::vector<value> items;
    if (v.is_undefined()) return items;
    if (!v.is_data()) fail("'" + v.type_name() + "' object is not iterable");
    const json& j = v.data();
    if (j.is_array()) {
        items.reserve(j.size());
        for (const json& item : j) items.push_back(v.element(item));
    } else if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) items.emplace_back(json(it.key()));
    } else if (j.is_string()) {
        const std::string& s = j.get_ref<const std::string&>();
        for (std::size_t i = 0; i < s.size();) {
            const std::size_t n = utf8_length_at(s, i);
            items.emplace_back(json(s.substr(i, n)));
            i += n;
        }
    } else {
        fail("'" + v.type_name() + "' object is not iterable");
    }
    return items;
}

inline bool contains(const value& container, const value& item) {
    if (container.is_undefined()) return false;
    if (container.is_namespace()) return item.is_string() && container.ns().attributes.contains(item.string());
    if (!container.is_data()) fail("argument of type '" + container.type_name() + "' is not iterable");
    const json& c = container.data();
    if (c.is_string()) {
        if (!item.is_string()) fail("'in <string>' requires string as left operand, not " + item.type_name());
        return c.get_ref<const std::string&>().find(item.string()) != std::string::npos;
    }
    if (c.is_array()) {
        if (!item.is_data()) return false;
        return std::ranges::any_of(c, [&](const json& e) { return json_equal(e, item.data()); });
    }
    if (c.is_object()) return item.is_string() && c.contains(item.string());
    fail("argument of type '" + container.type_name() + "' is not iterable");
}

inline value compare(const std::string& op, const value& a, const value& b) {
    if (op == "==") return json(equal(a, b));
    if (op == "!=") return json(!equal(a, b));
    if (op == "<") return json(less(a, b));
    if (op == ">") return json(less(b, a));
    if (op == "<=") return json(!less(b, a));
    if (op == ">=") return json(!less(a, b));
    if (op == "in") return json(contains(b, a));
    if (op == "not in") return json(!contains(b, a));
    fail("unknown comparison '" + op + "'");
}

// Python's integers have no bounds; ours are int64, and a result outside fails rather than wraps.
[[noreturn]] inline void fail_overflow(const std::string& op) {
    fail("integer overflow in '" + op + "' (integers are 64-bit in this renderer)");
}

inline std::int64_t checked_add(std::int64_t a, std::int64_t b, const std::string& op) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) fail_overflow(op);
    return r;
}

inline std::int64_t checked_sub(std::int64_t a, std::int64_t b, const std::string& op) {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) fail_overflow(op);
    return r;
}

inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, const std::string& op) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) fail_overflow(op);
    return r;
}

// -x, failing for the one int64 whose negation does not fit.
inline std::int64_t checked_negate(std::int64_t x, const std::string& op) {
    if (x == INT64_MIN) fail_overflow(op);
    return -x;
}

// Python's int(float): truncation, failing where Python would need a big integer or raises.
inline std::int64_t float_to_int(double d, const std::string& callee) {
    if (!std::isfinite(d))
        fail(callee + ": cannot convert float " + std::string(std::isnan(d) ? "NaN" : "infinity") + " to integer");
    if (d >= 9223372036854775808.0 || d < -9223372036854775808.0)
        fail(callee + ": integer overflow (integers are 64-bit in this renderer)");
    return static_cast<std::int64_t>(d);
}

inline std::int64_t int_power(std::int64_t base, std::int64_t exponent) {
    std::int64_t r = 1;
    for (; exponent > 0; exponent >>= 1) {  // by squaring: O(log exponent) steps
        if (exponent & 1) r = checked_mul(r, base, "**");
        if (exponent > 1) base = checked_mul(base, base, "**");
    }
    return r;
}

inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    if (b == -1) return checked_negate(a, "//");
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

inline value repeat(const value& sequence, std::int64_t n) {
    if (n <= 0) return sequence.is_string() ? json("") : json(json::array());
    if (sequence.is_string()) {
        const std::size_t one = sequence.string().size();
        if (one != 0 && static_cast<std::uint64_t>(n) > max_string_bytes / one)
            check_string_size(SIZE_MAX, "'*' repetition");
        std::string out;
        for (std::int64_t i = 0; i < n; ++i) out += sequence.string();
        return json(std::move(out));
    }
    if (static_cast<std::uint64_t>(n) > max_value_bytes / approx_bytes(sequence.data()))
        check_value_size(SIZE_MAX, "'*' repetition");
    json out = json::array();
    for (std::int64_t i = 0; i < n; ++i)
        for (const json& e : sequence.data()) out.push_back(e);
    return out;
}

inline value arithmetic(const std::string& op, const value& a, const value& b) {
    if (op == "~") {
        std::string x = to_output(a), y = to_output(b);
        check_string_size(x.size() + y.size(), "'~' concatenation");
        return json(std::move(x) + y);
    }
    require_defined(a);
    require_defined(b);
    const auto unsupported = [&]() -> value {
        fail("unsupported operand types for " + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
    };
    if (!a.is_data() || !b.is_data()) return unsupported();
    const json& x = a.data();
    const json& y = b.data();
    if (json_numeric(x) && json_numeric(y)) {
        const bool integers = !x.is_number_float() && !y.is_number_float();
        const double dx = json_double(x), dy = json_double(y);
        if (op == "+") return integers ? json(checked_add(as_int(a), as_int(b), op)) : json(dx + dy);
        if (op == "-") return integers ? json(checked_sub(as_int(a), as_int(b), op)) : json(dx - dy);
        if (op == "*") return integers ? json(checked_mul(as_int(a), as_int(b), op)) : json(dx * dy);
        if ((op == "/" || op == "//" || op == "%") && dy == 0.0)
            fail(std::string(integers ? "integer" : "float") + " division or modulo by zero");
        if (op == "/") return json(dx / dy);
        if (op == "//") return integers ? json(floor_div(as_int(a), as_int(b))) : json(std::floor(dx / dy));
        if (op == "%") {
            if (integers) return json(as_int(b) == -1 ? 0 : as_int(a) - floor_div(as_int(a), as_int(b)) * as_int(b));
            double r = std::fmod(dx, dy);
            if (r != 0.0 && ((r < 0) != (dy < 0))) r += dy;
            return json(r);
        }
        if (op == "**") {
            if (integers && as_int(b) >= 0) return json(int_power(as_int(a), as_int(b)));
            return json(std::pow(dx, dy));
        }
        return unsupported();
    }
    if (op == "+" && x.is_string() && y.is_string()) {
        check_string_size(x.get_ref<const std::string&>().size() + y.get_ref<const std::string&>().size(),
                          "'+' concatenation");
        return json(x.get_ref<const std::string&>() + y.get_ref<const std::string&>());
    }
    if (op == "+" && x.is_array() && y.is_array()) {
        check_value_size(approx_bytes(x) + approx_bytes(y), "'+' concatenation of lists");
        json out = x;
        for (const json& e : y) out.push_back(e);
        return out;
    }
    if (op == "*" && (x.is_string() || x.is_array()) && y.is_number_integer()) return repeat(a, as_int(b));
    if (op == "*" && (y.is_string() || y.is_array()) && x.is_number_integer()) return repeat(b, as_int(a));
    if (op == "%" && x.is_string()) fail("printf-style string formatting with '%' is not supported by this renderer");
    return unsupported();
}

// Python's index normalization: negative counts from the end; nullopt when out of range.
inline std::optional<std::size_t> normalize_index(std::int64_t i, std::size_t size) {
    if (i < 0) i += static_cast<std::int64_t>(size);
    if (i < 0 || static_cast<std::size_t>(i) >= size) return std::nullopt;
    return static_cast<std::size_t>(i);
}

// obj[key] as Jinja2's getitem: a missing key or index is undefined, never an error.
inline value subscript(const value& object, const value& key, const std::string& description) {
    if (object.is_undefined()) fail_undefined(object);
    if (object.is_namespace()) {
        if (key.is_string()) {
            const auto it = object.ns().attributes.find(key.string());
            if (it != object.ns().attributes.end()) return it->second;
        }
        return value::make_undefined(description);
    }
    if (!object.is_data()) return value::make_undefined(description);
    const json& j = object.data();
    if (j.is_object() && key.is_string()) {
        const auto it = j.find(key.string());
        return it == j.end() ? value::make_undefined(description) : object.element(*it);
    }
    if ((j.is_array() || j.is_string()) && key.is_data() &&
        (key.data().is_number_integer() || key.data().is_boolean())) {
        if (j.is_array()) {
            const auto i = normalize_index(as_int(key), j.size());
            return i ? object.element(j[*i]) : value::make_undefined(description);
        }
        const std::string& s = j.get_ref<const std::string&>();
        const std::vector<std::size_t> at = code_point_offsets(s);
        const auto i = normalize_index(as_int(key), at.size() - 1);
        return i ? value(json(s.substr(at[*i], at[*i + 1] - at[*i]))) : value::make_undefined(description);
    }
    return value::make_undefined(description);
}

// Python's slice indices for a sequence of n items.
inline std::vector<std::size_t> slice_indices(std::size_t n, const value& start, const value& stop, const value& step) {
    const auto get = [](const value& v, const char* what) -> std::optional<std::int64_t> {
        if (v.is_undefined() || v.is_none()) return std::nullopt;
        if (!v.is_integer()) fail(std::string("slice ") + what + " must be an integer or none, not " + v.type_name());
        return as_int(v);
    };
    const auto size = static_cast<std::int64_t>(n);
    const std::int64_t s = get(step, "step").value_or(1);
    if (s == 0) fail("slice step cannot be zero");
    const auto clamp = [&](std::optional<std::int64_t> i, std::int64_t fallback) {
        if (!i) return fallback;
        std::int64_t v = *i < 0 ? *i + size : *i;
        if (s > 0) return std::clamp<std::int64_t>(v, 0, size);
        return std::clamp<std::int64_t>(v, -1, size - 1);
    };
    const std::int64_t begin = clamp(get(start, "start"), s > 0 ? 0 : size - 1);
    const std::int64_t end = clamp(get(stop, "stop"), s > 0 ? size : -1);
    std::vector<std::size_t> indices;
    for (std::int64_t i = begin; s > 0 ? i < end : i > end; i += s) indices.push_back(static_cast<std::size_t>(i));
    return indices;
}

inline value slice(const value& object, const value& start, const value& stop, const value& step) {
    require_defined(object);
    if (object.is_list()) {
        json out = is_tuple(object.data()) ? make_tuple_json() : json::array();
        for (const std::size_t i : slice_indices(object.data().size(), start, stop, step))
            out.push_back(object.data()[i]);
        return out;
    }
    if (object.is_string()) {
        const std::string& s = object.string();
        const std::vector<std::size_t> at = code_point_offsets(s);
        std::string out;
        for (const std::size_t i : slice_indices(at.size() - 1, start, stop, step))
            out.append(s, at[i], at[i + 1] - at[i]);
        return json(std::move(out));
    }
    fail("'" + object.type_name() + "' object is not subscriptable");
}

}  // namespace nexttok::detail::jinja

// The value type of the chat-template renderer. Jinja2 values in a chat template are JSON-like data
// (None, bools, ints, floats, str, lists/tuples, dicts) plus a few kinds JSON lacks: undefined (a
// missing variable or key), namespace() objects (the one mutable kind, shared by reference as in
// Python), and callables (macros, builtins, bound methods such as dict.items).
//
// Data is an immutable nlohmann::ordered_json (insertion-ordered, as Python dicts) held by shared
// pointer; an element of a list or dict aliases its parent (shared_ptr's aliasing constructor), so
// reading messages[i] copies nothing.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace nexttok::detail::jinja {

// A JSON array that remembers whether it is a Python tuple (dict.items() pairs, "(a, b)"), since
// Python prints tuples as "('a', 1)" and lists as "['a', 1]"; JSON output and equality ignore it.
template <class T, class... Rest>
class py_array : public std::vector<T, Rest...> {
public:
    using std::vector<T, Rest...>::vector;
    bool is_tuple = false;
};

// The renderer's data: insertion-ordered objects (as Python dicts) and tuple-aware arrays. The
// public API takes nlohmann::ordered_json, which converts to it.
using json = nlohmann::basic_json<nlohmann::ordered_map, py_array>;

inline json make_tuple_json() {
    json j = json::array();
    j.get_ref<json::array_t&>().is_tuple = true;
    return j;
}

inline bool is_tuple(const json& j) { return j.is_array() && j.get_ref<const json::array_t&>().is_tuple; }

// What a value operation throws; the evaluator adds the template's name, line and column and turns
// it into chat_template_error.
struct failure {
    std::string message;
};

[[noreturn]] inline void fail(std::string message) { throw failure{std::move(message)}; }

// What one render may build, so that a hostile template (loops over range(10**6) nested in each
// other, a string doubled forty times, a macro calling itself) fails with an error instead of
// running for hours, exhausting memory or overflowing the stack. Real chat templates stay orders
// of magnitude below these.
inline constexpr std::size_t max_string_bytes = std::size_t{16} << 20;  // any string, the output included
inline constexpr std::size_t max_value_bytes = std::size_t{32}
                                               << 20;        // a list or dict a template builds (approx_bytes)
inline constexpr std::int64_t max_render_steps = 1'000'000;  // statements + loop iterations + calls
inline constexpr int max_call_depth = 100;                   // nested macro calls
inline constexpr int max_value_depth = 128;                  // nesting of a list or dict a template builds
inline constexpr int max_eval_depth = 1000;                  // nested expressions being evaluated

// Fails when a string of `n` bytes would be too long; `what` names the operation.
inline void check_string_size(std::size_t n, const std::string& what) {
    if (n > max_string_bytes)
        fail(what + ": the result would be longer than " + std::to_string(max_string_bytes >> 20) + " MiB");
}

// Fails when a list or dict of about `n` bytes (approx_bytes) would be too large.
inline void check_value_size(std::size_t n, const std::string& what) {
    if (n > max_value_bytes)
        fail(what + ": the result would hold more than " + std::to_string(max_value_bytes >> 20) + " MiB");
}

// Roughly the bytes `j` holds (string bytes plus 32 per node); stops counting past `cap`, so the
// cost is O(min(size, cap)). Fails for nesting deeper than max_value_depth (copying, printing and
// comparing values recurse once per level).
template <class Json>
std::size_t approx_bytes(const Json& j, std::size_t cap = max_value_bytes, int depth = 0) {
    std::size_t total = 32;
    if (j.is_string()) return total + j.template get_ref<const std::string&>().size();
    if (!j.is_array() && !j.is_object()) return total;
    if (depth >= max_value_depth)
        fail("a list or dict nested deeper than " + std::to_string(max_value_depth) + " levels");
    for (const auto& e : j) {
        total += approx_bytes(e, cap, depth + 1);
        if (total > cap) break;
    }
    return total;
}

class value;

struct call_args;
struct callable;
struct namespace_object;

class value {
public:
    struct undefined {
        std::string name;  // what was looked up, for "'x' is undefined"
    };

    value() : v_(undefined{}) {}
    static value make_undefined(std::string name) { return value(undefined{std::move(name)}); }
    value(json j) : v_(std::make_shared<const json>(std::move(j))) {}  // NOLINT: data converts implicitly
    value(std::shared_ptr<const json> j) : v_(std::move(j)) {}
    value(std::shared_ptr<namespace_object> ns) : v_(std::move(ns)) {}
    value(std::shared_ptr<const callable> fn) : v_(std::move(fn)) {}

    bool is_undefined() const noexcept { return std::holds_alternative<undefined>(v_); }
    bool is_data() const noexcept { return std::holds_alternative<std::shared_ptr<const json>>(v_); }
    bool is_namespace() const noexcept { return std::holds_alternative<std::shared_ptr<namespace_object>>(v_); }
    bool is_callable() const noexcept { return std::holds_alternative<std::shared_ptr<const callable>>(v_); }

    bool is_none() const { return is_data() && data().is_null(); }
    bool is_string() const { return is_data() && data().is_string(); }
    bool is_bool() const { return is_data() && data().is_boolean(); }
    bool is_integer() const { return is_data() && data().is_number_integer(); }
    bool is_float() const { return is_data() && data().is_number_float(); }
    bool is_number() const { return is_data() && data().is_number(); }  // bools are not numbers here
    bool is_list() const { return is_data() && data().is_array(); }
    bool is_dict() const { return is_data() && data().is_object(); }

    const json& data() const { return *std::get<std::shared_ptr<const json>>(v_); }
    const std::shared_ptr<const json>& data_ptr() const { return std::get<std::shared_ptr<const json>>(v_); }
    const std::string& string() const { return data().get_ref<const std::string&>(); }
    namespace_object& ns() const { return *std::get<std::shared_ptr<namespace_object>>(v_); }
    const callable& function() const { return *std::get<std::shared_ptr<const callable>>(v_); }
    const std::string& undefined_name() const { return std::get<undefined>(v_).name; }

    // An element of this list or dict, sharing ownership with it.
    value element(const json& child) const { return value(std::shared_ptr<const json>(data_ptr(), &child)); }

    // This value as JSON data: a namespace becomes its attributes, undefined and callables fail.
    json to_json() const;

    // Python's truth value: None, False, 0, 0.0, "", [], {} and undefined are false.
    bool truthy() const {
        if (is_undefined()) return false;
        if (!is_data()) return true;
        const json& j = data();
        switch (j.type()) {
            case json::value_t::null:
                return false;
            case json::value_t::boolean:
                return j.get<bool>();
            case json::value_t::number_integer:
                return j.get<std::int64_t>() != 0;
            case json::value_t::number_unsigned:
                return j.get<std::uint64_t>() != 0;
            case json::value_t::number_float:
                return j.get<double>() != 0.0;
            case json::value_t::string:
                return !j.get_ref<const std::string&>().empty();
            case json::value_t::array:
            case json::value_t::object:
                return !j.empty();
            default:
                return true;
        }
    }

    // The Python type name, for messages ("'int' object has no attribute 'x'").
    std::string type_name() const {
        if (is_undefined()) return "Undefined";
        if (is_namespace()) return "Namespace";
        if (is_callable()) return "function";
        switch (data().type()) {
            case json::value_t::null:
                return "NoneType";
            case json::value_t::boolean:
                return "bool";
            case json::value_t::number_integer:
            case json::value_t::number_unsigned:
                return "int";
            case json::value_t::number_float:
                return "float";
            case json::value_t::string:
                return "str";
            case json::value_t::array:
                return "list";
            case json::value_t::object:
                return "dict";
            default:
                return "object";
        }
    }

private:
    explicit value(undefined u) : v_(std::move(u)) {}
    std::variant<undefined, std::shared_ptr<const json>, std::shared_ptr<namespace_object>,
                 std::shared_ptr<const callable>>
        v_;
};

// Positional and keyword arguments of a call, evaluated.
struct call_args {
    std::vector<value> positional;
    std::vector<std::pair<std::string, value>> keyword;
};

struct callable {
    std::string name;  // for messages
    std::function<value(call_args&)> call;
};

// namespace(): attributes assignable with {% set ns.attr = ... %} from any scope.
struct namespace_object {
    std::map<std::string, value, std::less<>> attributes;
};

inline json value::to_json() const {
    if (is_data()) return data();
    if (is_namespace()) {
        json object = json::object();
        for (const auto& [name, v] : ns().attributes) object[name] = v.to_json();
        return object;
    }
    if (is_undefined()) fail("'" + undefined_name() + "' is undefined");
    fail("a " + function().name + " function cannot be used as data");
}

// An undefined value used where Jinja2's Undefined raises (arithmetic, attribute of undefined, ...).
[[noreturn]] inline void fail_undefined(const value& v) {
    fail(v.undefined_name().empty() ? std::string("undefined value") : "'" + v.undefined_name() + "' is undefined");
}

inline double as_double(const value& v) {
    const json& j = v.data();
    if (j.is_number_float()) return j.get<double>();
    if (j.is_boolean()) return j.get<bool>() ? 1.0 : 0.0;
    return static_cast<double>(j.get<std::int64_t>());
}

inline std::int64_t as_int(const value& v) {
    const json& j = v.data();
    if (j.is_boolean()) return j.get<bool>() ? 1 : 0;
    return j.get<std::int64_t>();
}

// Python treats bool as an int in arithmetic and comparisons.
inline bool is_numeric(const value& v) { return v.is_data() && (v.data().is_number() || v.data().is_boolean()); }

}  // namespace nexttok::detail::jinja

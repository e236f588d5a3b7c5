// Binding the arguments of a filter, test, method or builtin call to its parameters, as Python
// does: positional first, then keywords by name; a missing one is left undefined (the caller
// applies its default), an extra or unknown one fails.
#pragma once

#include <nexttok/chat/detail/jinja_value.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok::detail::jinja {

inline std::vector<value> bind_arguments(const call_args& args, std::initializer_list<std::string_view> parameters,
                                         const std::string& callee) {
    std::vector<value> bound(parameters.size());
    if (args.positional.size() > parameters.size())
        fail(callee + " takes at most " + std::to_string(parameters.size()) + " argument(s), " +
             std::to_string(args.positional.size()) + " given");
    for (std::size_t i = 0; i < args.positional.size(); ++i) bound[i] = args.positional[i];
    for (const auto& [name, v] : args.keyword) {
        std::size_t i = 0;
        for (const std::string_view p : parameters) {
            if (p == name) break;
            ++i;
        }
        if (i == parameters.size()) fail(callee + " got an unexpected keyword argument '" + name + "'");
        if (i < args.positional.size()) fail(callee + " got multiple values for argument '" + name + "'");
        bound[i] = v;
    }
    return bound;
}

inline bool given(const value& v) { return !v.is_undefined(); }

inline const std::string& string_argument(const value& v, const std::string& callee, const char* parameter) {
    if (!v.is_string()) fail(callee + ": argument '" + parameter + "' must be a string, not " + v.type_name());
    return v.string();
}

inline std::int64_t int_argument(const value& v, const std::string& callee, const char* parameter) {
    if (!v.is_integer() && !v.is_bool())
        fail(callee + ": argument '" + parameter + "' must be an integer, not " + v.type_name());
    return as_int(v);
}

}  // namespace nexttok::detail::jinja

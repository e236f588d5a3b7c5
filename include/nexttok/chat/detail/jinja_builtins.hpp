// The global functions a chat template can call: Jinja2's range, namespace and dict, and the two
// Hugging Face's apply_chat_template adds: raise_exception(msg), which ends rendering with the
// template's message, and strftime_now(fmt), the local time now formatted by strftime (the clock
// is injectable so tests can fix the date).
#pragma once

#include <nexttok/chat/detail/jinja_arguments.hpp>
#include <nexttok/chat/detail/jinja_format.hpp>
#include <nexttok/chat/detail/jinja_value.hpp>

#include <chrono>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace nexttok::detail::jinja {

struct builtin_context {
    std::function<std::chrono::system_clock::time_point()> clock;  // empty: the system clock
};

using variable_map = std::map<std::string, value, std::less<>>;

inline value make_builtin(std::string name, std::function<value(call_args&)> call) {
    auto fn = std::make_shared<callable>();
    fn->name = std::move(name);
    fn->call = std::move(call);
    return value(std::shared_ptr<const callable>(std::move(fn)));
}

inline value builtin_range(call_args& args) {
    const auto a = bind_arguments(args, {"start", "stop", "step"}, "range");
    std::int64_t start = 0, stop = 0, step = 1;
    if (!given(a[1])) {
        stop = int_argument(a[0], "range", "stop");
    } else {
        start = int_argument(a[0], "range", "start");
        stop = int_argument(a[1], "range", "stop");
        if (given(a[2])) step = int_argument(a[2], "range", "step");
    }
    if (step == 0) fail("range() step must not be zero");
    json out = json::array();
    for (std::int64_t i = start; step > 0 ? i < stop : i > stop;) {
        out.push_back(i);
        if (out.size() > 1'000'000) fail("range() is too long (over a million items)");
        if (__builtin_add_overflow(i, step, &i)) break;  // past INT64_MAX (or MIN): stop is behind
    }
    return out;
}

inline std::string format_time(const std::string& format, std::chrono::system_clock::time_point now) {
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm local{};
    localtime_r(&t, &local);
    if (format.empty()) return "";
    std::string buffer(format.size() * 4 + 64, '\0');
    while (true) {
        const std::size_t n = std::strftime(buffer.data(), buffer.size(), format.c_str(), &local);
        if (n > 0 || buffer.size() > 65536) return buffer.substr(0, n);
        buffer.resize(buffer.size() * 2);
    }
}

// Adds the builtins to a template's global variables, leaving any the caller passed in place.
inline void add_builtins(variable_map& globals, const builtin_context& context) {
    globals.try_emplace("range", make_builtin("range", builtin_range));
    globals.try_emplace("namespace", make_builtin("namespace", [](call_args& args) -> value {
                            auto ns = std::make_shared<namespace_object>();
                            if (args.positional.size() > 1)
                                fail("namespace() takes at most one positional argument (a dict)");
                            if (!args.positional.empty()) {
                                if (!args.positional[0].is_dict())
                                    fail("namespace(): the positional argument must be a dict");
                                const value& d = args.positional[0];
                                for (auto it = d.data().begin(); it != d.data().end(); ++it)
                                    ns->attributes[it.key()] = d.element(it.value());
                            }
                            for (auto& [key, v] : args.keyword) ns->attributes[key] = v;
                            return value(std::move(ns));
                        }));
    globals.try_emplace("dict", make_builtin("dict", [](call_args& args) -> value {
                            if (!args.positional.empty())
                                fail("dict() with positional arguments is not supported by this renderer");
                            json out = json::object();
                            for (auto& [key, v] : args.keyword) out[key] = v.to_json();
                            return out;
                        }));
    globals.try_emplace("raise_exception", make_builtin("raise_exception", [](call_args& args) -> value {
                            const auto a = bind_arguments(args, {"message"}, "raise_exception");
                            fail(to_output(a[0]));
                        }));
    auto clock = context.clock;
    globals.try_emplace("strftime_now", make_builtin("strftime_now", [clock](call_args& args) -> value {
                            const auto a = bind_arguments(args, {"format"}, "strftime_now");
                            const auto now = clock ? clock() : std::chrono::system_clock::now();
                            return json(format_time(string_argument(a[0], "strftime_now", "format"), now));
                        }));
}

}  // namespace nexttok::detail::jinja

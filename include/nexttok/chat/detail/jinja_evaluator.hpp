// Rendering a parsed chat template: statements write to an output string, expressions evaluate to
// values. Scopes follow Jinja2: the template's top level is one frame over the caller's variables;
// each for-loop iteration, macro call and with block has its own frame (so {% set %} inside a loop
// does not leak out, which is why templates use namespace()); if blocks share their parent's.
// Builtins: range, namespace, dict, raise_exception, strftime_now (from the injected clock).
//
// Not thread-safe: one evaluator renders once; the parsed template it reads is shared and immutable.
#pragma once

#include <nexttok/chat/chat_template_error.hpp>
#include <nexttok/chat/detail/jinja_ast.hpp>
#include <nexttok/chat/detail/jinja_builtins.hpp>
#include <nexttok/chat/detail/jinja_filters.hpp>
#include <nexttok/chat/detail/jinja_format.hpp>
#include <nexttok/chat/detail/jinja_methods.hpp>
#include <nexttok/chat/detail/jinja_operators.hpp>
#include <nexttok/chat/detail/jinja_tests.hpp>
#include <nexttok/chat/detail/jinja_value.hpp>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace nexttok::detail::jinja {

struct frame {
    std::map<std::string, value, std::less<>> variables;
    std::shared_ptr<frame> parent;

    const value* find(const std::string& name) const {
        for (const frame* f = this; f != nullptr; f = f->parent.get()) {
            const auto it = f->variables.find(name);
            if (it != f->variables.end()) return &it->second;
        }
        return nullptr;
    }
};

class evaluator {
public:
    evaluator(const std::string& template_name, const builtin_context& context)
            : name_(template_name), context_(context) {}

    // Renders body with `variables` (a JSON object: messages, add_generation_prompt, bos_token, ...).
    std::string render(const statement_list& body, const json& variables) {
        auto globals = std::make_shared<frame>();
        for (auto it = variables.begin(); it != variables.end(); ++it) globals->variables[it.key()] = value(it.value());
        add_builtins(globals->variables, context_);
        auto top = std::make_shared<frame>();
        top->parent = std::move(globals);
        std::string out;
        execute(body, top, out);
        return out;
    }

private:
    enum class flow { normal, break_loop, continue_loop };

    [[noreturn]] void error(source_location at, const std::string& message) const {
        throw chat_template_error(chat_template_where(name_, at) + message);
    }

    // Counts a nesting level for its lifetime.
    struct depth_guard {
        int& depth;
        explicit depth_guard(int& d) : depth(++d) {}
        ~depth_guard() { --depth; }
        depth_guard(const depth_guard&) = delete;
        depth_guard& operator=(const depth_guard&) = delete;
    };

    // One statement, loop iteration or macro call more (max_render_steps bounds the time of a render).
    void count_step() {
        if (++steps_ > max_render_steps)
            fail("the template runs more than " + std::to_string(max_render_steps) +
                 " statements, loop iterations and calls");
    }

    flow execute(const statement_list& body, const std::shared_ptr<frame>& scope, std::string& out) {
        for (const statement_ptr& s : body) {
            const flow f = execute(*s, scope, out);
            if (f != flow::normal) return f;
        }
        return flow::normal;
    }

    flow execute(const statement& s, const std::shared_ptr<frame>& scope, std::string& out) {
        try {
            count_step();
            const flow f = execute_unchecked(s, scope, out);
            check_string_size(out.size(), "the rendered text");
            return f;
        } catch (const failure& f) {
            error(s.at, f.message);
        }
    }

    flow execute_unchecked(const statement& s, const std::shared_ptr<frame>& scope, std::string& out) {
        switch (s.type) {
            case statement::kind::text:
                out += s.text;
                return flow::normal;
            case statement::kind::output:
                out += to_output(eval(*s.expr, scope));
                return flow::normal;
            case statement::kind::if_:
                for (const auto& [condition, body] : s.branches)
                    if (eval(*condition, scope).truthy()) return execute(body, scope, out);
                return execute(s.else_body, scope, out);
            case statement::kind::for_:
                return execute_for(s, scope, out);
            case statement::kind::set:
                execute_set(s, scope);
                return flow::normal;
            case statement::kind::set_block: {
                std::string body;
                execute(s.body, scope, body);
                value v = json(std::move(body));
                if (s.filter) v = apply_filter_chain(*s.filter, std::move(v), scope);
                scope->variables[s.targets[0]] = std::move(v);
                return flow::normal;
            }
            case statement::kind::macro:
                scope->variables[s.text] = make_macro(s, scope);
                return flow::normal;
            case statement::kind::break_:
                return flow::break_loop;
            case statement::kind::continue_:
                return flow::continue_loop;
            case statement::kind::filter_block: {
                std::string body;
                const flow f = execute(s.body, scope, body);
                out += to_output(apply_filter_chain(*s.filter, value(json(std::move(body))), scope));
                return f;
            }
            case statement::kind::with_: {
                auto inner = std::make_shared<frame>();
                inner->parent = scope;
                for (std::size_t i = 0; i < s.targets.size(); ++i)
                    inner->variables[s.targets[i]] = eval(*s.values[i], scope);
                return execute(s.body, inner, out);
            }
            case statement::kind::scope:
                return execute(s.body, scope, out);
        }
        return flow::normal;
    }

    // Binds names to a value: one name takes it whole, several unpack a sequence of that length.
    static void bind(frame& f, const std::vector<std::string>& names, const value& v) {
        if (names.size() == 1) {
            f.variables[names[0]] = v;
            return;
        }
        const std::vector<value> items = iterate(v);
        if (items.size() != names.size())
            fail("cannot unpack " + std::to_string(items.size()) + " value(s) into " + std::to_string(names.size()) +
                 " names");
        for (std::size_t i = 0; i < names.size(); ++i) f.variables[names[i]] = items[i];
    }

    void execute_set(const statement& s, const std::shared_ptr<frame>& scope) {
        value v = eval(*s.expr, scope);
        if (s.text.empty()) {
            bind(*scope, s.targets, v);
            return;
        }
        const value* target = scope->find(s.targets[0]);
        if (target == nullptr || !target->is_namespace())
            fail("cannot assign attribute '" + s.text + "' on '" + s.targets[0] + "': not a namespace()");
        if (v.is_namespace()) check_namespace_nesting(v.ns(), target->ns(), s.targets[0] + "." + s.text, 1);
        target->ns().attributes[s.text] = std::move(v);
    }

    // A namespace stored in a namespace: printing and tojson recurse through them, so they must not
    // hold themselves nor nest deeper than max_value_depth.
    static void check_namespace_nesting(const namespace_object& stored, const namespace_object& into,
                                        const std::string& where, int depth) {
        if (&stored == &into) fail("cannot assign '" + where + "': the namespace would contain itself");
        if (depth > max_value_depth)
            fail("cannot assign '" + where + "': namespaces nested deeper than " + std::to_string(max_value_depth) +
                 " levels");
        for (const auto& [name, v] : stored.attributes)
            if (v.is_namespace()) check_namespace_nesting(v.ns(), into, where, depth + 1);
    }

    flow execute_for(const statement& s, const std::shared_ptr<frame>& scope, std::string& out) {
        std::vector<value> items = iterate(eval(*s.expr, scope));
        // Charged up front: building the items cost as much as iterating them.
        steps_ += static_cast<std::int64_t>(items.size());
        count_step();
        if (s.condition) {  // the filter runs first: loop.index, loop.last, ... count the kept items
            std::vector<value> kept;
            for (value& item : items) {
                count_step();
                auto probe = std::make_shared<frame>();
                probe->parent = scope;
                bind(*probe, s.targets, item);
                if (eval(*s.condition, probe).truthy()) kept.push_back(std::move(item));
            }
            items = std::move(kept);
        }
        if (items.empty()) return execute(s.else_body, scope, out);
        const auto n = static_cast<std::int64_t>(items.size());
        for (std::int64_t i = 0; i < n; ++i) {
            auto iteration = std::make_shared<frame>();
            iteration->parent = scope;
            bind(*iteration, s.targets, items[static_cast<std::size_t>(i)]);
            iteration->variables["loop"] = make_loop(items, i);
            if (execute(s.body, iteration, out) == flow::break_loop) break;
        }
        return flow::normal;
    }

    static value make_loop(const std::vector<value>& items, std::int64_t i) {
        auto loop = std::make_shared<namespace_object>();
        const auto n = static_cast<std::int64_t>(items.size());
        auto& a = loop->attributes;
        a["index"] = json(i + 1);
        a["index0"] = json(i);
        a["revindex"] = json(n - i);
        a["revindex0"] = json(n - i - 1);
        a["first"] = json(i == 0);
        a["last"] = json(i == n - 1);
        a["length"] = json(n);
        a["depth"] = json(1);
        a["depth0"] = json(0);
        a["previtem"] = i > 0 ? items[static_cast<std::size_t>(i - 1)] : value::make_undefined("loop.previtem");
        a["nextitem"] = i + 1 < n ? items[static_cast<std::size_t>(i + 1)] : value::make_undefined("loop.nextitem");
        auto cycle = std::make_shared<callable>();
        cycle->name = "loop.cycle";
        cycle->call = [i](call_args& args) -> value {
            if (args.positional.empty()) fail("loop.cycle needs at least one value");
            return args.positional[static_cast<std::size_t>(i) % args.positional.size()];
        };
        a["cycle"] = value(std::shared_ptr<const callable>(std::move(cycle)));
        return value(std::move(loop));
    }

    // A macro: a callable that renders its body in a frame over the scope it was defined in.
    value make_macro(const statement& s, const std::shared_ptr<frame>& defined_in) {
        auto fn = std::make_shared<callable>();
        fn->name = s.text;
        const statement* definition = &s;
        std::weak_ptr<frame> home = defined_in;  // a macro stored in its own frame must not keep it alive
        fn->call = [this, definition, home](call_args& args) -> value {
            count_step();
            if (depth_ >= max_call_depth)
                fail("macro '" + definition->text + "': calls nested deeper than " + std::to_string(max_call_depth) +
                     " levels");
            const depth_guard guard(depth_);
            auto f = std::make_shared<frame>();
            f->parent = home.lock();
            const auto& parameters = definition->parameters;
            if (args.positional.size() > parameters.size())
                fail("macro '" + definition->text + "' takes " + std::to_string(parameters.size()) + " argument(s), " +
                     std::to_string(args.positional.size()) + " given");
            for (std::size_t i = 0; i < parameters.size(); ++i) {
                if (i < args.positional.size()) {
                    f->variables[parameters[i].name] = args.positional[i];
                } else if (parameters[i].default_value) {
                    f->variables[parameters[i].name] = eval(*parameters[i].default_value, f);
                } else {
                    f->variables[parameters[i].name] = value::make_undefined(parameters[i].name);
                }
            }
            for (auto& [key, v] : args.keyword) {
                bool known = false;
                for (const macro_parameter& p : parameters) known = known || p.name == key;
                if (!known) fail("macro '" + definition->text + "' has no parameter '" + key + "'");
                f->variables[key] = v;
            }
            std::string out;
            execute(definition->body, f, out);
            return json(std::move(out));
        };
        return value(std::shared_ptr<const callable>(std::move(fn)));
    }

    // A filter chain parsed over a null object ({% filter %} and block set): input goes at the bottom.
    value apply_filter_chain(const expression& e, value input, const std::shared_ptr<frame>& scope) {
        if (e.a) input = apply_filter_chain(*e.a, std::move(input), scope);
        call_args args = eval_arguments(e, scope);
        return apply_filter(e.text, input, args);
    }

    call_args eval_arguments(const expression& e, const std::shared_ptr<frame>& scope) {
        call_args args;
        for (const expression_ptr& item : e.items) args.positional.push_back(eval(*item, scope));
        for (const keyword_argument& k : e.keywords) args.keyword.emplace_back(k.name, eval(*k.value, scope));
        return args;
    }

    value eval(const expression& e, const std::shared_ptr<frame>& scope) {
        try {
            if (eval_depth_ >= max_eval_depth)
                fail("expressions nested deeper than " + std::to_string(max_eval_depth) + " levels");
            const depth_guard guard(eval_depth_);
            return eval_unchecked(e, scope);
        } catch (const failure& f) {
            error(e.at, f.message);
        }
    }

    static std::string describe(const expression& e) {
        if (e.type == expression::kind::name) return e.text;
        if (e.type == expression::kind::attribute && e.a) return describe(*e.a) + "." + e.text;
        if (e.type == expression::kind::subscript && e.a && e.b && e.b->type == expression::kind::literal)
            return describe(*e.a) + "[" + python_repr(e.b->constant.data()) + "]";
        return "expression";
    }

    value eval_unchecked(const expression& e, const std::shared_ptr<frame>& scope) {
        switch (e.type) {
            case expression::kind::literal:
                return e.constant;
            case expression::kind::name: {
                const value* v = scope->find(e.text);
                return v != nullptr ? *v : value::make_undefined(e.text);
            }
            case expression::kind::list:
            case expression::kind::tuple: {
                json out = e.type == expression::kind::tuple ? make_tuple_json() : json::array();
                for (const expression_ptr& item : e.items) out.push_back(eval(*item, scope).to_json());
                check_value_size(approx_bytes(out), "a list");
                return out;
            }
            case expression::kind::dict: {
                json out = json::object();
                for (std::size_t i = 0; i + 1 < e.items.size(); i += 2) {
                    const value key = eval(*e.items[i], scope);
                    if (!key.is_string()) fail("dict keys must be strings in this renderer, not " + key.type_name());
                    out[key.string()] = eval(*e.items[i + 1], scope).to_json();
                }
                check_value_size(approx_bytes(out), "a dict");
                return out;
            }
            case expression::kind::attribute:
                return get_attribute(eval(*e.a, scope), e.text, describe(e));
            case expression::kind::subscript:
                return subscript(eval(*e.a, scope), eval(*e.b, scope), describe(e));
            case expression::kind::slice:
                return slice(eval(*e.a, scope), e.b ? eval(*e.b, scope) : value(), e.c ? eval(*e.c, scope) : value(),
                             e.d ? eval(*e.d, scope) : value());
            case expression::kind::call: {
                const value callee = eval(*e.a, scope);
                call_args args = eval_arguments(e, scope);
                if (callee.is_undefined()) fail_undefined(callee);
                if (!callee.is_callable()) fail("'" + callee.type_name() + "' object is not callable");
                return callee.function().call(args);
            }
            case expression::kind::filter: {
                const value input = eval(*e.a, scope);
                call_args args = eval_arguments(e, scope);
                return apply_filter(e.text, input, args);
            }
            case expression::kind::test: {
                const value input = eval(*e.a, scope);
                const call_args args = eval_arguments(e, scope);
                return json(apply_test(e.text, input, args) != e.negated);
            }
            case expression::kind::unary: {
                const value operand = eval(*e.a, scope);
                if (e.text == "not") return json(!operand.truthy());
                if (!is_numeric(operand)) {
                    require_defined(operand);
                    fail("bad operand type for unary " + e.text + ": '" + operand.type_name() + "'");
                }
                if (e.text == "+") return operand.is_bool() ? json(as_int(operand)) : operand;
                if (operand.is_float()) return json(-as_double(operand));
                return json(checked_negate(as_int(operand), "unary -"));
            }
            case expression::kind::binary: {
                if (e.text == "and") {
                    value left = eval(*e.a, scope);
                    return left.truthy() ? eval(*e.b, scope) : left;
                }
                if (e.text == "or") {
                    value left = eval(*e.a, scope);
                    return left.truthy() ? left : eval(*e.b, scope);
                }
                return arithmetic(e.text, eval(*e.a, scope), eval(*e.b, scope));
            }
            case expression::kind::compare:
                return compare(e.text, eval(*e.a, scope), eval(*e.b, scope));
            case expression::kind::conditional:
                if (eval(*e.b, scope).truthy()) return eval(*e.a, scope);
                return e.c ? eval(*e.c, scope) : value::make_undefined("conditional expression");
        }
        fail("unknown expression");
    }

    const std::string& name_;
    const builtin_context& context_;
    std::int64_t steps_ = 0;  // count_step() calls so far
    int depth_ = 0;           // macro calls in progress
    int eval_depth_ = 0;      // eval() calls in progress
};

}  // namespace nexttok::detail::jinja

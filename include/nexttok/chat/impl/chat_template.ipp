// The definitions of chat_template (chat_template.hpp): the Jinja lexer, parser and evaluator.
#pragma once

#include <nexttok/chat/chat_template.hpp>
#include <nexttok/chat/detail/jinja_builtins.hpp>
#include <nexttok/chat/detail/jinja_evaluator.hpp>
#include <nexttok/chat/detail/jinja_lexer.hpp>
#include <nexttok/chat/detail/jinja_parser.hpp>

#include <nlohmann/json.hpp>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace nexttok {

struct chat_template::parsed {
    detail::jinja::statement_list statements;
};

NEXTTOK_DECL chat_template::chat_template(std::string_view source, std::string name)
        : name_(std::move(name)), source_(source) {
    detail::jinja::lexer lexer(source_, name_);
    detail::jinja::parser parser(lexer.run(), name_);
    body_ = std::make_shared<const parsed>(parsed{parser.parse_template()});
}

NEXTTOK_DECL chat_template chat_template::chatml() {
    return chat_template(
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
        "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif "
        "%}",
        "chatml");
}

NEXTTOK_DECL chat_template chat_template::builtin(std::string_view name) {
    if (name == "chatml") return chatml();
    throw chat_template_error("chat template: no built-in template named '" + std::string(name) + "' (known: chatml)");
}

NEXTTOK_DECL std::string chat_template::render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                               const nlohmann::ordered_json& variables) const {
    if (!messages.is_array())
        throw chat_template_error("chat template '" + name_ + "': messages must be a JSON array, got " +
                                  messages.type_name());
    if (!variables.is_object())
        throw chat_template_error("chat template '" + name_ + "': variables must be a JSON object, got " +
                                  variables.type_name());
    detail::jinja::json all = detail::jinja::json::object();
    all["messages"] = detail::jinja::json(messages);
    all["add_generation_prompt"] = add_generation_prompt;
    for (auto it = variables.begin(); it != variables.end(); ++it) all[it.key()] = detail::jinja::json(it.value());
    const detail::jinja::builtin_context context{clock_};
    detail::jinja::evaluator evaluator(name_, context);
    return evaluator.render(body_->statements, all);
}

NEXTTOK_DECL std::string chat_template::render(const nlohmann::ordered_json& messages,
                                               bool add_generation_prompt) const {
    return render(messages, add_generation_prompt, nlohmann::ordered_json::object());
}

NEXTTOK_DECL std::string chat_template::render(std::span<const chat_message> messages, bool add_generation_prompt,
                                               const nlohmann::ordered_json& variables) const {
    return render(to_json(messages), add_generation_prompt, variables);
}

NEXTTOK_DECL std::string chat_template::render(std::span<const chat_message> messages,
                                               bool add_generation_prompt) const {
    return render(to_json(messages), add_generation_prompt, nlohmann::ordered_json::object());
}

}  // namespace nexttok

// A model's chat template: the Jinja text a model carries (GGUF tokenizer.chat_template,
// tokenizer_config.json chat_template) that turns a conversation into the prompt the model was
// trained on. Parsed once, rendered many times, with the semantics of Python's Jinja2 as Hugging
// Face's apply_chat_template runs it (trim_blocks, lstrip_blocks, loopcontrols, a tojson that keeps
// non-ASCII text, raise_exception, strftime_now). A construct the renderer does not implement is a
// chat_template_error, never a silently different prompt.
//
//   nexttok::chat_template t(source, "Qwen2.5-7B-Instruct");
//   std::string prompt = t.render(messages, true, {{"bos_token", "<s>"}, {"eos_token", "</s>"}});
//
// Ownership: the parsed template is shared between copies (immutable), so copies are cheap.
// Thread-safety: render() is const and safe to call concurrently.
#pragma once

#include <nexttok/chat/chat_message.hpp>
#include <nexttok/chat/chat_template_error.hpp>
#include <nexttok/chat/detail/jinja_builtins.hpp>
#include <nexttok/chat/detail/jinja_evaluator.hpp>
#include <nexttok/chat/detail/jinja_lexer.hpp>
#include <nexttok/chat/detail/jinja_parser.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace nexttok {

class chat_template {
public:
    using clock_function = std::function<std::chrono::system_clock::time_point()>;

    // Parses `source`; chat_template_error (naming `name`, the line and the column) on a syntax error.
    explicit chat_template(std::string_view source, std::string name = "chat template")
            : name_(std::move(name)), source_(source) {
        detail::jinja::lexer lexer(source_, name_);
        detail::jinja::parser parser(lexer.run(), name_);
        body_ = std::make_shared<const detail::jinja::statement_list>(parser.parse_template());
    }

    // ChatML ("<|im_start|>role\ncontent<|im_end|>\n"), for models that carry no template: the
    // template Hugging Face used as its default.
    static chat_template chatml() {
        return chat_template(
            "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
            "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif "
            "%}",
            "chatml");
    }

    // Built-in templates by name (--chat-template chatml); chat_template_error for an unknown name.
    static bool is_builtin_name(std::string_view name) noexcept { return name == "chatml"; }
    static chat_template builtin(std::string_view name) {
        if (name == "chatml") return chatml();
        throw chat_template_error("chat template: no built-in template named '" + std::string(name) +
                                  "' (known: chatml)");
    }

    const std::string& name() const noexcept { return name_; }
    const std::string& source() const noexcept { return source_; }

    // What strftime_now() reads; by default the system clock. Tests fix it to a date.
    void set_clock(clock_function clock) { context_.clock = std::move(clock); }

    // The prompt for `messages` (a JSON array of message objects). `variables` (a JSON object) adds
    // or overrides template variables: bos_token, eos_token, tools, documents, date_string, ...
    // chat_template_error when the template raises or does something unsupported.
    std::string render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                       const nlohmann::ordered_json& variables = nlohmann::ordered_json::object()) const {
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
        detail::jinja::evaluator evaluator(name_, context_);
        return evaluator.render(*body_, all);
    }

    std::string render(std::span<const chat_message> messages, bool add_generation_prompt,
                       const nlohmann::ordered_json& variables = nlohmann::ordered_json::object()) const {
        return render(to_json(messages), add_generation_prompt, variables);
    }

private:
    std::string name_;
    std::string source_;
    std::shared_ptr<const detail::jinja::statement_list> body_;  // the parsed template, shared by copies
    detail::jinja::builtin_context context_;
};

}  // namespace nexttok

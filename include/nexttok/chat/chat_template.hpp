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
#include <nexttok/detail/config.hpp>

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace nexttok {

class chat_template {
public:
    using clock_function = std::function<std::chrono::system_clock::time_point()>;

    // Parses `source`; chat_template_error (naming `name`, the line and the column) on a syntax error.
    NEXTTOK_DECL explicit chat_template(std::string_view source, std::string name = "chat template");

    // ChatML ("<|im_start|>role\ncontent<|im_end|>\n"), for models that carry no template: the
    // template Hugging Face used as its default.
    NEXTTOK_DECL static chat_template chatml();

    // Built-in templates by name (--chat-template chatml); chat_template_error for an unknown name.
    static bool is_builtin_name(std::string_view name) noexcept { return name == "chatml"; }
    NEXTTOK_DECL static chat_template builtin(std::string_view name);

    const std::string& name() const noexcept { return name_; }
    const std::string& source() const noexcept { return source_; }

    // What strftime_now() reads; by default the system clock. Tests fix it to a date.
    void set_clock(clock_function clock) { clock_ = std::move(clock); }

    // The prompt for `messages` (a JSON array of message objects). `variables` (a JSON object) adds
    // or overrides template variables: bos_token, eos_token, tools, documents, date_string, ...
    // chat_template_error when the template raises or does something unsupported.
    NEXTTOK_DECL std::string render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                    const nlohmann::ordered_json& variables) const;
    NEXTTOK_DECL std::string render(const nlohmann::ordered_json& messages, bool add_generation_prompt) const;

    NEXTTOK_DECL std::string render(std::span<const chat_message> messages, bool add_generation_prompt,
                                    const nlohmann::ordered_json& variables) const;
    NEXTTOK_DECL std::string render(std::span<const chat_message> messages, bool add_generation_prompt) const;

private:
    struct parsed;  // the statements of the template (impl/chat_template.ipp)

    std::string name_;
    std::string source_;
    std::shared_ptr<const parsed> body_;  // shared by copies
    clock_function clock_;                // empty: the system clock
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/chat/impl/chat_template.ipp>
#endif

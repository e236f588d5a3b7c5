// Finding a model's chat template: GGUF metadata tokenizer.chat_template (or a named one,
// tokenizer.chat_template.<name>), Hugging Face's tokenizer_config.json "chat_template" (a string,
// or a list of {"name", "template"} where "default" is the default), or a built-in by name.
// nullopt when the model carries none, so that callers can say so or fall back to ChatML.
#pragma once

#include <nexttok/chat/chat_template.hpp>
#include <nexttok/detail/config.hpp>
#include <nexttok/io/gguf.hpp>

#include <filesystem>
#include <optional>
#include <string_view>

namespace nexttok {

// The template in a GGUF file's metadata; `name` picks tokenizer.chat_template.<name> (e.g. "tool_use").
NEXTTOK_DECL std::optional<chat_template> load_chat_template(const gguf_file& file, std::string_view name = {});

// The template in a tokenizer_config.json; `name` picks one of a list (default: "default").
NEXTTOK_DECL std::optional<chat_template> load_chat_template_from_tokenizer_config(const std::filesystem::path& path,
                                                                                   std::string_view name = {});

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/chat/impl/load_chat_template.ipp>
#endif

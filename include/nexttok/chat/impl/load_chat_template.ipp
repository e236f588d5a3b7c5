// The definitions of load_chat_template.hpp.
#pragma once

#include <nexttok/chat/load_chat_template.hpp>
#include <nexttok/chat/chat_template.hpp>
#include <nexttok/chat/chat_template_error.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/io/json_limits.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace nexttok {

NEXTTOK_DECL std::optional<chat_template> load_chat_template(const gguf_file& file, std::string_view name) {
    const std::string key = name.empty() ? "tokenizer.chat_template" : "tokenizer.chat_template." + std::string(name);
    const std::optional<std::string_view> source = file.find_string(key);
    if (!source) return std::nullopt;
    return chat_template(*source, file.name() + " " + key);
}

NEXTTOK_DECL std::optional<chat_template> load_chat_template_from_tokenizer_config(const std::filesystem::path& path,
                                                                                   std::string_view name) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw io_error(path.string() + ": cannot open the tokenizer configuration");
    const std::string text(std::istreambuf_iterator<char>(in), {});
    const nlohmann::json config = parse_json_text(text, path.string());
    if (!config.is_object() || !config.contains("chat_template") || config["chat_template"].is_null())
        return std::nullopt;
    const nlohmann::json& t = config["chat_template"];
    const std::string wanted = name.empty() ? "default" : std::string(name);
    if (t.is_string()) {
        if (!name.empty() && name != "default") return std::nullopt;
        return chat_template(t.get<std::string>(), path.filename().string() + " chat_template");
    }
    if (!t.is_array())
        throw format_error(path.string() + ": field 'chat_template': expected a string or a list of {name, template}");
    for (const nlohmann::json& entry : t) {
        if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
            !entry["name"].is_string() || !entry["template"].is_string())
            throw format_error(path.string() +
                               ": field 'chat_template': each entry must be {\"name\": string, \"template\": string}");
        if (entry["name"].get<std::string>() == wanted)
            return chat_template(entry["template"].get<std::string>(),
                                 path.filename().string() + " chat_template '" + wanted + "'");
    }
    return std::nullopt;
}

}  // namespace nexttok

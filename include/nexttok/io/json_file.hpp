// Reading the JSON files of models and tokenizers (config.json, model.safetensors.index.json,
// tokenizer.json, tokenizer_config.json, encoder.json) with nlohmann::json, and checked access to
// their fields: the one JSON reader of nexttok's loaders. Files are untrusted: a syntax error is a
// format_error naming the file, the line, the column and the byte offset; nesting deeper than
// max_json_depth is refused while parsing; a missing or mistyped field is a format_error
// "<file>: key '<path>': expected ..." naming the field's path ("model.vocab"). Values from the
// file are quoted in messages by quote_text / quote_json (short).
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/json_limits.hpp>

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

namespace nexttok {

NEXTTOK_DECL nlohmann::json read_json_file(const std::filesystem::path& path);

// A JSON file that must hold an object at the top level.
NEXTTOK_DECL nlohmann::json read_json_object(const std::filesystem::path& path);

// Field access that names the file and the field in its errors.
class json_fields {
public:
    explicit json_fields(std::string file_name) : file_(std::move(file_name)) {}

    const std::string& file() const noexcept { return file_; }

    // path and expected may hold text from the file (a token as a key): both are quoted short. An
    // empty path is the top level.
    [[noreturn]] NEXTTOK_DECL void fail(std::string_view path, const std::string& expected) const;
    [[noreturn]] NEXTTOK_DECL void wrong_type(std::string_view path, const nlohmann::json& v,
                                              std::string_view expected) const;

    // The member `key` of object `obj`, or nullptr when absent (or null).
    NEXTTOK_DECL static const nlohmann::json* find(const nlohmann::json& obj, std::string_view key);
    NEXTTOK_DECL const nlohmann::json& require(const nlohmann::json& obj, std::string_view key,
                                               std::string_view path) const;

    NEXTTOK_DECL const nlohmann::json& object(const nlohmann::json& v, std::string_view path) const;
    NEXTTOK_DECL const nlohmann::json& array(const nlohmann::json& v, std::string_view path) const;
    NEXTTOK_DECL const std::string& string(const nlohmann::json& v, std::string_view path) const;
    NEXTTOK_DECL bool boolean(const nlohmann::json& v, std::string_view path) const;
    // A non-negative integer that fits token_id.
    NEXTTOK_DECL std::int32_t id(const nlohmann::json& v, std::string_view path) const;

    // A non-negative integer below 2^40 (a size or a count).
    NEXTTOK_DECL std::int64_t count(const nlohmann::json& v, std::string_view path) const;
    NEXTTOK_DECL double number(const nlohmann::json& v, std::string_view path) const;

    // Optional members of `obj` (absent or null: the default); the key is the path.
    NEXTTOK_DECL bool flag(const nlohmann::json& obj, std::string_view key, bool fallback, std::string_view path) const;
    NEXTTOK_DECL bool flag_or(const nlohmann::json& obj, std::string_view key, bool fallback) const;
    NEXTTOK_DECL std::int64_t count_or(const nlohmann::json& obj, std::string_view key, std::int64_t fallback) const;
    NEXTTOK_DECL double number_or(const nlohmann::json& obj, std::string_view key, double fallback) const;

private:
    std::string file_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/io/impl/json_file.ipp>
#endif

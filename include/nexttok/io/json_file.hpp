// Reading the JSON files of models and tokenizers (config.json, model.safetensors.index.json,
// tokenizer.json, tokenizer_config.json, encoder.json) with nlohmann::json, and checked access to
// their fields: the one JSON reader of nexttok's loaders. Files are untrusted: a syntax error is a
// format_error naming the file, the line, the column and the byte offset; nesting deeper than
// max_json_depth is refused while parsing; a missing or mistyped field is a format_error
// "<file>: key '<path>': expected ..." naming the field's path ("model.vocab"). Values from the
// file are quoted in messages by quote_text / quote_json (short).
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/json_limits.hpp>
#include <nexttok/io/mapped_file.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace nexttok {

inline nlohmann::json read_json_file(const std::filesystem::path& path) {
    const mapped_file file(path);  // io_error when it cannot be opened
    const auto* begin = reinterpret_cast<const char*>(file.data());
    return parse_json_text(std::string_view(begin, file.size()), file.name());
}

// A JSON file that must hold an object at the top level.
inline nlohmann::json read_json_object(const std::filesystem::path& path) {
    nlohmann::json j = read_json_file(path);
    if (!j.is_object())
        throw format_error(path.filename().string() + ": expected a JSON object, found " + std::string(j.type_name()));
    return j;
}

// Field access that names the file and the field in its errors.
class json_fields {
public:
    explicit json_fields(std::string file_name) : file_(std::move(file_name)) {}

    const std::string& file() const noexcept { return file_; }

    // path and expected may hold text from the file (a token as a key): both are quoted short. An
    // empty path is the top level.
    [[noreturn]] void fail(std::string_view path, const std::string& expected) const {
        throw format_error(file_ + ": " +
                           (path.empty() ? "" : "key '" + quote_text(path, 2 * max_quote_bytes) + "': ") + "expected " +
                           quote_text(expected, 3 * max_quote_bytes));
    }
    [[noreturn]] void wrong_type(std::string_view path, const nlohmann::json& v, std::string_view expected) const {
        fail(path, std::string(expected) + ", found " + v.type_name());
    }

    // The member `key` of object `obj`, or nullptr when absent (or null).
    static const nlohmann::json* find(const nlohmann::json& obj, std::string_view key) {
        const auto it = obj.find(key);
        return it == obj.end() || it->is_null() ? nullptr : &*it;
    }
    const nlohmann::json& require(const nlohmann::json& obj, std::string_view key, std::string_view path) const {
        const nlohmann::json* v = find(obj, key);
        if (v == nullptr)
            throw format_error(file_ + ": key '" + quote_text(path, 2 * max_quote_bytes) + "' is missing");
        return *v;
    }

    const nlohmann::json& object(const nlohmann::json& v, std::string_view path) const {
        if (!v.is_object()) wrong_type(path, v, "an object");
        return v;
    }
    const nlohmann::json& array(const nlohmann::json& v, std::string_view path) const {
        if (!v.is_array()) wrong_type(path, v, "an array");
        return v;
    }
    const std::string& string(const nlohmann::json& v, std::string_view path) const {
        if (!v.is_string()) wrong_type(path, v, "a string");
        return v.get_ref<const std::string&>();
    }
    bool boolean(const nlohmann::json& v, std::string_view path) const {
        if (!v.is_boolean()) wrong_type(path, v, "true or false");
        return v.get<bool>();
    }
    // A non-negative integer that fits token_id.
    std::int32_t id(const nlohmann::json& v, std::string_view path) const {
        if (!v.is_number_integer()) wrong_type(path, v, "a token id (an integer)");
        if (v.is_number_unsigned() ? v.get<std::uint64_t>() > INT32_MAX
                                   : v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > INT32_MAX)
            fail(path, "a token id in 0..2^31-1, found " + quote_json(v));
        return static_cast<std::int32_t>(v.get<std::int64_t>());
    }

    // A non-negative integer below 2^40 (a size or a count).
    std::int64_t count(const nlohmann::json& v, std::string_view path) const {
        if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0))
            wrong_type(path, v, "a non-negative integer");
        if (v.get<std::uint64_t>() > (std::uint64_t{1} << 40)) fail(path, "a count below 2^40, found " + quote_json(v));
        return v.get<std::int64_t>();
    }
    double number(const nlohmann::json& v, std::string_view path) const {
        if (!v.is_number()) wrong_type(path, v, "a number");
        return v.get<double>();
    }

    // Optional members of `obj` (absent or null: the default); the key is the path.
    bool flag(const nlohmann::json& obj, std::string_view key, bool fallback, std::string_view path) const {
        const nlohmann::json* v = find(obj, key);
        return v == nullptr ? fallback : boolean(*v, path);
    }
    bool flag_or(const nlohmann::json& obj, std::string_view key, bool fallback) const {
        return flag(obj, key, fallback, key);
    }
    std::int64_t count_or(const nlohmann::json& obj, std::string_view key, std::int64_t fallback) const {
        const nlohmann::json* v = find(obj, key);
        return v == nullptr ? fallback : count(*v, key);
    }
    double number_or(const nlohmann::json& obj, std::string_view key, double fallback) const {
        const nlohmann::json* v = find(obj, key);
        return v == nullptr ? fallback : number(*v, key);
    }

private:
    std::string file_;
};

}  // namespace nexttok

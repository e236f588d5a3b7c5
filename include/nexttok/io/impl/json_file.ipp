// The definitions of json_file.hpp: reading a JSON file and the checked field access of json_fields.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/json_file.hpp>
#include <nexttok/io/json_limits.hpp>
#include <nexttok/io/mapped_file.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace nexttok {

NEXTTOK_DECL nlohmann::json read_json_file(const std::filesystem::path& path) {
    const mapped_file file(path);  // io_error when it cannot be opened
    const auto* begin = reinterpret_cast<const char*>(file.data());
    return parse_json_text(std::string_view(begin, file.size()), file.name());
}

NEXTTOK_DECL nlohmann::json read_json_object(const std::filesystem::path& path) {
    nlohmann::json j = read_json_file(path);
    if (!j.is_object())
        throw format_error(path.filename().string() + ": expected a JSON object, found " + std::string(j.type_name()));
    return j;
}

NEXTTOK_DECL void json_fields::fail(std::string_view path, const std::string& expected) const {
    throw format_error(file_ + ": " + (path.empty() ? "" : "key '" + quote_text(path, 2 * max_quote_bytes) + "': ") +
                       "expected " + quote_text(expected, 3 * max_quote_bytes));
}

NEXTTOK_DECL void json_fields::wrong_type(std::string_view path, const nlohmann::json& v,
                                          std::string_view expected) const {
    fail(path, std::string(expected) + ", found " + v.type_name());
}

NEXTTOK_DECL const nlohmann::json* json_fields::find(const nlohmann::json& obj, std::string_view key) {
    const auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
}

NEXTTOK_DECL const nlohmann::json& json_fields::require(const nlohmann::json& obj, std::string_view key,
                                                        std::string_view path) const {
    const nlohmann::json* v = find(obj, key);
    if (v == nullptr) throw format_error(file_ + ": key '" + quote_text(path, 2 * max_quote_bytes) + "' is missing");
    return *v;
}

NEXTTOK_DECL const nlohmann::json& json_fields::object(const nlohmann::json& v, std::string_view path) const {
    if (!v.is_object()) wrong_type(path, v, "an object");
    return v;
}

NEXTTOK_DECL const nlohmann::json& json_fields::array(const nlohmann::json& v, std::string_view path) const {
    if (!v.is_array()) wrong_type(path, v, "an array");
    return v;
}

NEXTTOK_DECL const std::string& json_fields::string(const nlohmann::json& v, std::string_view path) const {
    if (!v.is_string()) wrong_type(path, v, "a string");
    return v.get_ref<const std::string&>();
}

NEXTTOK_DECL bool json_fields::boolean(const nlohmann::json& v, std::string_view path) const {
    if (!v.is_boolean()) wrong_type(path, v, "true or false");
    return v.get<bool>();
}

NEXTTOK_DECL std::int32_t json_fields::id(const nlohmann::json& v, std::string_view path) const {
    if (!v.is_number_integer()) wrong_type(path, v, "a token id (an integer)");
    if (v.is_number_unsigned() ? v.get<std::uint64_t>() > INT32_MAX
                               : v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > INT32_MAX)
        fail(path, "a token id in 0..2^31-1, found " + quote_json(v));
    return static_cast<std::int32_t>(v.get<std::int64_t>());
}

NEXTTOK_DECL std::int64_t json_fields::count(const nlohmann::json& v, std::string_view path) const {
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0))
        wrong_type(path, v, "a non-negative integer");
    if (v.get<std::uint64_t>() > (std::uint64_t{1} << 40)) fail(path, "a count below 2^40, found " + quote_json(v));
    return v.get<std::int64_t>();
}

NEXTTOK_DECL double json_fields::number(const nlohmann::json& v, std::string_view path) const {
    if (!v.is_number()) wrong_type(path, v, "a number");
    return v.get<double>();
}

NEXTTOK_DECL bool json_fields::flag(const nlohmann::json& obj, std::string_view key, bool fallback,
                                    std::string_view path) const {
    const nlohmann::json* v = find(obj, key);
    return v == nullptr ? fallback : boolean(*v, path);
}

NEXTTOK_DECL bool json_fields::flag_or(const nlohmann::json& obj, std::string_view key, bool fallback) const {
    return flag(obj, key, fallback, key);
}

NEXTTOK_DECL std::int64_t json_fields::count_or(const nlohmann::json& obj, std::string_view key,
                                                std::int64_t fallback) const {
    const nlohmann::json* v = find(obj, key);
    return v == nullptr ? fallback : count(*v, key);
}

NEXTTOK_DECL double json_fields::number_or(const nlohmann::json& obj, std::string_view key, double fallback) const {
    const nlohmann::json* v = find(obj, key);
    return v == nullptr ? fallback : number(*v, key);
}

}  // namespace nexttok

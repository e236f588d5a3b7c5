// Reader of GGUF files (versions 2 and 3): the metadata key/value section (every value type,
// arrays, strings), the tensor directory and the aligned data section. The file is memory-mapped
// and owned by the gguf_file; metadata strings and tensor views point into the mapping.
//
// Every count, length and offset is untrusted: it is checked against the bytes that remain, with
// overflow-safe arithmetic, before anything is allocated or read. Errors are format_error with a
// message "<file>: <field> at offset 0x..: <what was expected>".
//
// Thread-safety: immutable after construction; concurrent reads are safe.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/byte_reader.hpp>
#include <nexttok/io/gguf_value.hpp>
#include <nexttok/io/mapped_file.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

inline constexpr std::uint32_t gguf_magic = 0x46554747;  // "GGUF" little-endian
inline constexpr std::uint32_t gguf_default_alignment = 32;

class gguf_file {
public:
    explicit gguf_file(const std::filesystem::path& path) : file_(path) { parse(); }

    gguf_file(const gguf_file&) = delete;
    gguf_file& operator=(const gguf_file&) = delete;
    gguf_file(gguf_file&&) noexcept = default;
    gguf_file& operator=(gguf_file&&) noexcept = default;

    std::uint32_t version() const noexcept { return version_; }
    std::uint32_t alignment() const noexcept { return alignment_; }
    std::uint64_t data_offset() const noexcept { return data_offset_; }
    const mapped_file& file() const noexcept { return file_; }
    std::string name() const { return file_.name(); }

    // ---- metadata ----
    const std::map<std::string, gguf_value, std::less<>>& metadata() const noexcept { return kv_; }
    const gguf_value* find(std::string_view key) const {
        auto it = kv_.find(key);
        return it == kv_.end() ? nullptr : &it->second;
    }

    // Typed look-ups: nullopt when the key is absent; format_error when present with another type.
    std::optional<std::string_view> find_string(std::string_view key) const {
        const gguf_value* v = find(key);
        if (v == nullptr) return std::nullopt;
        if (v->type != gguf_type::string) wrong_type(key, *v, "a string");
        return v->str;
    }
    std::optional<std::uint64_t> find_uint(std::string_view key) const {
        const gguf_value* v = find(key);
        if (v == nullptr) return std::nullopt;
        if (!v->is_integer()) wrong_type(key, *v, "an integer");
        if (v->is_signed() && v->i < 0) fail_value(key, *v, "a non-negative integer, got " + std::to_string(v->i));
        return v->u;
    }
    std::optional<std::int64_t> find_int(std::string_view key) const {
        const gguf_value* v = find(key);
        if (v == nullptr) return std::nullopt;
        if (!v->is_integer()) wrong_type(key, *v, "an integer");
        if (!v->is_signed() && v->u > static_cast<std::uint64_t>(INT64_MAX)) fail_value(key, *v, "an int64");
        return v->is_signed() ? v->i : static_cast<std::int64_t>(v->u);
    }
    std::optional<double> find_float(std::string_view key) const {
        const gguf_value* v = find(key);
        if (v == nullptr) return std::nullopt;
        if (v->is_float()) return v->f;
        if (v->is_integer()) return v->is_signed() ? static_cast<double>(v->i) : static_cast<double>(v->u);
        wrong_type(key, *v, "a number");
    }
    std::optional<bool> find_bool(std::string_view key) const {
        const gguf_value* v = find(key);
        if (v == nullptr) return std::nullopt;
        if (v->type != gguf_type::boolean) wrong_type(key, *v, "a bool");
        return v->b;
    }

    // Required look-ups: format_error naming the key when absent.
    std::string_view get_string(std::string_view key) const { return require(find_string(key), key); }
    std::uint64_t get_uint(std::string_view key) const { return require(find_uint(key), key); }
    double get_float(std::string_view key) const { return require(find_float(key), key); }

    // Arrays (required). Elements are converted; a wrong element type is a format_error.
    std::vector<std::string_view> get_string_array(std::string_view key) const {
        const gguf_value& v = get_array(key, "an array of strings");
        if (v.element_type != gguf_type::string) wrong_element_type(key, v, "string");
        return v.strings;
    }
    std::vector<float> get_f32_array(std::string_view key) const {
        const gguf_value& v = get_array(key, "an array of numbers");
        if (gguf_scalar_bytes(v.element_type) == 0) wrong_element_type(key, v, "number");
        std::vector<float> out(static_cast<std::size_t>(v.count));
        for (std::uint64_t k = 0; k < v.count; ++k) out[k] = static_cast<float>(v.number_at(k));
        return out;
    }
    std::vector<std::int32_t> get_i32_array(std::string_view key) const {
        const gguf_value& v = get_array(key, "an array of integers");
        if (gguf_scalar_bytes(v.element_type) == 0 || v.element_type == gguf_type::f32 ||
            v.element_type == gguf_type::f64)
            wrong_element_type(key, v, "integer");
        std::vector<std::int32_t> out(static_cast<std::size_t>(v.count));
        for (std::uint64_t k = 0; k < v.count; ++k) {
            const double x = v.number_at(k);
            if (x < INT32_MIN || x > INT32_MAX)
                fail_value(key, v, "int32 elements, element " + std::to_string(k) + " is out of range");
            out[k] = static_cast<std::int32_t>(x);
        }
        return out;
    }

    // ---- tensors ----
    const std::vector<tensor_view>& tensors() const noexcept { return tensors_; }
    const tensor_view* find_tensor(std::string_view name) const {
        auto it = tensor_index_.find(name);
        return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
    }

private:
    static constexpr int max_array_depth = 4;

    void parse();
    gguf_value read_value(byte_reader& r, gguf_type type, const std::string& key, int depth);
    void read_array(byte_reader& r, gguf_value& v, const std::string& key, int depth);
    void read_tensor_infos(byte_reader& r, std::uint64_t n_tensors);
    void place_tensors();

    static gguf_type check_type(byte_reader& r, std::uint32_t raw, const std::string& what) {
        if (raw >= gguf_type_count)
            r.fail_at(r.offset() - 4, what, "unknown value type " + std::to_string(raw) + " (expected 0..12)");
        return static_cast<gguf_type>(raw);
    }
    static std::string_view read_string(byte_reader& r, const std::string& what) {
        const auto n = r.read<std::uint64_t>(what + " (string length)");
        return r.read_string_view(n, what + " (string of " + std::to_string(n) + " bytes)");
    }

    template <class T>
    T require(std::optional<T> v, std::string_view key) const {
        if (!v) throw format_error(name() + ": metadata key '" + std::string(key) + "' is missing");
        return *v;
    }
    const gguf_value& get_array(std::string_view key, const char* expected) const {
        const gguf_value* v = find(key);
        if (v == nullptr) throw format_error(name() + ": metadata key '" + std::string(key) + "' is missing");
        if (v->type != gguf_type::array) wrong_type(key, *v, expected);
        return *v;
    }
    [[noreturn]] void fail_value(std::string_view key, const gguf_value& v, const std::string& expected) const {
        throw format_error(name() + ": metadata key '" + std::string(key) + "' at offset " +
                           detail::hex_offset(v.offset) + ": expected " + expected);
    }
    [[noreturn]] void wrong_type(std::string_view key, const gguf_value& v, const std::string& expected) const {
        fail_value(key, v, expected + ", found " + std::string(to_string(v.type)));
    }
    [[noreturn]] void wrong_element_type(std::string_view key, const gguf_value& v, const std::string& expected) const {
        fail_value(key, v, "an array of " + expected + " elements, found " + std::string(to_string(v.element_type)));
    }

    mapped_file file_;
    std::uint32_t version_ = 0;
    std::uint32_t alignment_ = gguf_default_alignment;
    std::uint64_t data_offset_ = 0;
    std::map<std::string, gguf_value, std::less<>> kv_;
    std::vector<tensor_view> tensors_;
    std::map<std::string, std::size_t, std::less<>> tensor_index_;
};

}  // namespace nexttok

#define NEXTTOK_IO_GGUF_INCLUDED_FROM_PUBLIC
#include <nexttok/io/detail/gguf_parse.hpp>

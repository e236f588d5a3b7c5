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

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/byte_reader.hpp>
#include <nexttok/io/gguf_value.hpp>
#include <nexttok/io/mapped_file.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

inline constexpr std::uint32_t gguf_magic = 0x46554747;  // "GGUF" little-endian
inline constexpr std::uint32_t gguf_default_alignment = 32;

class gguf_file {
public:
    NEXTTOK_DECL explicit gguf_file(const std::filesystem::path& path);

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
    NEXTTOK_DECL const gguf_value* find(std::string_view key) const;

    // Typed look-ups: nullopt when the key is absent; format_error when present with another type.
    NEXTTOK_DECL std::optional<std::string_view> find_string(std::string_view key) const;
    NEXTTOK_DECL std::optional<std::uint64_t> find_uint(std::string_view key) const;
    NEXTTOK_DECL std::optional<std::int64_t> find_int(std::string_view key) const;
    NEXTTOK_DECL std::optional<double> find_float(std::string_view key) const;
    NEXTTOK_DECL std::optional<bool> find_bool(std::string_view key) const;

    // Required look-ups: format_error naming the key when absent.
    NEXTTOK_DECL std::string_view get_string(std::string_view key) const;
    NEXTTOK_DECL std::uint64_t get_uint(std::string_view key) const;
    NEXTTOK_DECL double get_float(std::string_view key) const;

    // Arrays (required). Elements are converted; a wrong element type is a format_error.
    NEXTTOK_DECL std::vector<std::string_view> get_string_array(std::string_view key) const;
    NEXTTOK_DECL std::vector<float> get_f32_array(std::string_view key) const;
    NEXTTOK_DECL std::vector<std::int32_t> get_i32_array(std::string_view key) const;

    // ---- tensors ----
    const std::vector<tensor_view>& tensors() const noexcept { return tensors_; }
    NEXTTOK_DECL const tensor_view* find_tensor(std::string_view name) const;

private:
    static constexpr int max_array_depth = 4;

    NEXTTOK_DECL void parse();
    NEXTTOK_DECL gguf_value read_value(byte_reader& r, gguf_type type, const std::string& key, int depth);
    NEXTTOK_DECL void read_array(byte_reader& r, gguf_value& v, const std::string& key, int depth);
    NEXTTOK_DECL void read_tensor_infos(byte_reader& r, std::uint64_t n_tensors);
    NEXTTOK_DECL void place_tensors();

    NEXTTOK_DECL static gguf_type check_type(byte_reader& r, std::uint32_t raw, const std::string& what);
    NEXTTOK_DECL static std::string_view read_string(byte_reader& r, const std::string& what);

    template <class T>
    T require(std::optional<T> v, std::string_view key) const {
        if (!v) throw format_error(name() + ": metadata key '" + std::string(key) + "' is missing");
        return *v;
    }
    NEXTTOK_DECL const gguf_value& get_array(std::string_view key, const char* expected) const;
    [[noreturn]] NEXTTOK_DECL void fail_value(std::string_view key, const gguf_value& v,
                                              const std::string& expected) const;
    [[noreturn]] NEXTTOK_DECL void wrong_type(std::string_view key, const gguf_value& v,
                                              const std::string& expected) const;
    [[noreturn]] NEXTTOK_DECL void wrong_element_type(std::string_view key, const gguf_value& v,
                                                      const std::string& expected) const;

    mapped_file file_;
    std::uint32_t version_ = 0;
    std::uint32_t alignment_ = gguf_default_alignment;
    std::uint64_t data_offset_ = 0;
    std::map<std::string, gguf_value, std::less<>> kv_;
    std::vector<tensor_view> tensors_;
    std::map<std::string, std::size_t, std::less<>> tensor_index_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/io/impl/gguf.ipp>
#endif

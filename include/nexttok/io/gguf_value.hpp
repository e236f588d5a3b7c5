// One metadata value of a GGUF file: a scalar, a string or an array (of scalars, strings or arrays).
// Strings and numeric array payloads are non-owning views into the mapped file.
#pragma once

#include <nexttok/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

enum class gguf_type : std::uint32_t {
    u8 = 0,
    i8 = 1,
    u16 = 2,
    i16 = 3,
    u32 = 4,
    i32 = 5,
    f32 = 6,
    boolean = 7,
    string = 8,
    array = 9,
    u64 = 10,
    i64 = 11,
    f64 = 12,
};

inline constexpr std::uint32_t gguf_type_count = 13;

inline std::string_view to_string(gguf_type t) noexcept {
    static constexpr std::string_view names[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                                 "bool", "string", "array", "u64", "i64", "f64"};
    const auto i = static_cast<std::uint32_t>(t);
    return i < gguf_type_count ? names[i] : std::string_view("unknown");
}

// Size in bytes of a fixed-size scalar type, 0 for string and array.
inline constexpr std::size_t gguf_scalar_bytes(gguf_type t) noexcept {
    switch (t) {
        case gguf_type::u8:
        case gguf_type::i8:
        case gguf_type::boolean:
            return 1;
        case gguf_type::u16:
        case gguf_type::i16:
            return 2;
        case gguf_type::u32:
        case gguf_type::i32:
        case gguf_type::f32:
            return 4;
        case gguf_type::u64:
        case gguf_type::i64:
        case gguf_type::f64:
            return 8;
        default:
            return 0;
    }
}

struct gguf_value {
    gguf_type type = gguf_type::u8;
    std::uint64_t offset = 0;  // where the value starts in the file, for messages

    // Scalars: integers widen into these; exactly one is meaningful, chosen by `type`.
    std::uint64_t u = 0;
    std::int64_t i = 0;
    double f = 0.0;
    bool b = false;
    std::string_view str;  // type == string

    // Arrays (type == array).
    gguf_type element_type = gguf_type::u8;
    std::uint64_t count = 0;
    std::span<const std::byte> raw;         // numeric elements, packed little-endian (not copied)
    std::vector<std::string_view> strings;  // string elements
    std::vector<gguf_value> items;          // nested-array elements

    bool is_integer() const noexcept {
        switch (type) {
            case gguf_type::u8:
            case gguf_type::i8:
            case gguf_type::u16:
            case gguf_type::i16:
            case gguf_type::u32:
            case gguf_type::i32:
            case gguf_type::u64:
            case gguf_type::i64:
                return true;
            default:
                return false;
        }
    }
    bool is_signed() const noexcept {
        return type == gguf_type::i8 || type == gguf_type::i16 || type == gguf_type::i32 || type == gguf_type::i64;
    }
    bool is_float() const noexcept { return type == gguf_type::f32 || type == gguf_type::f64; }

    // Element k of a numeric array as double (exact for every integer type up to 2^53 and for floats).
    double number_at(std::uint64_t k) const noexcept {
        const std::byte* p = raw.data() + k * gguf_scalar_bytes(element_type);
        switch (element_type) {
            case gguf_type::u8:
                return static_cast<double>(load<std::uint8_t>(p));
            case gguf_type::i8:
                return static_cast<double>(load<std::int8_t>(p));
            case gguf_type::u16:
                return static_cast<double>(load<std::uint16_t>(p));
            case gguf_type::i16:
                return static_cast<double>(load<std::int16_t>(p));
            case gguf_type::u32:
                return static_cast<double>(load<std::uint32_t>(p));
            case gguf_type::i32:
                return static_cast<double>(load<std::int32_t>(p));
            case gguf_type::f32:
                return static_cast<double>(load<float>(p));
            case gguf_type::boolean:
                return load<std::uint8_t>(p) != 0 ? 1.0 : 0.0;
            case gguf_type::u64:
                return static_cast<double>(load<std::uint64_t>(p));
            case gguf_type::i64:
                return static_cast<double>(load<std::int64_t>(p));
            case gguf_type::f64:
                return load<double>(p);
            default:
                return 0.0;
        }
    }

private:
    template <class T>
    static T load(const std::byte* p) noexcept {
        T v;
        std::memcpy(&v, p, sizeof(T));
        return v;
    }
};

}  // namespace nexttok

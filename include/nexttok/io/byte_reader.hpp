// A bounds-checked little-endian cursor over untrusted bytes. Every read checks the remaining
// length first (with overflow-safe arithmetic) and throws format_error naming the file, the byte
// offset and the field being read. Non-owning: the bytes must outlive the reader.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace nexttok {

static_assert(std::endian::native == std::endian::little, "nexttok reads little-endian files on little-endian hosts");

class byte_reader {
public:
    byte_reader(std::span<const std::byte> bytes, std::string file_name) : bytes_(bytes), file_(std::move(file_name)) {}

    std::size_t offset() const noexcept { return pos_; }
    std::size_t size() const noexcept { return bytes_.size(); }
    std::size_t remaining() const noexcept { return bytes_.size() - pos_; }
    const std::string& file_name() const noexcept { return file_; }
    std::span<const std::byte> bytes() const noexcept { return bytes_; }

    // Throws format_error "<file>: <what> at offset 0x..: <message>".
    [[noreturn]] void fail(std::string_view what, const std::string& message) const { fail_at(pos_, what, message); }
    [[noreturn]] NEXTTOK_DECL void fail_at(std::size_t offset, std::string_view what, const std::string& message) const;

    template <class T>
    requires std::is_trivially_copyable_v<T> T read(std::string_view what) {
        require(sizeof(T), what);
        T value;
        std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return value;
    }

    // A view of the next n bytes (no copy).
    std::span<const std::byte> read_bytes(std::uint64_t n, std::string_view what) {
        require(n, what);
        auto s = bytes_.subspan(pos_, static_cast<std::size_t>(n));
        pos_ += static_cast<std::size_t>(n);
        return s;
    }

    std::string_view read_string_view(std::uint64_t n, std::string_view what) {
        auto s = read_bytes(n, what);
        return {reinterpret_cast<const char*>(s.data()), s.size()};
    }

    void skip(std::uint64_t n, std::string_view what) {
        require(n, what);
        pos_ += static_cast<std::size_t>(n);
    }

    NEXTTOK_DECL void seek(std::uint64_t offset, std::string_view what);

    // Throws unless n more bytes are available.
    void require(std::uint64_t n, std::string_view what) const {
        if (n > remaining())
            fail(what, "needs " + std::to_string(n) + " bytes but only " + std::to_string(remaining()) +
                           " remain (file truncated?)");
    }

private:
    std::span<const std::byte> bytes_;
    std::string file_;
    std::size_t pos_ = 0;
};

namespace detail {

// a * b, or nullopt-like failure flag on overflow.
inline bool mul_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t& out) noexcept {
    return __builtin_mul_overflow(a, b, &out);
}
inline bool add_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t& out) noexcept {
    return __builtin_add_overflow(a, b, &out);
}

}  // namespace detail
}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/io/impl/byte_reader.ipp>
#endif

// A bounds-checked reader of the protobuf wire format (https://protobuf.dev/programming-guides/encoding/),
// enough for SentencePiece's ModelProto: tags, varints, length-delimited fields (strings, bytes,
// nested messages) and fixed32 / fixed64 values. No schema, no allocation.
//
// The bytes are untrusted: every read checks the bytes left in the current message (a nested
// message cannot read past its own length), varints longer than 10 bytes, field number 0, and the
// group / reserved wire types are format_error "<file>: <what> at offset 0x..: <message>", with
// offsets counted from the start of the file.
//
// Non-owning: the bytes must outlive the reader and the sub-readers and views it returns.
#pragma once

#include <nexttok/error.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace nexttok::detail {

enum class wire_type : std::uint8_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

struct protobuf_field {
    std::uint32_t number = 0;
    wire_type type = wire_type::varint;
    std::size_t offset = 0;  // of the tag, from the start of the file
};

class protobuf_reader {
public:
    // A reader over a whole file.
    protobuf_reader(std::span<const std::byte> file, std::string file_name)
            : file_(file), name_(std::move(file_name)), pos_(0), end_(file.size()) {}

    bool done() const noexcept { return pos_ >= end_; }
    std::size_t offset() const noexcept { return pos_; }
    const std::string& file_name() const noexcept { return name_; }

    [[noreturn]] void fail_at(std::size_t offset, std::string_view what, const std::string& message) const {
        throw format_error(name_ + ": " + std::string(what) + " at offset " + hex_offset(offset) + ": " + message);
    }

    // The next field's tag.
    protobuf_field next_field(std::string_view what) {
        protobuf_field f;
        f.offset = pos_;
        const std::uint64_t tag = read_varint(what);
        const std::uint64_t number = tag >> 3;
        const auto type = static_cast<std::uint8_t>(tag & 7);
        if (number == 0 || number > 0x1FFFFFFF)
            fail_at(f.offset, what, "field number " + std::to_string(number) + " is invalid");
        if (type != 0 && type != 1 && type != 2 && type != 5)
            fail_at(f.offset, what,
                    "field " + std::to_string(number) + " has wire type " + std::to_string(type) +
                        (type == 3 || type == 4 ? " (groups are not supported)" : " (not a protobuf wire type)"));
        f.number = static_cast<std::uint32_t>(number);
        f.type = static_cast<wire_type>(type);
        return f;
    }

    std::uint64_t read_varint(std::string_view what) {
        const std::size_t start = pos_;
        std::uint64_t value = 0;
        for (unsigned shift = 0; shift < 70; shift += 7) {
            if (pos_ >= end_) fail_at(start, what, "varint runs past the end of its message (truncated?)");
            const auto b = static_cast<std::uint8_t>(file_[pos_++]);
            // The 10th byte may only carry the 64th bit.
            if (shift == 63 && b > 1) fail_at(start, what, "varint does not fit 64 bits");
            value |= static_cast<std::uint64_t>(b & 0x7F) << shift;
            if ((b & 0x80) == 0) return value;
        }
        fail_at(start, what, "varint is longer than 10 bytes");
    }

    std::uint32_t read_fixed32(std::string_view what) {
        std::uint32_t v;
        std::memcpy(&v, take(4, what).data(), 4);
        return v;  // little-endian on the wire; nexttok requires a little-endian host (io/byte_reader.hpp)
    }
    std::uint64_t read_fixed64(std::string_view what) {
        std::uint64_t v;
        std::memcpy(&v, take(8, what).data(), 8);
        return v;
    }
    float read_float(std::string_view what) { return std::bit_cast<float>(read_fixed32(what)); }

    // The payload of a length-delimited field.
    std::span<const std::byte> read_bytes(std::string_view what) {
        const std::size_t start = pos_;
        const std::uint64_t n = read_varint(what);
        if (n > end_ - pos_)
            fail_at(start, what,
                    "length " + std::to_string(n) + " runs past the end of its message (" +
                        std::to_string(end_ - pos_) + " bytes left; truncated?)");
        return take(static_cast<std::size_t>(n), what);
    }
    std::string_view read_string(std::string_view what) {
        const auto b = read_bytes(what);
        return {reinterpret_cast<const char*>(b.data()), b.size()};
    }
    // A reader over a nested message (a length-delimited field), with offsets still from the file start.
    protobuf_reader read_message(std::string_view what) {
        const auto b = read_bytes(what);
        const auto begin = static_cast<std::size_t>(b.data() - file_.data());
        return protobuf_reader(file_, name_, begin, begin + b.size());
    }

    // Skips the value of a field whose tag was just read.
    void skip(const protobuf_field& f, std::string_view what) {
        switch (f.type) {
            case wire_type::varint:
                (void)read_varint(what);
                break;
            case wire_type::fixed64:
                (void)take(8, what);
                break;
            case wire_type::length_delimited:
                (void)read_bytes(what);
                break;
            case wire_type::fixed32:
                (void)take(4, what);
                break;
        }
    }

    // format_error unless the field has wire type `expected` (a file that disagrees with the schema).
    void expect(const protobuf_field& f, wire_type expected, std::string_view what) const {
        if (f.type != expected)
            fail_at(f.offset, what,
                    "field " + std::to_string(f.number) + " has wire type " + std::to_string(static_cast<int>(f.type)) +
                        ", expected " + std::to_string(static_cast<int>(expected)));
    }

private:
    protobuf_reader(std::span<const std::byte> file, std::string name, std::size_t begin, std::size_t end)
            : file_(file), name_(std::move(name)), pos_(begin), end_(end) {}

    std::span<const std::byte> take(std::size_t n, std::string_view what) {
        if (n > end_ - pos_)
            fail_at(pos_, what,
                    "needs " + std::to_string(n) + " bytes but only " + std::to_string(end_ - pos_) +
                        " remain in its message (truncated?)");
        const auto s = file_.subspan(pos_, n);
        pos_ += n;
        return s;
    }

    std::span<const std::byte> file_;  // the whole file: offsets in messages are from its start
    std::string name_;
    std::size_t pos_;
    std::size_t end_;  // end of the current message
};

}  // namespace nexttok::detail

// The definitions of byte_reader (byte_reader.hpp): its error messages and seek.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/byte_reader.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nexttok {

NEXTTOK_DECL void byte_reader::fail_at(std::size_t offset, std::string_view what, const std::string& message) const {
    throw format_error(file_ + ": " + std::string(what) + " at offset " + detail::hex_offset(offset) + ": " + message);
}

NEXTTOK_DECL void byte_reader::seek(std::uint64_t offset, std::string_view what) {
    if (offset > bytes_.size())
        fail(what, "offset " + detail::hex_offset(offset) + " is past the end of the file (" +
                       std::to_string(bytes_.size()) + " bytes)");
    pos_ = static_cast<std::size_t>(offset);
}

}  // namespace nexttok

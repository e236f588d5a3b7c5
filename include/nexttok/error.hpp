// Exceptions thrown by nexttok. Every failure on bad input (a file, an option, a prompt) is one of
// these; the library never calls exit or abort. Messages name the file, the byte offset and the
// field, and say what was expected, e.g.
//   model.gguf: tensor 'blk.3.attn_q.weight' at offset 0x1e240: type iq2_xxs is not supported
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace nexttok {

// Base of every nexttok exception.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The operating system refused: a file could not be opened, mapped or read.
class io_error : public error {
public:
    using error::error;
};

// A file's content is malformed: bad magic, truncated, out-of-bounds offsets, absurd counts.
class format_error : public error {
public:
    using error::error;
};

// Well-formed input that asks for something nexttok does not implement (a tensor type, an architecture).
class unsupported_error : public error {
public:
    using error::error;
};

// An argument or option is outside its domain (temperature < 0, top_p > 1, a prompt longer than the context).
class invalid_argument_error : public error {
public:
    using error::error;
};

// The KV cache has no room for the tokens asked for.
class cache_full_error : public error {
public:
    using error::error;
};

// What was asked for needs more memory than allowed: a KV cache or block pool over its byte limit
// (by default the machine's physical memory), or an allocation the system refused. The message
// names what was asked, the bytes needed and the limit, and what to lower.
class resource_error : public error {
public:
    using error::error;
};

namespace detail {

inline std::string hex_offset(std::uint64_t offset) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    do {
        s.insert(s.begin(), digits[offset & 0xf]);
        offset >>= 4;
    } while (offset != 0);
    return "0x" + s;
}

}  // namespace detail
}  // namespace nexttok

// Writes GGUF v3 files: metadata key/value pairs and tensors, laid out as llama.cpp's gguf writer
// does (header, key/values, tensor infos, padding to the alignment, then each tensor's bytes at an
// aligned offset from the start of the data section). For tests and benchmarks that need a real
// model file (a model built in memory, written, then mapped by load_model), and for conversions.
//
// Ownership: the writer keeps copies of the metadata but only views of tensor bytes (a span per
// tensor), which must stay valid until write() returns. Not thread-safe.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/io/gguf_value.hpp>
#include <nexttok/tensor/tensor_type.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

class gguf_writer {
public:
    static constexpr std::uint32_t alignment = 32;  // GGUF's default (general.alignment absent)

    void add_u32(const std::string& key, std::uint32_t v) { scalar(key, 4, v); }
    void add_i32(const std::string& key, std::int32_t v) { scalar(key, 5, v); }
    void add_f32(const std::string& key, float v) { scalar(key, 6, v); }
    void add_bool(const std::string& key, bool v) { scalar(key, 7, static_cast<std::uint8_t>(v)); }
    void add_string(const std::string& key, const std::string& v) {
        begin(key, 8);
        put_string(meta_, v);
    }

    // Arrays of strings, f32 and i32 (a vocabulary, its scores, its token types).
    NEXTTOK_DECL void add_strings(const std::string& key, const std::vector<std::string>& v);
    NEXTTOK_DECL void add_f32s(const std::string& key, const std::vector<float>& v);
    NEXTTOK_DECL void add_i32s(const std::string& key, const std::vector<std::int32_t>& v);

    // A value read from a GGUF file (gguf_file::metadata()), of any type, arrays and nested arrays
    // included: copies a file's metadata key by key.
    NEXTTOK_DECL void add_value(const std::string& key, const gguf_value& v);

    // A tensor of ggml shape ne (ne[0] = row length) and type `type`; `bytes` is its data, exactly
    // the size the type and shape require (checked).
    NEXTTOK_DECL void add_tensor(const std::string& name, tensor_type type, std::vector<std::uint64_t> ne,
                                 std::span<const std::byte> bytes);

    // A tensor_view as it is (name, type, shape, bytes).
    NEXTTOK_DECL void add_tensor(const tensor_view& t);

    // Writes the file; throws io_error naming the path when it cannot. An existing file is
    // replaced whole, by a file written beside it and renamed over it: a process that has the old
    // file open or mapped (this one too: a copy of a mapped GGUF file may be written over it) keeps
    // reading the old bytes, and a failed write leaves the old file as it was. The new file keeps
    // the old one's permission bits (not its owner; other hard links keep the old bytes); a
    // symbolic link at `path` stays, and the file it names is replaced. Needs write access to the
    // file's directory. Not synced to disk.
    NEXTTOK_DECL void write(const std::filesystem::path& path) const;

private:
    struct tensor {
        std::string name;
        tensor_type type;
        std::vector<std::uint64_t> ne;
        std::span<const std::byte> bytes;
    };

    static std::uint64_t padded(std::uint64_t n) noexcept { return (n + alignment - 1) / alignment * alignment; }
    template <class T>
    static void put(std::string& out, T v) {
        out.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    static void put_string(std::string& out, const std::string& s) {
        put(out, std::uint64_t{s.size()});
        out += s;
    }
    // The payload of `v` (after its type): scalars in their own width, arrays as element type, count
    // and elements.
    NEXTTOK_DECL static void put_value(std::string& out, const gguf_value& v);
    void begin(const std::string& key, std::uint32_t type) {
        ++n_kv_;
        put_string(meta_, key);
        put(meta_, type);
    }
    template <class T>
    void scalar(const std::string& key, std::uint32_t type, T v) {
        begin(key, type);
        put(meta_, v);
    }
    void begin_array(const std::string& key, std::uint32_t element_type, std::size_t n) {
        begin(key, 9);
        put(meta_, element_type);
        put(meta_, std::uint64_t{n});
    }

    std::string meta_;  // the key/value pairs, serialized
    std::uint64_t n_kv_ = 0;
    std::vector<tensor> tensors_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/io/impl/gguf_writer.ipp>
#endif

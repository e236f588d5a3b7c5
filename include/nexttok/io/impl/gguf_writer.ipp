// The definitions of gguf_writer (gguf_writer.hpp): the serialization of values and the file layout.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/gguf_value.hpp>
#include <nexttok/io/gguf_writer.hpp>
#include <nexttok/tensor/tensor_type.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

NEXTTOK_DECL void gguf_writer::add_strings(const std::string& key, const std::vector<std::string>& v) {
    begin_array(key, 8, v.size());
    for (const std::string& x : v) put_string(meta_, x);
}

NEXTTOK_DECL void gguf_writer::add_f32s(const std::string& key, const std::vector<float>& v) {
    begin_array(key, 6, v.size());
    for (const float x : v) put(meta_, x);
}

NEXTTOK_DECL void gguf_writer::add_i32s(const std::string& key, const std::vector<std::int32_t>& v) {
    begin_array(key, 5, v.size());
    for (const std::int32_t x : v) put(meta_, x);
}

NEXTTOK_DECL void gguf_writer::add_value(const std::string& key, const gguf_value& v) {
    std::string payload;
    put_value(payload, v);  // throws before anything is recorded
    begin(key, static_cast<std::uint32_t>(v.type));
    meta_ += payload;
}

NEXTTOK_DECL void gguf_writer::add_tensor(const std::string& name, tensor_type type, std::vector<std::uint64_t> ne,
                                          std::span<const std::byte> bytes) {
    const auto traits = find_tensor_type_traits(static_cast<std::uint32_t>(type));
    if (!traits || ne.empty() || ne.size() > 4)
        throw invalid_argument_error("gguf_writer: tensor '" + name + "': bad type or number of dimensions");
    std::uint64_t n = 1;
    for (std::uint64_t d : ne) n *= d;
    if (ne[0] % traits->block_size != 0 || n / traits->block_size * traits->block_bytes != bytes.size())
        throw invalid_argument_error("gguf_writer: tensor '" + name + "': " + std::to_string(bytes.size()) +
                                     " bytes do not match its shape and type " + to_string(type));
    tensors_.push_back({name, type, std::move(ne), bytes});
}

NEXTTOK_DECL void gguf_writer::add_tensor(const tensor_view& t) {
    add_tensor(t.name, t.type, std::vector<std::uint64_t>(t.ne.begin(), t.ne.begin() + t.n_dims), t.bytes());
}

NEXTTOK_DECL void gguf_writer::write(const std::filesystem::path& path) const {
    std::string head;
    put(head, std::uint32_t{0x46554747});  // "GGUF"
    put(head, std::uint32_t{3});
    put(head, static_cast<std::uint64_t>(tensors_.size()));
    put(head, n_kv_);
    head += meta_;
    std::uint64_t offset = 0;  // from the start of the data section
    for (const tensor& t : tensors_) {
        put_string(head, t.name);
        put(head, static_cast<std::uint32_t>(t.ne.size()));
        for (std::uint64_t d : t.ne) put(head, d);
        put(head, static_cast<std::uint32_t>(t.type));
        put(head, offset);
        offset = padded(offset + t.bytes.size());
    }
    head.resize(padded(head.size()), '\0');
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(head.data(), static_cast<std::streamsize>(head.size()));
    static constexpr char zeros[alignment] = {};
    for (const tensor& t : tensors_) {
        out.write(reinterpret_cast<const char*>(t.bytes.data()), static_cast<std::streamsize>(t.bytes.size()));
        out.write(zeros, static_cast<std::streamsize>(padded(t.bytes.size()) - t.bytes.size()));
    }
    if (!out) throw io_error(path.string() + ": cannot write the GGUF file");
}

NEXTTOK_DECL void gguf_writer::put_value(std::string& out, const gguf_value& v) {
    switch (v.type) {
        case gguf_type::u8:
            put(out, static_cast<std::uint8_t>(v.u));
            break;
        case gguf_type::i8:
            put(out, static_cast<std::int8_t>(v.i));
            break;
        case gguf_type::u16:
            put(out, static_cast<std::uint16_t>(v.u));
            break;
        case gguf_type::i16:
            put(out, static_cast<std::int16_t>(v.i));
            break;
        case gguf_type::u32:
            put(out, static_cast<std::uint32_t>(v.u));
            break;
        case gguf_type::i32:
            put(out, static_cast<std::int32_t>(v.i));
            break;
        case gguf_type::u64:
            put(out, v.u);
            break;
        case gguf_type::i64:
            put(out, v.i);
            break;
        case gguf_type::f32:
            put(out, static_cast<float>(v.f));
            break;
        case gguf_type::f64:
            put(out, v.f);
            break;
        case gguf_type::boolean:
            put(out, static_cast<std::uint8_t>(v.b));
            break;
        case gguf_type::string:
            put_string(out, std::string(v.str));
            break;
        case gguf_type::array:
            put(out, static_cast<std::uint32_t>(v.element_type));
            put(out, v.count);
            if (v.element_type == gguf_type::string)
                for (const std::string_view s : v.strings) put_string(out, std::string(s));
            else if (v.element_type == gguf_type::array)
                for (const gguf_value& item : v.items) put_value(out, item);  // each an array value itself
            else
                out.append(reinterpret_cast<const char*>(v.raw.data()), v.raw.size());
            break;
        default:
            throw invalid_argument_error("gguf_writer: value of unknown type " +
                                         std::to_string(static_cast<std::uint32_t>(v.type)));
    }
}

}  // namespace nexttok

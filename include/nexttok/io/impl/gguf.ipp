// The definitions of gguf_file (gguf.hpp): the parser of the header, the metadata and the tensor
// directory, and the typed look-ups.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/byte_reader.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/io/gguf_value.hpp>
#include <nexttok/tensor/tensor_type.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

NEXTTOK_DECL gguf_file::gguf_file(const std::filesystem::path& path) : file_(path) { parse(); }

NEXTTOK_DECL const gguf_value* gguf_file::find(std::string_view key) const {
    auto it = kv_.find(key);
    return it == kv_.end() ? nullptr : &it->second;
}

NEXTTOK_DECL std::optional<std::string_view> gguf_file::find_string(std::string_view key) const {
    const gguf_value* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (v->type != gguf_type::string) wrong_type(key, *v, "a string");
    return v->str;
}

NEXTTOK_DECL std::optional<std::uint64_t> gguf_file::find_uint(std::string_view key) const {
    const gguf_value* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_integer()) wrong_type(key, *v, "an integer");
    if (v->is_signed() && v->i < 0) fail_value(key, *v, "a non-negative integer, got " + std::to_string(v->i));
    return v->u;
}

NEXTTOK_DECL std::optional<std::int64_t> gguf_file::find_int(std::string_view key) const {
    const gguf_value* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_integer()) wrong_type(key, *v, "an integer");
    if (!v->is_signed() && v->u > static_cast<std::uint64_t>(INT64_MAX)) fail_value(key, *v, "an int64");
    return v->is_signed() ? v->i : static_cast<std::int64_t>(v->u);
}

NEXTTOK_DECL std::optional<double> gguf_file::find_float(std::string_view key) const {
    const gguf_value* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (v->is_float()) return v->f;
    if (v->is_integer()) return v->is_signed() ? static_cast<double>(v->i) : static_cast<double>(v->u);
    wrong_type(key, *v, "a number");
}

NEXTTOK_DECL std::optional<bool> gguf_file::find_bool(std::string_view key) const {
    const gguf_value* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (v->type != gguf_type::boolean) wrong_type(key, *v, "a bool");
    return v->b;
}

NEXTTOK_DECL std::string_view gguf_file::get_string(std::string_view key) const {
    return require(find_string(key), key);
}

NEXTTOK_DECL std::uint64_t gguf_file::get_uint(std::string_view key) const { return require(find_uint(key), key); }

NEXTTOK_DECL double gguf_file::get_float(std::string_view key) const { return require(find_float(key), key); }

NEXTTOK_DECL std::vector<std::string_view> gguf_file::get_string_array(std::string_view key) const {
    const gguf_value& v = get_array(key, "an array of strings");
    if (v.element_type != gguf_type::string) wrong_element_type(key, v, "string");
    return v.strings;
}

NEXTTOK_DECL std::vector<float> gguf_file::get_f32_array(std::string_view key) const {
    const gguf_value& v = get_array(key, "an array of numbers");
    if (gguf_scalar_bytes(v.element_type) == 0) wrong_element_type(key, v, "number");
    std::vector<float> out(static_cast<std::size_t>(v.count));
    for (std::uint64_t k = 0; k < v.count; ++k) out[k] = static_cast<float>(v.number_at(k));
    return out;
}

NEXTTOK_DECL std::vector<std::int32_t> gguf_file::get_i32_array(std::string_view key) const {
    const gguf_value& v = get_array(key, "an array of integers");
    if (gguf_scalar_bytes(v.element_type) == 0 || v.element_type == gguf_type::f32 || v.element_type == gguf_type::f64)
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

NEXTTOK_DECL const tensor_view* gguf_file::find_tensor(std::string_view name) const {
    auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

NEXTTOK_DECL gguf_type gguf_file::check_type(byte_reader& r, std::uint32_t raw, const std::string& what) {
    if (raw >= gguf_type_count)
        r.fail_at(r.offset() - 4, what, "unknown value type " + std::to_string(raw) + " (expected 0..12)");
    return static_cast<gguf_type>(raw);
}

NEXTTOK_DECL std::string_view gguf_file::read_string(byte_reader& r, const std::string& what) {
    const auto n = r.read<std::uint64_t>(what + " (string length)");
    return r.read_string_view(n, what + " (string of " + std::to_string(n) + " bytes)");
}

NEXTTOK_DECL const gguf_value& gguf_file::get_array(std::string_view key, const char* expected) const {
    const gguf_value* v = find(key);
    if (v == nullptr) throw format_error(name() + ": metadata key '" + std::string(key) + "' is missing");
    if (v->type != gguf_type::array) wrong_type(key, *v, expected);
    return *v;
}

NEXTTOK_DECL void gguf_file::fail_value(std::string_view key, const gguf_value& v, const std::string& expected) const {
    throw format_error(name() + ": metadata key '" + std::string(key) + "' at offset " + detail::hex_offset(v.offset) +
                       ": expected " + expected);
}

NEXTTOK_DECL void gguf_file::wrong_type(std::string_view key, const gguf_value& v, const std::string& expected) const {
    fail_value(key, v, expected + ", found " + std::string(to_string(v.type)));
}

NEXTTOK_DECL void gguf_file::wrong_element_type(std::string_view key, const gguf_value& v,
                                                const std::string& expected) const {
    fail_value(key, v, "an array of " + expected + " elements, found " + std::string(to_string(v.element_type)));
}

NEXTTOK_DECL void gguf_file::parse() {
    byte_reader r(file_.bytes(), name());
    const auto magic = r.read<std::uint32_t>("magic");
    if (magic != gguf_magic) r.fail_at(0, "magic", "not a GGUF file (expected the bytes 'GGUF')");
    version_ = r.read<std::uint32_t>("version");
    if (version_ != 2 && version_ != 3)
        r.fail_at(4, "version", "GGUF version " + std::to_string(version_) + " is not supported (expected 2 or 3)");
    const auto n_tensors = r.read<std::uint64_t>("tensor count");
    const auto n_kv = r.read<std::uint64_t>("metadata key/value count");
    // Each key/value takes at least 8 (key length) + 4 (type) + 1 bytes: bound the count by the file.
    if (n_kv > r.remaining() / 13)
        r.fail_at(16, "metadata key/value count",
                  std::to_string(n_kv) + " is absurd for a file of " + std::to_string(r.size()) + " bytes");
    for (std::uint64_t k = 0; k < n_kv; ++k) {
        const std::size_t key_offset = r.offset();
        const std::string what = "metadata key #" + std::to_string(k);
        const std::string key(read_string(r, what));
        const auto type = check_type(r, r.read<std::uint32_t>("type of metadata key '" + key + "'"),
                                     "type of metadata key '" + key + "'");
        gguf_value v = read_value(r, type, key, 0);
        v.offset = key_offset;
        if (!kv_.emplace(key, std::move(v)).second)
            r.fail_at(key_offset, "metadata key '" + key + "'", "duplicate key");
    }
    if (const gguf_value* a = find("general.alignment")) {
        if (a->type != gguf_type::u32) wrong_type("general.alignment", *a, "u32");
        if (a->u == 0 || (a->u & (a->u - 1)) != 0)
            fail_value("general.alignment", *a, "a power of two, got " + std::to_string(a->u));
        alignment_ = static_cast<std::uint32_t>(a->u);
    }
    read_tensor_infos(r, n_tensors);
    // The data section starts at the next multiple of the alignment after the tensor directory.
    data_offset_ = (r.offset() + alignment_ - 1) / alignment_ * alignment_;
    if (!tensors_.empty() && data_offset_ > r.size())
        r.fail("tensor data section", "starts at " + detail::hex_offset(data_offset_) + ", past the end of the file (" +
                                          std::to_string(r.size()) + " bytes)");
    place_tensors();
}

NEXTTOK_DECL gguf_value gguf_file::read_value(byte_reader& r, gguf_type type, const std::string& key, int depth) {
    gguf_value v;
    v.type = type;
    v.offset = r.offset();
    const std::string what = "value of metadata key '" + key + "'";
    switch (type) {
        case gguf_type::u8:
            v.u = r.read<std::uint8_t>(what);
            break;
        case gguf_type::i8:
            v.i = r.read<std::int8_t>(what);
            break;
        case gguf_type::u16:
            v.u = r.read<std::uint16_t>(what);
            break;
        case gguf_type::i16:
            v.i = r.read<std::int16_t>(what);
            break;
        case gguf_type::u32:
            v.u = r.read<std::uint32_t>(what);
            break;
        case gguf_type::i32:
            v.i = r.read<std::int32_t>(what);
            break;
        case gguf_type::u64:
            v.u = r.read<std::uint64_t>(what);
            break;
        case gguf_type::i64:
            v.i = r.read<std::int64_t>(what);
            break;
        case gguf_type::f32:
            v.f = r.read<float>(what);
            break;
        case gguf_type::f64:
            v.f = r.read<double>(what);
            break;
        case gguf_type::boolean: {
            const auto b = r.read<std::uint8_t>(what);
            if (b > 1) r.fail_at(v.offset, what, "a bool must be 0 or 1, got " + std::to_string(b));
            v.b = b != 0;
            v.u = b;
            break;
        }
        case gguf_type::string:
            v.str = read_string(r, what);
            break;
        case gguf_type::array:
            read_array(r, v, key, depth + 1);
            break;
    }
    if (v.is_signed())
        v.u = static_cast<std::uint64_t>(v.i);
    else if (v.is_integer())
        v.i = static_cast<std::int64_t>(v.u);
    return v;
}

NEXTTOK_DECL void gguf_file::read_array(byte_reader& r, gguf_value& v, const std::string& key, int depth) {
    const std::string what = "array of metadata key '" + key + "'";
    if (depth > max_array_depth)
        r.fail(what, "arrays nested deeper than " + std::to_string(max_array_depth) + " levels");
    v.element_type = check_type(r, r.read<std::uint32_t>(what + " (element type)"), what + " (element type)");
    const std::size_t count_offset = r.offset();
    v.count = r.read<std::uint64_t>(what + " (element count)");
    const std::size_t elem_bytes = gguf_scalar_bytes(v.element_type);
    if (elem_bytes != 0) {
        std::uint64_t n_bytes = 0;
        if (detail::mul_overflows(v.count, elem_bytes, n_bytes) || n_bytes > r.remaining())
            r.fail_at(count_offset, what,
                      std::to_string(v.count) + " elements of " + std::string(to_string(v.element_type)) +
                          " do not fit in the " + std::to_string(r.remaining()) + " bytes that remain");
        v.raw = r.read_bytes(n_bytes, what);
        if (v.element_type == gguf_type::boolean)
            for (std::byte b : v.raw)
                if (std::to_integer<unsigned>(b) > 1) r.fail(what, "a bool element must be 0 or 1");
        return;
    }
    // Strings take at least 8 bytes each, arrays at least 12: bound the count before reserving.
    const std::uint64_t min_elem = v.element_type == gguf_type::string ? 8 : 12;
    if (v.count > r.remaining() / min_elem)
        r.fail_at(count_offset, what,
                  std::to_string(v.count) + " elements cannot fit in the " + std::to_string(r.remaining()) +
                      " bytes that remain");
    if (v.element_type == gguf_type::string) {
        v.strings.reserve(static_cast<std::size_t>(v.count));
        for (std::uint64_t k = 0; k < v.count; ++k)
            v.strings.push_back(read_string(r, what + " element " + std::to_string(k)));
    } else {
        v.items.reserve(static_cast<std::size_t>(v.count));
        for (std::uint64_t k = 0; k < v.count; ++k) v.items.push_back(read_value(r, gguf_type::array, key, depth));
    }
}

NEXTTOK_DECL void gguf_file::read_tensor_infos(byte_reader& r, std::uint64_t n_tensors) {
    // A tensor entry takes at least 8 (name length) + 4 (n_dims) + 8 (one dim) + 4 (type) + 8 (offset) bytes.
    if (n_tensors > r.remaining() / 32)
        r.fail_at(8, "tensor count",
                  std::to_string(n_tensors) + " is absurd for a file of " + std::to_string(r.size()) + " bytes");
    tensors_.reserve(static_cast<std::size_t>(n_tensors));
    for (std::uint64_t k = 0; k < n_tensors; ++k) {
        const std::size_t entry_offset = r.offset();
        tensor_view t;
        t.name = std::string(read_string(r, "name of tensor #" + std::to_string(k)));
        const std::string what = "tensor '" + t.name + "'";
        t.n_dims = r.read<std::uint32_t>(what + " (dimension count)");
        if (t.n_dims == 0 || t.n_dims > 4)
            r.fail_at(entry_offset, what, std::to_string(t.n_dims) + " dimensions (expected 1 to 4)");
        std::uint64_t n_elements = 1;
        for (std::uint32_t d = 0; d < t.n_dims; ++d) {
            t.ne[d] = r.read<std::uint64_t>(what + " (dimension " + std::to_string(d) + ")");
            if (t.ne[d] == 0 || t.ne[d] > (std::uint64_t{1} << 40) ||
                detail::mul_overflows(n_elements, t.ne[d], n_elements) || n_elements > (std::uint64_t{1} << 48))
                r.fail_at(entry_offset, what,
                          "absurd shape: dimension " + std::to_string(d) + " is " + std::to_string(t.ne[d]));
        }
        const std::size_t type_offset = r.offset();
        const auto type_id = r.read<std::uint32_t>(what + " (type)");
        const auto traits = find_tensor_type_traits(type_id);
        if (!traits) r.fail_at(type_offset, what, "unknown tensor type " + std::to_string(type_id));
        t.type = static_cast<tensor_type>(type_id);
        if (t.ne[0] % traits->block_size != 0)
            r.fail_at(entry_offset, what,
                      "first dimension " + std::to_string(t.ne[0]) + " is not a multiple of the " +
                          std::string(traits->name) + " block size " + std::to_string(traits->block_size));
        t.n_bytes = n_elements / traits->block_size * traits->block_bytes;
        t.file_offset = r.read<std::uint64_t>(what + " (data offset)");  // relative until place_tensors()
        if (t.file_offset % alignment_ != 0)
            r.fail_at(entry_offset, what,
                      "data offset " + detail::hex_offset(t.file_offset) + " is not a multiple of the alignment " +
                          std::to_string(alignment_));
        if (!tensor_index_.emplace(t.name, tensors_.size()).second)
            r.fail_at(entry_offset, what, "duplicate tensor name");
        tensors_.push_back(std::move(t));
    }
}

NEXTTOK_DECL void gguf_file::place_tensors() {
    const std::uint64_t data_size = file_.size() - std::min<std::uint64_t>(data_offset_, file_.size());
    for (tensor_view& t : tensors_) {
        std::uint64_t end = 0;
        if (detail::add_overflows(t.file_offset, t.n_bytes, end) || end > data_size)
            throw format_error(name() + ": tensor '" + t.name + "' at offset " +
                               detail::hex_offset(data_offset_ + t.file_offset) + ": its " + std::to_string(t.n_bytes) +
                               " bytes of data run past the end of the file (" + std::to_string(file_.size()) +
                               " bytes)");
        t.file_offset += data_offset_;
        t.data = file_.data() + t.file_offset;
    }
    // No two tensors may share bytes.
    std::vector<const tensor_view*> order;
    order.reserve(tensors_.size());
    for (const tensor_view& t : tensors_) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->file_offset < b->file_offset; });
    for (std::size_t k = 1; k < order.size(); ++k)
        if (order[k - 1]->file_offset + order[k - 1]->n_bytes > order[k]->file_offset)
            throw format_error(name() + ": tensor '" + order[k]->name + "' at offset " +
                               detail::hex_offset(order[k]->file_offset) + ": overlaps the data of tensor '" +
                               order[k - 1]->name + "'");
}

}  // namespace nexttok

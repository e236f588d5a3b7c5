// The definitions of safetensors_file (safetensors.hpp): the parser of the JSON header and the checks
// of each tensor's dtype, shape and byte range.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/byte_reader.hpp>
#include <nexttok/io/json_limits.hpp>
#include <nexttok/io/safetensors.hpp>
#include <nexttok/tensor/tensor_type.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <nlohmann/json.hpp>

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

NEXTTOK_DECL safetensors_file::safetensors_file(const std::filesystem::path& path) : file_(path) { parse(); }

NEXTTOK_DECL const tensor_view* safetensors_file::find_tensor(std::string_view name) const {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &tensors_[it->second];
}

NEXTTOK_DECL std::optional<tensor_type> safetensors_file::dtype(std::string_view d) noexcept {
    if (d == "F32") return tensor_type::f32;
    if (d == "F16") return tensor_type::f16;
    if (d == "BF16") return tensor_type::bf16;
    return std::nullopt;
}

NEXTTOK_DECL tensor_type safetensors_file::storage_type(std::string_view d, std::uint64_t elem) noexcept {
    if (auto t = dtype(d)) return *t;
    if (d == "F64") return tensor_type::f64;
    return elem == 8 ? tensor_type::i64 : elem == 4 ? tensor_type::i32 : elem == 2 ? tensor_type::i16 : tensor_type::i8;
}

NEXTTOK_DECL std::uint64_t safetensors_file::dtype_bytes(std::string_view d) noexcept {
    static constexpr std::pair<std::string_view, std::uint64_t> sizes[] = {
        {"F64", 8}, {"I64", 8}, {"U64", 8}, {"F32", 4}, {"I32", 4},  {"U32", 4},     {"F16", 2},    {"BF16", 2},
        {"I16", 2}, {"U16", 2}, {"I8", 1},  {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
    for (const auto& [name, size] : sizes)
        if (name == d) return size;
    return 0;
}

NEXTTOK_DECL void safetensors_file::parse() {
    byte_reader r(file_.bytes(), name());
    const auto n = r.read<std::uint64_t>("header length");
    if (n > max_header_bytes || n > r.remaining())
        r.fail_at(0, "header length",
                  std::to_string(n) + " bytes do not fit in the " + std::to_string(r.remaining()) + " bytes after it");
    const std::string_view text = r.read_string_view(n, "header");
    data_offset_ = 8 + n;
    const nlohmann::json header = parse_json_text(text, name() + ": header (JSON from offset 0x8)");
    if (!header.is_object()) r.fail_at(8, "header", "expected a JSON object, found " + std::string(header.type_name()));
    const std::uint64_t data_size = file_.size() - data_offset_;
    for (const auto& [key, value] : header.items()) {
        if (key == "__metadata__") {
            if (!value.is_object()) r.fail_at(8, "header key '__metadata__'", "expected an object of strings");
            for (const auto& [mk, mv] : value.items())
                if (mv.is_string()) metadata_.emplace(mk, mv.get<std::string>());
            continue;
        }
        tensors_.push_back(read_tensor(r, key, value, data_size));
        if (!index_.emplace(key, tensors_.size() - 1).second)
            r.fail_at(8, "tensor '" + quote_text(key) + "'", "duplicate name");
    }
    check_overlaps();
}

NEXTTOK_DECL tensor_view safetensors_file::read_tensor(const byte_reader& r, const std::string& key,
                                                       const nlohmann::json& v, std::uint64_t data_size) const {
    const std::string what = "tensor '" + quote_text(key) + "'";
    auto fail = [&](const std::string& msg) {
        r.fail_at(8, what + " in the header", msg);
    };
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
        fail("expected an object with dtype, shape and data_offsets");
    const auto& d = v["dtype"];
    const auto& shape = v["shape"];
    const auto& offsets = v["data_offsets"];
    if (!d.is_string()) fail("dtype is not a string");
    if (!shape.is_array() || shape.size() > 4) fail("shape must be an array of at most 4 dimensions");
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
        fail("data_offsets must be two non-negative integers");
    const std::string dt = d.get<std::string>();
    const std::uint64_t elem = dtype_bytes(dt);
    if (elem == 0) fail("unknown dtype '" + quote_text(dt) + "'");
    tensor_view t;
    t.name = key;
    t.n_dims = static_cast<std::uint32_t>(std::max<std::size_t>(shape.size(), 1));
    std::uint64_t n_elements = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (!shape[i].is_number_unsigned()) fail("shape entries must be non-negative integers");
        const auto dim = shape[i].get<std::uint64_t>();
        if (dim > (std::uint64_t{1} << 40) || detail::mul_overflows(n_elements, dim, n_elements) ||
            n_elements > (std::uint64_t{1} << 48))
            fail("absurd shape");
        t.ne[shape.size() - 1 - i] = dim;  // safetensors shapes are row-major: the last is the fastest
    }
    const auto begin = offsets[0].get<std::uint64_t>(), end = offsets[1].get<std::uint64_t>();
    if (begin > end || end > data_size)
        fail("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] are outside the " +
             std::to_string(data_size) + " bytes of data");
    if (end - begin != n_elements * elem)
        fail("data_offsets span " + std::to_string(end - begin) + " bytes but shape and dtype need " +
             std::to_string(n_elements * elem));
    t.type = storage_type(dt, elem);
    t.n_bytes = end - begin;
    t.file_offset = data_offset_ + begin;
    // The kernels read elements in place from the mapping (page-aligned), so each must sit at a
    // multiple of its size, as the reference writer guarantees (header padded to 8 bytes, tensors
    // ordered by element size).
    if (t.file_offset % elem != 0)
        throw format_error(name() + ": " + what + " at offset " + detail::hex_offset(t.file_offset) +
                           ": data is not aligned to its " + std::to_string(elem) + "-byte elements");
    t.data = file_.data() + t.file_offset;
    return t;
}

NEXTTOK_DECL void safetensors_file::check_overlaps() const {
    std::vector<const tensor_view*> order;
    for (const tensor_view& t : tensors_) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->file_offset < b->file_offset; });
    for (std::size_t k = 1; k < order.size(); ++k)
        if (order[k - 1]->file_offset + order[k - 1]->n_bytes > order[k]->file_offset)
            throw format_error(name() + ": tensor '" + quote_text(order[k]->name) + "' at offset " +
                               detail::hex_offset(order[k]->file_offset) + ": overlaps the data of tensor '" +
                               quote_text(order[k - 1]->name) + "'");
}

}  // namespace nexttok

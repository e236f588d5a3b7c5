// A non-owning view of one tensor's bytes inside a mapped model file, with its name, type and shape.
// Dimensions follow ggml's order: ne[0] is the fastest-varying (the row length of a matrix), so a
// weight matrix with `rows` outputs and `cols` inputs has ne = {cols, rows}. Valid while the file
// that holds the bytes stays mapped.
#pragma once

#include <nexttok/tensor/tensor_type.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace nexttok {

struct tensor_view {
    std::string name;
    tensor_type type = tensor_type::f32;
    std::uint32_t n_dims = 0;
    std::array<std::uint64_t, 4> ne{1, 1, 1, 1};  // ggml order, unused dims are 1
    const std::byte* data = nullptr;
    std::uint64_t n_bytes = 0;
    std::uint64_t file_offset = 0;  // absolute byte offset of the data in its file, for messages

    bool empty() const noexcept { return data == nullptr; }
    std::uint64_t n_elements() const noexcept { return ne[0] * ne[1] * ne[2] * ne[3]; }
    std::uint64_t cols() const noexcept { return ne[0]; }
    std::uint64_t rows() const noexcept { return ne[1] * ne[2] * ne[3]; }
    std::uint64_t row_bytes() const noexcept { return rows() == 0 ? 0 : n_bytes / rows(); }
    std::span<const std::byte> bytes() const noexcept { return {data, static_cast<std::size_t>(n_bytes)}; }
    const std::byte* row(std::uint64_t r) const noexcept { return data + r * row_bytes(); }

    std::string shape_string() const {
        std::string s = "[";
        for (std::uint32_t i = 0; i < n_dims; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
        return s + "]";
    }
};

}  // namespace nexttok

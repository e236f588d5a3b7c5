// Shape and type checks shared by the model loaders. Internal.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/tensor/tensor_view.hpp>
#include <nexttok/tensor/weight_types.hpp>

#include <cstdint>
#include <string>

namespace nexttok::detail {

// Weight types the decoder's kernels compute with: f32, f16, bf16 and ggml's q8_0, q4_0, q4_1, q5_0,
// q5_1, iq4_nl, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_xs
// (the list lives beside the dispatch, in kernels/weight_types.hpp).
inline bool is_supported_weight_type(tensor_type t) noexcept { return supports_weight_type(t); }

inline std::string tensor_place(const std::string& file, const tensor_view& t) {
    return file + ": tensor '" + t.name + "' at offset " + hex_offset(t.file_offset);
}

// Throws unless `t` is a supported type with shape {cols} (rows == 0) or {cols, rows}.
inline void check_weight(const std::string& file, const tensor_view& t, std::int64_t rows, std::int64_t cols) {
    const bool vector = rows == 0;
    const bool ok = vector ? (t.n_dims == 1 && t.ne[0] == static_cast<std::uint64_t>(cols))
                           : (t.n_dims == 2 && t.ne[0] == static_cast<std::uint64_t>(cols) &&
                              t.ne[1] == static_cast<std::uint64_t>(rows));
    if (!ok) {
        const std::string expected =
            vector ? "[" + std::to_string(cols) + "]" : "[" + std::to_string(cols) + ", " + std::to_string(rows) + "]";
        throw format_error(tensor_place(file, t) + ": shape " + t.shape_string() +
                           " does not match the hyper-parameters (expected " + expected + ")");
    }
    if (!is_supported_weight_type(t.type))
        throw unsupported_error(tensor_place(file, t) + ": type " + to_string(t.type) + " is not supported");
}

}  // namespace nexttok::detail

// The storage types of weight matrices that the kernels compute with, and the one runtime dispatch
// from a tensor's type to the C++ type of its elements (float, Eigen::half, Eigen::bfloat16) or
// blocks (block_q8_0, ...). matmul dispatches here once per task of rows (kernels/matmul.hpp) and read_row once per row, never per
// element.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/tensor/quant_blocks.hpp>
#include <nexttok/tensor/repacked_blocks.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <Eigen/Core>

#include <cstdint>
#include <string>
#include <type_traits>

namespace nexttok {

// True for the types visit_weight_type dispatches (the loaders check this up front).
inline constexpr bool supports_weight_type(tensor_type t) noexcept {
    switch (t) {
        case tensor_type::f32:
        case tensor_type::f16:
        case tensor_type::bf16:
        case tensor_type::q8_0:
        case tensor_type::q4_0:
        case tensor_type::q4_k:
        case tensor_type::q5_k:
        case tensor_type::q6_k:
        case tensor_type::q2_k:
        case tensor_type::q3_k:
        case tensor_type::iq4_xs:
        case tensor_type::q4_1:
        case tensor_type::q5_0:
        case tensor_type::q5_1:
        case tensor_type::iq4_nl:
        case tensor_type::q8_0_r16:
        case tensor_type::q4_0_r16:
            return true;
        default:
            return false;
    }
}

// Elements (of type W) from the start of one row of `cols` weights to the next.
template <class W>
inline constexpr std::int64_t row_stride(std::int64_t cols) noexcept {
    if constexpr (quant_block<W>)
        return cols / W::block_size;
    else
        return cols;
}

// Calls f(std::type_identity<W>{}) with W the element or block type of w, and returns its result.
// Throws unsupported_error naming the tensor, its offset, its type and `user` for a type that
// supports_weight_type rejects, and format_error for a row length that is not a whole number of
// blocks (a tensor_view not made by the GGUF reader, which checks it).
template <class F>
decltype(auto) visit_weight_type(const tensor_view& w, const char* user, F&& f) {
    auto check_blocks = [&](std::int64_t block_size) {
        if (w.cols() % static_cast<std::uint64_t>(block_size) != 0)
            throw format_error("tensor '" + w.name + "' at offset " + detail::hex_offset(w.file_offset) +
                               ": row length " + std::to_string(w.cols()) + " is not a multiple of the " +
                               to_string(w.type) + " block size " + std::to_string(block_size));
    };
    auto blocks = [&]<class B>(std::type_identity<B> tag) -> decltype(auto) {
        check_blocks(B::block_size);
        return f(tag);
    };
    switch (w.type) {
        case tensor_type::f32:
            return f(std::type_identity<float>{});
        case tensor_type::f16:
            return f(std::type_identity<Eigen::half>{});
        case tensor_type::bf16:
            return f(std::type_identity<Eigen::bfloat16>{});
        case tensor_type::q8_0:
            return blocks(std::type_identity<block_q8_0>{});
        case tensor_type::q4_0:
            return blocks(std::type_identity<block_q4_0>{});
        case tensor_type::q4_k:
            return blocks(std::type_identity<block_q4_k>{});
        case tensor_type::q5_k:
            return blocks(std::type_identity<block_q5_k>{});
        case tensor_type::q6_k:
            return blocks(std::type_identity<block_q6_k>{});
        case tensor_type::q2_k:
            return blocks(std::type_identity<block_q2_k>{});
        case tensor_type::q3_k:
            return blocks(std::type_identity<block_q3_k>{});
        case tensor_type::iq4_xs:
            return blocks(std::type_identity<block_iq4_xs>{});
        case tensor_type::q4_1:
            return blocks(std::type_identity<block_q4_1>{});
        case tensor_type::q5_0:
            return blocks(std::type_identity<block_q5_0>{});
        case tensor_type::q5_1:
            return blocks(std::type_identity<block_q5_1>{});
        case tensor_type::iq4_nl:
            return blocks(std::type_identity<block_iq4_nl>{});
        case tensor_type::q8_0_r16:
            return blocks(std::type_identity<block_q8_0_r16>{});
        case tensor_type::q4_0_r16:
            return blocks(std::type_identity<block_q4_0_r16>{});
        default:
            throw unsupported_error("tensor '" + w.name + "' at offset " + detail::hex_offset(w.file_offset) +
                                    ": type " + to_string(w.type) + " is not supported by " + user);
    }
}

}  // namespace nexttok

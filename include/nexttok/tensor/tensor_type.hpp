// Storage types of tensors in model files, with ggml's numbering (GGUF stores these ids). A tensor
// of n elements along its first dimension holds n / block_size blocks of block_bytes bytes each.
// The table lists every type a GGUF file may name, so any file parses; which types the decoder can
// compute with is a separate question (kernels/), answered with unsupported_error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nexttok {

enum class tensor_type : std::uint32_t {
    f32 = 0,
    f16 = 1,
    q4_0 = 2,
    q4_1 = 3,
    q5_0 = 6,
    q5_1 = 7,
    q8_0 = 8,
    q8_1 = 9,
    q2_k = 10,
    q3_k = 11,
    q4_k = 12,
    q5_k = 13,
    q6_k = 14,
    q8_k = 15,
    iq2_xxs = 16,
    iq2_xs = 17,
    iq3_xxs = 18,
    iq1_s = 19,
    iq4_nl = 20,
    iq3_s = 21,
    iq2_s = 22,
    iq4_xs = 23,
    i8 = 24,
    i16 = 25,
    i32 = 26,
    i64 = 27,
    f64 = 28,
    iq1_m = 29,
    bf16 = 30,
    tq1_0 = 34,
    tq2_0 = 35,
    // Never in a file: q8_0 and q4_0 matrices repacked by a model for the kernels
    // (tensor/repacked_blocks.hpp), the same bytes per row as the file's type.
    q8_0_r16 = 0x10008,
    q4_0_r16 = 0x10002,
};

struct tensor_type_traits {
    std::string_view name;
    std::uint32_t block_size;   // elements per block
    std::uint32_t block_bytes;  // bytes per block
};

// Traits of a type id as stored in a file, or nullopt for an id that is not a known type.
inline std::optional<tensor_type_traits> find_tensor_type_traits(std::uint32_t id) noexcept {
    switch (static_cast<tensor_type>(id)) {
        case tensor_type::f32:
            return tensor_type_traits{"f32", 1, 4};
        case tensor_type::f16:
            return tensor_type_traits{"f16", 1, 2};
        case tensor_type::q4_0:
            return tensor_type_traits{"q4_0", 32, 18};
        case tensor_type::q4_1:
            return tensor_type_traits{"q4_1", 32, 20};
        case tensor_type::q5_0:
            return tensor_type_traits{"q5_0", 32, 22};
        case tensor_type::q5_1:
            return tensor_type_traits{"q5_1", 32, 24};
        case tensor_type::q8_0:
            return tensor_type_traits{"q8_0", 32, 34};
        case tensor_type::q8_1:
            return tensor_type_traits{"q8_1", 32, 36};
        case tensor_type::q2_k:
            return tensor_type_traits{"q2_k", 256, 84};
        case tensor_type::q3_k:
            return tensor_type_traits{"q3_k", 256, 110};
        case tensor_type::q4_k:
            return tensor_type_traits{"q4_k", 256, 144};
        case tensor_type::q5_k:
            return tensor_type_traits{"q5_k", 256, 176};
        case tensor_type::q6_k:
            return tensor_type_traits{"q6_k", 256, 210};
        case tensor_type::q8_k:
            return tensor_type_traits{"q8_k", 256, 292};
        case tensor_type::iq2_xxs:
            return tensor_type_traits{"iq2_xxs", 256, 66};
        case tensor_type::iq2_xs:
            return tensor_type_traits{"iq2_xs", 256, 74};
        case tensor_type::iq3_xxs:
            return tensor_type_traits{"iq3_xxs", 256, 98};
        case tensor_type::iq1_s:
            return tensor_type_traits{"iq1_s", 256, 50};
        case tensor_type::iq4_nl:
            return tensor_type_traits{"iq4_nl", 32, 18};
        case tensor_type::iq3_s:
            return tensor_type_traits{"iq3_s", 256, 110};
        case tensor_type::iq2_s:
            return tensor_type_traits{"iq2_s", 256, 82};
        case tensor_type::iq4_xs:
            return tensor_type_traits{"iq4_xs", 256, 136};
        case tensor_type::i8:
            return tensor_type_traits{"i8", 1, 1};
        case tensor_type::i16:
            return tensor_type_traits{"i16", 1, 2};
        case tensor_type::i32:
            return tensor_type_traits{"i32", 1, 4};
        case tensor_type::i64:
            return tensor_type_traits{"i64", 1, 8};
        case tensor_type::f64:
            return tensor_type_traits{"f64", 1, 8};
        case tensor_type::iq1_m:
            return tensor_type_traits{"iq1_m", 256, 56};
        case tensor_type::bf16:
            return tensor_type_traits{"bf16", 1, 2};
        case tensor_type::tq1_0:
            return tensor_type_traits{"tq1_0", 256, 54};
        case tensor_type::tq2_0:
            return tensor_type_traits{"tq2_0", 256, 66};
        case tensor_type::q8_0_r16:  // not a file's type
        case tensor_type::q4_0_r16:
            return std::nullopt;
    }
    return std::nullopt;
}

inline std::string to_string(tensor_type t) {
    if (t == tensor_type::q8_0_r16) return "q8_0 (repacked)";
    if (t == tensor_type::q4_0_r16) return "q4_0 (repacked)";
    if (auto traits = find_tensor_type_traits(static_cast<std::uint32_t>(t))) return std::string(traits->name);
    return "type " + std::to_string(static_cast<std::uint32_t>(t));
}

}  // namespace nexttok

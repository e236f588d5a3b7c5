// The load-time scan of weight values (llama.cpp's --check-tensors): in float tensors (f32, f16,
// bf16) every value must be finite; in quantized ones every block's float scales (d, and dmin or
// m where the type has one). Integer quants cannot be non-finite, so a block's scales are all
// there is to check. The first non-finite value is a format_error such as
//   model.gguf: tensor 'blk.0.attn_q.weight' at offset 0x1e240: element 12 of row 3 is NaN
//   model.gguf: tensor 'blk.0.ffn_up.weight' at offset 0x3c000: block 17 of row 3 has scale d = inf
// The scan reads every byte of the weights once (tested on bit patterns, no conversion); the
// loaders run it as load_options::check_tensors says.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/model/detail/weight_checks.hpp>
#include <nexttok/model/load_options.hpp>
#include <nexttok/model/model_weights.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

namespace nexttok {

namespace detail {

// A half-precision scale inside a block: its byte offset and its name in ggml's block struct.
struct block_scale_field {
    std::uint32_t offset;
    const char* name;
};

// The float scales of a block of type t (empty for float types and types without a layout here).
inline std::span<const block_scale_field> block_scale_fields(tensor_type t) noexcept {
    static constexpr block_scale_field d0[] = {{0, "d"}};
    static constexpr block_scale_field d0_m2[] = {{0, "d"}, {2, "m"}};
    static constexpr block_scale_field d0_dmin2[] = {{0, "d"}, {2, "dmin"}};
    static constexpr block_scale_field q2_k[] = {{80, "d"}, {82, "dmin"}};  // after scales[16], qs[64]
    static constexpr block_scale_field q3_k[] = {{108, "d"}};               // after hmask[32], qs[64], scales[12]
    static constexpr block_scale_field q6_k[] = {{208, "d"}};               // after ql[128], qh[64], scales[16]
    switch (t) {
        case tensor_type::q8_0:
        case tensor_type::q4_0:
        case tensor_type::q5_0:
        case tensor_type::iq4_nl:
        case tensor_type::iq4_xs:
            return d0;
        case tensor_type::q4_1:
        case tensor_type::q5_1:
            return d0_m2;
        case tensor_type::q4_k:
        case tensor_type::q5_k:
            return d0_dmin2;
        case tensor_type::q2_k:
            return q2_k;
        case tensor_type::q3_k:
            return q3_k;
        case tensor_type::q6_k:
            return q6_k;
        default:
            return {};
    }
}

// A non-finite value's name from its bits (exponent all ones): NaN, inf or -inf.
inline const char* non_finite_name(bool nan, bool negative) noexcept { return nan ? "NaN" : negative ? "-inf" : "inf"; }

// Index of the first element of a float tensor whose exponent bits are all ones, or -1. Word is
// the storage (uint32_t for f32, uint16_t for f16 and bf16); exponent the mask of its exponent.
template <class Word>
inline std::int64_t first_non_finite(const std::byte* data, std::int64_t n, Word exponent) noexcept {
    constexpr std::int64_t chunk = 4096;  // an OR-reduction per chunk vectorizes; the exact index is found after
    Word buffer[chunk];
    for (std::int64_t i0 = 0; i0 < n; i0 += chunk) {
        const std::int64_t m = std::min(chunk, n - i0);
        std::memcpy(buffer, data + i0 * static_cast<std::int64_t>(sizeof(Word)),
                    static_cast<std::size_t>(m) * sizeof(Word));
        unsigned any = 0;
        for (std::int64_t i = 0; i < m; ++i) any |= static_cast<unsigned>((buffer[i] & exponent) == exponent);
        if (any)
            for (std::int64_t i = 0; i < m; ++i)
                if ((buffer[i] & exponent) == exponent) return i0 + i;
    }
    return -1;
}

template <class Word>
inline void check_float_values(const std::string& where, const tensor_view& t, Word exponent) {
    const auto n = static_cast<std::int64_t>(t.n_elements());
    const std::int64_t i = first_non_finite<Word>(t.data, n, exponent);
    if (i < 0) return;
    Word bits;
    std::memcpy(&bits, t.data + i * static_cast<std::int64_t>(sizeof(Word)), sizeof bits);
    const Word sign = static_cast<Word>(Word{1} << (8 * sizeof(Word) - 1));
    const bool nan = (bits & static_cast<Word>(~(exponent | sign))) != 0;
    const auto cols = static_cast<std::int64_t>(t.cols());
    const std::string element = t.n_dims <= 1
                                    ? "element " + std::to_string(i)
                                    : "element " + std::to_string(i % cols) + " of row " + std::to_string(i / cols);
    throw format_error(where + element + " is " + non_finite_name(nan, (bits & sign) != 0));
}

inline void check_block_scales(const std::string& where, const tensor_view& t,
                               std::span<const block_scale_field> fields) {
    const auto traits = find_tensor_type_traits(static_cast<std::uint32_t>(t.type));
    if (!traits || traits->block_size == 0) return;
    const std::uint64_t blocks_per_row = t.cols() / traits->block_size;
    const std::uint64_t n_blocks = t.n_bytes / traits->block_bytes;
    for (std::uint64_t b = 0; b < n_blocks; ++b) {
        const std::byte* block = t.data + b * traits->block_bytes;
        for (const block_scale_field& f : fields) {
            std::uint16_t bits;
            std::memcpy(&bits, block + f.offset, sizeof bits);
            if ((bits & 0x7c00u) != 0x7c00u) continue;
            const std::string row =
                t.n_dims <= 1 || blocks_per_row == 0 ? "" : " of row " + std::to_string(b / blocks_per_row);
            const std::uint64_t in_row = blocks_per_row == 0 ? b : b % blocks_per_row;
            throw format_error(where + "block " + std::to_string(in_row) + row + " has scale " + f.name + " = " +
                               non_finite_name((bits & 0x03ffu) != 0, (bits & 0x8000u) != 0));
        }
    }
}

}  // namespace detail

// Throws format_error naming t, its offset, the place (element and row, or block and row) and
// NaN / inf / -inf at its first non-finite value. `file` names the file in the message.
inline void check_tensor_values(const std::string& file, const tensor_view& t) {
    if (t.empty()) return;
    const std::string where = detail::tensor_place(file, t) + ": ";
    switch (t.type) {
        case tensor_type::f32:
            return detail::check_float_values<std::uint32_t>(where, t, 0x7f800000u);
        case tensor_type::f16:
            return detail::check_float_values<std::uint16_t>(where, t, 0x7c00u);
        case tensor_type::bf16:
            return detail::check_float_values<std::uint16_t>(where, t, 0x7f80u);
        default:
            detail::check_block_scales(where, t, detail::block_scale_fields(t.type));
    }
}

// Every tensor of a model's weights once (a tied classifier is the embedding).
template <class F>
inline void for_each_weight(const model_weights& w, F&& f) {
    std::unordered_set<const std::byte*> seen;
    auto visit = [&](const tensor_view& t) {
        if (!t.empty() && seen.insert(t.data).second) f(t);
    };
    visit(w.token_embd);
    visit(w.position_embd);
    for (const layer_weights& l : w.layers)
        for (const tensor_view* t : {&l.attn_norm, &l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_norm,
                                     &l.ffn_gate, &l.ffn_up, &l.ffn_down, &l.attn_norm_b, &l.ffn_norm_b, &l.attn_q_b,
                                     &l.attn_k_b, &l.attn_v_b, &l.attn_output_b, &l.ffn_up_b, &l.ffn_down_b})
            visit(*t);
    visit(w.output_norm);
    visit(w.output_norm_b);
    visit(w.output);
}

// Bytes of a model's weights, each tensor once.
inline std::uint64_t total_weight_bytes(const model_weights& w) {
    std::uint64_t n = 0;
    for_each_weight(w, [&](const tensor_view& t) { n += t.n_bytes; });
    return n;
}

// Scans every weight (check_tensor_values) if options say so: always, or automatic and the
// weights take at most options.check_tensors_max_bytes.
inline void check_weights(const std::string& file, const model_weights& w, const load_options& options) {
    if (options.check_tensors == tensor_check::never) return;
    if (options.check_tensors == tensor_check::automatic && total_weight_bytes(w) > options.check_tensors_max_bytes)
        return;
    for_each_weight(w, [&](const tensor_view& t) { check_tensor_values(file, t); });
}

}  // namespace nexttok

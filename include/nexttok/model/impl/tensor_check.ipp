// The definitions of tensor_check.hpp: the scans of float values and of block scales.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/model/detail/weight_checks.hpp>
#include <nexttok/model/tensor_check.hpp>
#include <nexttok/tensor/tensor_type.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace nexttok {

namespace detail {

NEXTTOK_DECL std::span<const block_scale_field> block_scale_fields(tensor_type t) noexcept {
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
NEXTTOK_DECL const char* non_finite_name(bool nan, bool negative) noexcept {
    return nan ? "NaN" : negative ? "-inf" : "inf";
}

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

NEXTTOK_DECL void check_block_scales(const std::string& where, const tensor_view& t,
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

NEXTTOK_DECL void check_tensor_values(const std::string& file, const tensor_view& t) {
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

NEXTTOK_DECL std::uint64_t total_weight_bytes(const model_weights& w) {
    std::uint64_t n = 0;
    for_each_weight(w, [&](const tensor_view& t) { n += t.n_bytes; });
    return n;
}

NEXTTOK_DECL void check_weights(const std::string& file, const model_weights& w, const load_options& options) {
    if (options.check_tensors == tensor_check::never) return;
    if (options.check_tensors == tensor_check::automatic && total_weight_bytes(w) > options.check_tensors_max_bytes)
        return;
    for_each_weight(w, [&](const tensor_view& t) { check_tensor_values(file, t); });
}

}  // namespace nexttok

// Dequantization of weight blocks to float (tensor/quant_blocks.hpp gives the layouts): q8_0,
// q4_0 and the k-quants q4_k, q5_k and q6_k by the SIMD backend, the other types by their scalar
// dequantize_block (tensor/legacy_quant_blocks.hpp, tensor/k_quant_blocks.hpp); whole rows
// (repacked rows too); and read_row, one row of any weight matrix as floats (an embedding lookup).
// The results are exact (quant_blocks.hpp: "Exactness"), so every instruction set gives the same
// floats as ggml.
#if !defined(NEXTTOK_KERNEL_PASS)
#include <nexttok/kernels/detail/passes.hpp>
#else

#include <nexttok/tensor/quant_blocks.hpp>
#include <nexttok/tensor/tensor_view.hpp>
#include <nexttok/tensor/weight_types.hpp>

#include <cstdint>
#include <type_traits>

namespace nexttok::NEXTTOK_KERNEL_PASS {

// y[0, block_size) = the block's weights. The loops step by the SIMD width with compile-time
// bounds; each load of quant bytes serves every output chunk that takes bits from it.
inline void dequantize_block(const block_q8_0& b, float* y) noexcept {
    namespace s = kernel_detail::simd;
    const s::vec d = s::set1(kernel_detail::simd::half_to_float(b.d));
    for (int e = 0; e < 32; e += s::width) s::store(y + e, s::mul(s::to_vec(s::load_i8(b.qs + e)), d));
}

inline void dequantize_block(const block_q4_0& b, float* y) noexcept {
    namespace s = kernel_detail::simd;
    const s::vec d = s::set1(kernel_detail::simd::half_to_float(b.d));
    for (int e = 0; e < 16; e += s::width) {
        const s::ivec q = s::load_u8(b.qs + e);
        s::store(y + e, s::mul(s::to_vec(s::add_i(s::and_i(q, 0x0f), -8)), d));
        s::store(y + 16 + e, s::mul(s::to_vec(s::add_i(s::shift_right_i(q, 4), -8)), d));
    }
}

// Sub-blocks 2i and 2i + 1 (32 weights each) take the low and high nibbles of qs[32i, 32i + 32).
inline void dequantize_block(const block_q4_k& b, float* y) noexcept {
    namespace s = kernel_detail::simd;
    const kernel_detail::k_sub_scales k = kernel_detail::unpack_k_sub_scales(
        b.scales, kernel_detail::simd::half_to_float(b.d), kernel_detail::simd::half_to_float(b.dmin));
    for (int i = 0; i < 4; ++i) {
        const s::vec scale0 = s::set1(k.scale[2 * i]), min0 = s::set1(k.min[2 * i]);
        const s::vec scale1 = s::set1(k.scale[2 * i + 1]), min1 = s::set1(k.min[2 * i + 1]);
        for (int l = 0; l < 32; l += s::width) {
            const s::ivec q = s::load_u8(b.qs + 32 * i + l);
            s::store(y + 64 * i + l, s::sub(s::mul(s::to_vec(s::and_i(q, 0x0f)), scale0), min0));
            s::store(y + 64 * i + 32 + l, s::sub(s::mul(s::to_vec(s::shift_right_i(q, 4)), scale1), min1));
        }
    }
}

// As q4_k, plus the fifth bit of weight l of sub-block j in bit j of qh[l].
inline void dequantize_block(const block_q5_k& b, float* y) noexcept {
    namespace s = kernel_detail::simd;
    const kernel_detail::k_sub_scales k = kernel_detail::unpack_k_sub_scales(
        b.scales, kernel_detail::simd::half_to_float(b.d), kernel_detail::simd::half_to_float(b.dmin));
    for (int i = 0; i < 4; ++i) {
        const s::vec scale0 = s::set1(k.scale[2 * i]), min0 = s::set1(k.min[2 * i]);
        const s::vec scale1 = s::set1(k.scale[2 * i + 1]), min1 = s::set1(k.min[2 * i + 1]);
        for (int l = 0; l < 32; l += s::width) {
            const s::ivec q = s::load_u8(b.qs + 32 * i + l);
            const s::ivec h = s::shift_right_i(s::load_u8(b.qh + l), 2 * i);  // bits 2i, 2i+1 -> 0, 1
            const s::ivec q0 = s::or_i(s::and_i(q, 0x0f), s::shift_left_i(s::and_i(h, 1), 4));
            const s::ivec q1 = s::or_i(s::shift_right_i(q, 4), s::shift_left_i(s::and_i(h, 2), 3));
            s::store(y + 64 * i + l, s::sub(s::mul(s::to_vec(q0), scale0), min0));
            s::store(y + 64 * i + 32 + l, s::sub(s::mul(s::to_vec(q1), scale1), min1));
        }
    }
}

// Per half of 128: quarter k's low 4 bits are the low (k < 2) or high (k >= 2) nibbles of
// ql[32 (k % 2) + l], its high 2 bits are bits 2k, 2k + 1 of qh[l]; scale e / 16.
inline void dequantize_block(const block_q6_k& b, float* y) noexcept {
    namespace s = kernel_detail::simd;
    const float d = kernel_detail::simd::half_to_float(b.d);
    for (int h = 0; h < 2; ++h) {
        const std::uint8_t* ql = b.ql + 64 * h;
        const std::uint8_t* qh = b.qh + 32 * h;
        float* yh = y + 128 * h;
        for (int l = 0; l < 32; l += s::width) {
            const s::ivec a = s::load_u8(ql + l), c = s::load_u8(ql + 32 + l), hi = s::load_u8(qh + l);
            const s::ivec q[4] = {
                s::or_i(s::and_i(a, 0x0f), s::shift_left_i(s::and_i(hi, 0x03), 4)),
                s::or_i(s::and_i(c, 0x0f), s::shift_left_i(s::and_i(hi, 0x0c), 2)),
                s::or_i(s::shift_right_i(a, 4), s::and_i(hi, 0x30)),
                s::or_i(s::shift_right_i(c, 4), s::shift_right_i(s::and_i(hi, 0xc0), 2)),
            };
            for (int k = 0; k < 4; ++k) {
                const int e = 32 * k + l;
                const s::vec scale = s::set1(d * static_cast<float>(b.scales[8 * h + e / 16]));
                s::store(yh + e, s::mul(s::to_vec(s::add_i(q[k], -32)), scale));
            }
        }
    }
}

// y[0, n) = the weights of a row of n / Block::block_size blocks; n must be a multiple of the
// block size (the GGUF reader checks it for every tensor).
template <quant_block Block>
inline void dequantize_row(const Block* x, float* y, std::int64_t n) noexcept {
    if constexpr (repacked_block<Block>)
        dequantize_repacked_row(x, y, n);  // (scalar)
    else
        for (std::int64_t b = 0; b < n / Block::block_size; ++b) dequantize_block(x[b], y + b * Block::block_size);
}

// Row r of a weight matrix (an embedding, say) converted to float: out[0, cols).
inline void read_row(const tensor_view& w, std::int64_t r, float* out) {
    const auto cols = static_cast<std::int64_t>(w.cols());
    visit_weight_type(w, "read_row", [&]<class W>(std::type_identity<W>) {
        const W* row = reinterpret_cast<const W*>(w.data) + r * row_stride<W>(cols);
        if constexpr (quant_block<W>) {
            dequantize_row(row, out, cols);
        } else {
            for (std::int64_t i = 0; i < cols; ++i) out[i] = static_cast<float>(row[i]);
        }
    });
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS

#endif  // NEXTTOK_KERNEL_PASS

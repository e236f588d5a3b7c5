// The int8 kernels of q8_0, q4_0 and q4_k in portable C++ (neither NEXTTOK_KERNELS_INT8_AVX512
// nor NEXTTOK_KERNELS_INT8_AVX2): the AVX2 kernels' integer lanes and float order, lane by lane,
// so that they give bitwise the AVX2 kernels' outputs. Internal: quant_act.hpp includes this file in its middle.
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#if !defined(NEXTTOK_KERNELS_INT8_AVX512) && !defined(NEXTTOK_KERNELS_INT8_AVX2)

#include <cstdint>
#include <type_traits>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

template <class X>
inline void quantize_act_row(const q8_act_row& row, const X* x, std::int64_t n) noexcept {
    quantize_act_row_by_blocks(row, x, n);
}

inline constexpr int min_lane = 8;

// The 8 int32 lanes of a block's integer dot as the AVX2 kernels form them (vpdpbusd): lane l
// sums elements 4l .. 4l + 3 of 32 weight levels (wq) times 32 activations (xq), exactly.
inline simd::ivec block_lanes(const int (&wq)[32], const std::int8_t* xq) noexcept {
    return simd::each_int_lane([&](int l) {
        int s = 0;
        for (int i = 4 * l; i < 4 * l + 4; ++i) s += wq[i] * xq[i];
        return s;
    });
}

inline void block_levels(const block_q8_0& w, int (&v)[32]) noexcept {
    for (int i = 0; i < 32; ++i) v[i] = w.qs[i];
}

inline void block_levels(const block_q4_0& w, int (&v)[32]) noexcept {
    for (int i = 0; i < 16; ++i) {
        v[i] = (w.qs[i] & 0x0f) - 8;
        v[i + 16] = (w.qs[i] >> 4) - 8;
    }
}

// slot[0, 8) += lanes * scale, one fused multiply-add per lane (the AVX2 kernels' step).
inline void add_lanes(float* slot, const simd::ivec& lanes, float scale) noexcept {
    simd::store(slot, simd::fmadd(simd::to_vec(lanes), simd::set1(scale), simd::load(slot)));
}

// Accumulators of (r, t) as the AVX2 kernels keep them (quant_act_avx2.hpp): 8 float lanes at
// slot[0, 8), the q4_k minimum terms at slot[min_lane]; blocks in ascending order.
template <int NR, int NT, class Block>
inline void qdot_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1, float* acc,
                       std::int64_t ld, simd::prefetch_cursor) noexcept {
    for (int r = 0; r < NR; ++r) {
        for (std::int64_t b = b0; b < b1; ++b) {
            const Block& wb = w[r][b];
            if constexpr (std::is_same_v<Block, block_q4_k>) {
                const k_sub_scales k =
                    unpack_k_sub_scales(wb.scales, simd::half_to_float(wb.d), simd::half_to_float(wb.dmin));
                int v[2][32];  // sub-blocks 2i and 2i + 1: the low and high nibbles of qs[32 i, + 32)
                for (int i = 0; i < 4; ++i) {
                    for (int l = 0; l < 32; ++l) {
                        v[0][l] = wb.qs[32 * i + l] & 0x0f;
                        v[1][l] = wb.qs[32 * i + l] >> 4;
                    }
                    for (int t = 0; t < NT; ++t) {
                        const q8_act_row& xr = *x[t];
                        float* slot = acc + r * ld + t * simd::acc_slot;
                        for (int h = 0; h < 2; ++h) {
                            const std::int64_t xb = 8 * b + 2 * i + h;
                            add_lanes(slot, block_lanes(v[h], xr.qs + 32 * xb),
                                      k.scale[2 * i + h] * xr.lane_scales[8 * xb]);
                        }
                        for (int h = 0; h < 2; ++h)
                            slot[min_lane] = std::fma(k.min[2 * i + h], xr.dsum[8 * b + 2 * i + h], slot[min_lane]);
                    }
                }
            } else {
                int v[32];
                block_levels(wb, v);
                for (int t = 0; t < NT; ++t) {
                    const q8_act_row& xr = *x[t];
                    add_lanes(acc + r * ld + t * simd::acc_slot, block_lanes(v, xr.qs + 32 * b),
                              simd::half_to_float(wb.d) * xr.lane_scales[8 * b]);
                }
            }
        }
    }
}

inline float qdot_result(const float* slot) noexcept { return simd::reduce(simd::load(slot)) - slot[min_lane]; }

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

#endif

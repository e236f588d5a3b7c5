// The int8 kernels of q8_0, q4_0 and q4_k in portable C++ (neither NEXTTOK_KERNELS_INT8_AVX512
// nor NEXTTOK_KERNELS_INT8_AVX2): the same integer sums in scalar code, in a float order of their
// own (one block at a time into one float, the q4_k minimum terms into another), as fixed as the
// SIMD paths' orders. Internal: quant_act.hpp includes this file in its middle.
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

inline int block_int_dot(const block_q8_0& w, const std::int8_t* x) noexcept {
    int s = 0;
    for (int i = 0; i < 32; ++i) s += w.qs[i] * x[i];
    return s;
}

inline int block_int_dot(const block_q4_0& w, const std::int8_t* x) noexcept {
    int s = 0;
    for (int i = 0; i < 16; ++i) s += ((w.qs[i] & 0x0f) - 8) * x[i] + ((w.qs[i] >> 4) - 8) * x[i + 16];
    return s;
}

// Accumulators of (r, t): the sum at slot[0], the q4_k minimum terms at slot[min_lane].
template <int NR, int NT, class Block>
inline void qdot_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1, float* acc,
                       std::int64_t ld, simd::prefetch_cursor) noexcept {
    for (int r = 0; r < NR; ++r) {
        for (int t = 0; t < NT; ++t) {
            float* slot = acc + r * ld + t * simd::acc_slot;
            float sum = slot[0], mins = slot[min_lane];
            const q8_act_row& xr = *x[t];
            for (std::int64_t b = b0; b < b1; ++b) {
                const Block& wb = w[r][b];
                if constexpr (std::is_same_v<Block, block_q4_k>) {
                    const k_sub_scales k = unpack_k_sub_scales(wb.scales, kernel_detail::simd::half_to_float(wb.d),
                                                               kernel_detail::simd::half_to_float(wb.dmin));
                    for (int j = 0; j < 8; ++j) {
                        const std::int64_t xb = 8 * b + j;
                        const std::uint8_t* q = wb.qs + 32 * (j / 2);
                        int s = 0;
                        for (int l = 0; l < 32; ++l)
                            s += ((j % 2 == 0) ? (q[l] & 0x0f) : (q[l] >> 4)) * xr.qs[32 * xb + l];
                        sum += static_cast<float>(s) * (k.scale[j] * xr.lane_scales[8 * xb]);
                        mins += k.min[j] * xr.dsum[xb];
                    }
                } else {
                    sum += static_cast<float>(block_int_dot(wb, xr.qs + 32 * b)) *
                           (kernel_detail::simd::half_to_float(wb.d) * xr.lane_scales[8 * b]);
                }
            }
            slot[0] = sum;
            slot[min_lane] = mins;
        }
    }
}

inline float qdot_result(const float* slot) noexcept { return slot[0] - slot[min_lane]; }

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

#endif

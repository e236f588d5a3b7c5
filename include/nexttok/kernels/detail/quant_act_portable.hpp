// The int8 kernels of q8_0 and q4_k in portable C++ (neither NEXTTOK_KERNELS_INT8_AVX512 nor
// NEXTTOK_KERNELS_INT8_AVX2): the lanes and float order of quant_act.hpp (the AVX-512 and AVX2
// kernels'), lane by lane, so that they give bitwise those kernels' outputs; q4_0 goes with the
// legacy types (legacy_qdot_portable.hpp). Internal: quant_act.hpp includes this file in its middle.
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#if !defined(NEXTTOK_KERNELS_INT8_AVX512) && !defined(NEXTTOK_KERNELS_INT8_AVX2)

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

template <class X>
inline void quantize_act_row(const q8_act_row& row, const X* x, std::int64_t n) noexcept {
    quantize_act_row_by_blocks(row, x, n);
}

// q8_0: block b's quarter q (elements 4q .. 4q + 3 and 16 + 4q .. 16 + 4q + 3) into lane
// 4 (b % 4) + q.
template <int NR, int NT>
inline void qdot_range(const block_q8_0* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor) noexcept {
    for (int r = 0; r < NR; ++r)
        for (std::int64_t b = b0; b < b1; ++b) {
            const block_q8_0& wb = w[r][b];
            for (int t = 0; t < NT; ++t) {
                const std::int8_t* xq = x[t]->qs + 32 * b;
                const float scale = simd::half_to_float(wb.d) * x[t]->lane_scales[8 * b];
                float* lanes = acc + r * ld + t * simd::acc_slot + 4 * (b % 4);
                for (int q = 0; q < 4; ++q) {
                    std::int32_t s = 0;
                    for (int c = 4 * q; c < 4 * q + 4; ++c) s += wb.qs[c] * xq[c] + wb.qs[c + 16] * xq[c + 16];
                    lanes[q] = std::fma(static_cast<float>(s), scale, lanes[q]);
                }
            }
        }
}

// q4_k against the per-256 activations: lane k of step i (q8k_qs bytes 64 i + 4 k .. + 3) meets
// nibble i % 2 of qs bytes 64 (i / 2) + 32 (k / 8) + 4 (k % 8) .. + 3, of sub-block
// {0, 1, 4, 5}[i] (k < 8) or {2, 3, 6, 7}[i]; the minimum terms in 4 lanes of their own,
// subtracted from lanes 0-3 at the end of every 8 blocks.
template <int NR, int NT>
inline void qdot_range(const block_q4_k* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor) noexcept {
    for (int r = 0; r < NR; ++r)
        for (int t = 0; t < NT; ++t) {
            const q8_act_row& xr = *x[t];
            float* slot = acc + r * ld + t * simd::acc_slot;
            for (std::int64_t c0 = b0, c1; c0 < b1; c0 = c1) {  // chunks ending at multiples of 8 blocks
                c1 = std::min(b1, (c0 / 8 + 1) * 8);
                float macc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                for (std::int64_t b = c0; b < c1; ++b) {
                    const block_q4_k& wb = w[r][b];
                    k_scale_min sm[8];
                    for (int j = 0; j < 8; ++j) sm[j] = unpack_k_scale_min(wb.scales, j);
                    const std::int8_t* xq = xr.q8k_qs + 256 * b;
                    const float dx = xr.q8k_scales[b];
                    const float scale = simd::half_to_float(wb.d) * dx, min_scale = simd::half_to_float(wb.dmin) * dx;
                    for (int k = 0; k < 16; ++k) {
                        std::int32_t sum = 0;
                        for (int i = 0; i < 4; ++i)
                            for (int c = 0; c < 4; ++c) {
                                const std::uint8_t byte = wb.qs[64 * (i / 2) + 32 * (k / 8) + 4 * (k % 8) + c];
                                const int q = i % 2 ? byte >> 4 : byte & 0x0f;
                                sum += sm[q4_k_step_sub_blocks[k / 8][i]].scale * q * xq[64 * i + 4 * k + c];
                            }
                        slot[k] = std::fma(static_cast<float>(sum), scale, slot[k]);
                    }
                    const std::int16_t* bsum = xr.q8k_block_sums + 8 * b;
                    for (int j = 0; j < 4; ++j) {
                        const std::int32_t m = sm[2 * j].min * bsum[2 * j] + sm[2 * j + 1].min * bsum[2 * j + 1];
                        macc[j] = std::fma(static_cast<float>(m), min_scale, macc[j]);
                    }
                }
                for (int j = 0; j < 4; ++j) slot[j] -= macc[j];
            }
        }
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

#endif

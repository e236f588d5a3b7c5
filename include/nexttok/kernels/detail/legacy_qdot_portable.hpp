// The portable kernels of q4_0, q4_1, q5_0, q5_1 and iq4_nl (without AVX2 + FMA): the order of
// legacy_qdot.hpp in scalar code, one block at a time. Internal (legacy_qdot.hpp).
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#if !defined(NEXTTOK_KERNELS_INT8_AVX512) && !defined(NEXTTOK_KERNELS_INT8_AVX2)

#include <cstdint>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

// Adds blocks [b0, b1) of NR rows x NT activation rows into the slots of 16 lanes (acc[r * ld +
// t * acc_slot]).
template <int NR, int NT, class Block>
inline void legacy_portable_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                                  float* acc, std::int64_t ld) noexcept {
    for (int r = 0; r < NR; ++r)
        for (std::int64_t b = b0; b < b1; ++b) {
            const Block& wb = w[r][b];
            int v[32];
            legacy_levels(wb, v);
            for (int t = 0; t < NT; ++t) {
                const q8_act_row& xr = *x[t];
                const std::int8_t* xq = xr.qs + 32 * b;
                std::int32_t s[2] = {0, 0};
                for (int j = 0; j < 16; ++j) s[j / 4 % 2] += v[j] * xq[j] + v[j + 16] * xq[j + 16];
                legacy_step(wb, b, s, xr.lane_scales[8 * b], xr.dsum[b], acc + r * ld + t * simd::acc_slot);
            }
        }
}

template <int NR, int NT, legacy_order_block Block>
inline void qdot_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1, float* acc,
                       std::int64_t ld, simd::prefetch_cursor) noexcept {
    legacy_portable_range<NR, NT>(w, x, b0, b1, acc, ld);
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

#endif

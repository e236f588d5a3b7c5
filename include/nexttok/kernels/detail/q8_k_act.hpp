// The per-256 quantization of an activation row (llama.cpp's q8_K: one scale per 256 elements, with
// sums of each 16), which ggml pairs with its 256-element weight types. q8_activations
// (quant_act.hpp) stores it in q8_act_row::q8k_qs, q8k_scales, q8k_block_sums and q8k_sums16; this file holds the
// scalar pieces that every instruction set shares, so that the values are bitwise the same
// whichever kernels a program is built with (the AVX-512 quantization of the same values lives in
// quant_act.hpp, kernel_detail::quantize_q8_k).
//
// Layout of 256 elements (one block b): q8k_scales[b] = amax / 127; q8k_qs[256 b + 32 q8_k_order[j] + l] =
// round-to-nearest-even(x[32 j + l] * (127 / amax)) for j < 8, l < 32 (the blocks of 32 in the order
// 0, 2, 1, 3, 4, 6, 5, 7: q4_k's low and high nibbles meet consecutive 32-byte stretches);
// q8k_block_sums[8 b + j] = the sum of element block j's values; q8k_sums16[16 b + i] = the sum of elements
// 16 i .. 16 i + 15 (element order).
// Also here, because quant_act.hpp needs it before the kernels: the reduction that finishes the
// 16 accumulator lanes of every int8 kernel (quant_act.hpp, k_quant_qdot.hpp, legacy_qdot.hpp).
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

// Where element block j (32 elements) of 256 sits in q8k_qs: its own inverse.
inline constexpr int q8_k_order[8] = {0, 2, 1, 3, 4, 6, 5, 7};

// v rounded to the nearest integer (ties to even, the default rounding mode, as cvtps2dq) as int8,
// for v whose finite values lie in [-127, 127]. A non-finite activation (a model with NaN or inf
// weights) must not reach a float-to-integer conversion out of range, which is undefined
// behaviour: NaN gives 0 (as the AVX-512 path's cvtps2dq + vpmovdb), the infinities +-127.
inline std::int8_t round_to_int8(float v) noexcept {
    const float r = std::nearbyint(v);
    if (!(r >= -127.0f)) return r != r ? std::int8_t{0} : std::int8_t{-127};
    if (r > 127.0f) return std::int8_t{127};
    return static_cast<std::int8_t>(r);
}

// 256 elements x quantized into qs (q8_k_order), *d and bsum (8 block sums), as the AVX-512
// quantize_q8_k does: d = amax / 127, q = nearbyint(x * (127 / amax)) (the default rounding mode,
// as cvtps2dq). |q| <= 127, so the int16 sums cannot overflow.
template <class X>
inline void quantize_q8_k_scalar(const X* x, std::int8_t* qs, float* d, std::int16_t* bsum) noexcept {
    float amax = 0.0f;
    for (int i = 0; i < 256; ++i) amax = std::max(amax, std::fabs(simd::to_float(x[i])));
    *d = amax / 127.0f;
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    for (int j = 0; j < 8; ++j) {
        int sum = 0;
        std::int8_t* q = qs + 32 * q8_k_order[j];
        for (int l = 0; l < 32; ++l) {
            q[l] = round_to_int8(simd::to_float(x[32 * j + l]) * id);
            sum += q[l];
        }
        bsum[j] = static_cast<std::int16_t>(sum);
    }
}

// bsum16[0, 16) = the sums of each 16 elements (element order) of one block's q8k_qs.
inline void q8_k_bsum16(const std::int8_t* qs, std::int16_t* bsum16) noexcept {
    for (int i = 0; i < 16; ++i) {
        const std::int8_t* q = qs + 32 * q8_k_order[i / 2] + 16 * (i % 2);
        int sum = 0;
        for (int l = 0; l < 16; ++l) sum += q[l];
        bsum16[i] = static_cast<std::int16_t>(sum);
    }
}

// The output held by a slot of 16 lanes: lane j + lane j + 8, then + 4, + 2, + 1 (the order of
// _mm512_reduce_add_ps and simd::reduce16).
inline float qdot_result(const float* slot) noexcept {
    float h8[8], h4[4];
    for (int j = 0; j < 8; ++j) h8[j] = slot[j] + slot[j + 8];
    for (int j = 0; j < 4; ++j) h4[j] = h8[j] + h8[j + 4];
    return (h4[0] + h4[2]) + (h4[1] + h4[3]);
}

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

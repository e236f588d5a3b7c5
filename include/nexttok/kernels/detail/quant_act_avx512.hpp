// The int8 kernels of q8_0, q4_0 and q4_k with AVX-512 (F, BW, DQ, VL, VNNI, VBMI:
// NEXTTOK_KERNELS_INT8_AVX512 in isa.hpp), and the quantization of activation rows they read.
// Internal: quant_act.hpp includes this file in its middle.
//
// A step covers four q8_0 blocks or eight q4_0 blocks (their quant bytes gathered by two-source
// byte permutations, their half-precision scales by one word permutation, against activations
// grouped to match: q8_act_row's quad and octet arrays) or a q4_k block two sub-blocks per
// instruction, against activations quantized once more by 256 elements (llama.cpp's q8_K), so that
// a whole q4_k block sums in int32. The float order of each kernel is in quant_act.hpp's header.
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#if defined(NEXTTOK_KERNELS_INT8_AVX512)

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

NEXTTOK_INTRINSICS_BEGIN

// 256 elements x, of largest magnitude amax, quantized for q4_k, q2_k, q3_k and iq4_xs
// (q8_act_row::q8k_qs, q8k_scales, q8k_block_sums).
template <class X>
inline void quantize_q8_k(const X* x, float amax, std::int8_t* qs, float* d, std::int16_t* block_sums) noexcept {
    namespace s = simd;
    constexpr int order[8] = {0, 2, 1, 3, 4, 6, 5, 7};  // the q4_k grouping
    *d = amax / 127.0f;
    const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    __m256i lane_sums[8];  // each block's 8 lane sums
    for (int j = 0; j < 8; ++j) {
        const __m128i q0 = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(s::load(x + 32 * j), id)));
        const __m128i q1 = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(s::load(x + 32 * j + 16), id)));
        const __m256i q01 = _mm256_set_m128i(q1, q0);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs + 32 * order[j]), q01);
        lane_sums[j] = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(1), q01);
    }
    // Pairwise sums: in each 128-bit half, blocks 0-3 (4-7) by two rounds, then the halves added.
    const __m256i a =
        _mm256_hadd_epi32(_mm256_hadd_epi32(lane_sums[0], lane_sums[1]), _mm256_hadd_epi32(lane_sums[2], lane_sums[3]));
    const __m256i b =
        _mm256_hadd_epi32(_mm256_hadd_epi32(lane_sums[4], lane_sums[5]), _mm256_hadd_epi32(lane_sums[6], lane_sums[7]));
    const __m128i sa = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    const __m128i sb = _mm_add_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(block_sums), _mm_packs_epi32(sa, sb));  // |sum| <= 32 x 127
}

// Block b of the row (x[32 b, 32 b + 32)): its quant bytes, lane sums' -8 multiples, lane scales
// and dsum, and the same values in the q8_0 quad grouping and the q4_0 octet grouping. Returns
// the block's largest magnitude.
template <class X>
inline float quantize_act_block(const q8_act_row& row, const X* x, std::int64_t b) noexcept {
    namespace s = simd;
    const X* xb = x + b * 32;
    const __m512 v0 = s::load(xb), v1 = s::load(xb + 16);
    const __m512 m = _mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1));
    __m256 m8 = _mm256_max_ps(_mm512_castps512_ps256(m), _mm512_extractf32x8_ps(m, 1));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    const float amax = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
    const float d = amax / 127.0f;
    const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    const __m128i q0 = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v0, id)));
    const __m128i q1 = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v1, id)));
    const __m256i q01 = _mm256_set_m128i(q1, q0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(row.qs + 32 * b), q01);
    // The 8 lane sums of 4 values, their -8 multiples, the lane scales.
    const __m256i lane_sums = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(1), q01);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(row.minus8_sums + 8 * b),
                        _mm256_mullo_epi32(lane_sums, _mm256_set1_epi32(-8)));
    const __m256 dv = _mm256_set1_ps(d);
    _mm256_storeu_ps(row.lane_scales + 8 * b, dv);
    const __m128i sums4 = _mm_add_epi32(_mm256_castsi256_si128(lane_sums), _mm256_extracti128_si256(lane_sums, 1));
    __m128i s2 = _mm_add_epi32(sums4, _mm_unpackhi_epi64(sums4, sums4));
    s2 = _mm_add_epi32(s2, _mm_shuffle_epi32(s2, 1));
    const int sum = _mm_cvtsi128_si32(s2);
    row.dsum[b] = d * static_cast<float>(sum);
    store_r16_block(row, b, row.qs + 32 * b, d, sum);
    // The q8_0 grouping: block i of quad k gives bytes 16 i.. of both halves, lanes 4 i..4 i + 3.
    const std::int64_t k = b / 4, i = b % 4;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(row.quad_qs + 128 * k + 16 * i), q0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(row.quad_qs + 128 * k + 64 + 16 * i), q1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(row.quad_minus128_sums + 16 * k + 4 * i),
                     _mm_mullo_epi32(sums4, _mm_set1_epi32(-128)));
    _mm_storeu_ps(row.quad_lane_scales + 16 * k + 4 * i, _mm256_castps256_ps128(dv));
    // The q4_0 octet grouping: block k of octet o, lanes 2k and 2k + 1.
    std::int8_t* q8 = row.octet_qs + 256 * (b / 8) + 8 * (b % 8);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q8), q0);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q8 + 64), q1);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q8 + 128), _mm_unpackhi_epi64(q0, q0));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q8 + 192), _mm_unpackhi_epi64(q1, q1));
    const __m128i sums2 = _mm_add_epi32(sums4, _mm_unpackhi_epi64(sums4, sums4));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(row.octet_minus8_sums + 2 * b),
                     _mm_mullo_epi32(sums2, _mm_set1_epi32(-8)));
    _mm_storel_pi(reinterpret_cast<__m64*>(row.octet_lane_scales + 2 * b), _mm256_castps256_ps128(dv));
    return amax;
}

// Zeros the groupings past the row's nb blocks: the rest of the last quad and of the last octet.
inline void zero_grouped_padding(const q8_act_row& row, std::int64_t n) noexcept {
    const std::int64_t nb = n / 32, n4 = (n + 127) / 128 * 128, n8 = (n + 255) / 256 * 256;
    for (std::int64_t b = nb; b < n4 / 32; ++b) {
        const std::int64_t k = b / 4, i = b % 4;
        std::memset(row.quad_qs + 128 * k + 16 * i, 0, 16);
        std::memset(row.quad_qs + 128 * k + 64 + 16 * i, 0, 16);
        for (int u = 0; u < 4; ++u)
            row.quad_minus128_sums[16 * k + 4 * i + u] = 0, row.quad_lane_scales[16 * k + 4 * i + u] = 0.0f;
    }
    for (std::int64_t b = nb; b < n8 / 32; ++b) {
        std::int8_t* q8 = row.octet_qs + 256 * (b / 8) + 8 * (b % 8);
        for (int m = 0; m < 4; ++m) std::memset(q8 + 64 * m, 0, 8);
        row.octet_minus8_sums[2 * b] = row.octet_minus8_sums[2 * b + 1] = 0;
        row.octet_lane_scales[2 * b] = row.octet_lane_scales[2 * b + 1] = 0.0f;
    }
}

// The row's arrays from x[0, n) (q8_activations::quantize): every block, its groupings and, when
// n % 256 == 0, the per-256 quantization of each 8 blocks as soon as their largest magnitude is known.
template <class X>
inline void quantize_act_row(const q8_act_row& row, const X* x, std::int64_t n) noexcept {
    const bool k_grouping = n % 256 == 0;
    float k_amax = 0.0f;  // of the current 256 elements
    for (std::int64_t b = 0; b < n / 32; ++b) {
        k_amax = std::max(k_amax, quantize_act_block(row, x, b));
        if (k_grouping && b % 8 == 7) {
            const std::int64_t k = b / 8;
            quantize_q8_k(x + 256 * k, k_amax, row.q8k_qs + 256 * k, row.q8k_scales + k, row.q8k_block_sums + 8 * k);
            q8_k_bsum16(row.q8k_qs + 256 * k, row.q8k_sums16 + 16 * k);
            k_amax = 0.0f;
        }
    }
    zero_grouped_padding(row, n);
}

// The accumulators of output (r, t) live in acc[r * ld + t * acc_slot, + 16): 16 float lanes.
// Each *_range kernel adds weight blocks [b0, b1) of NR rows x NT tokens: it loads the
// accumulators, runs the blocks in ascending order and stores them back (exactly), so splitting
// the blocks into ranges (at multiples of 8 blocks) never changes a result.
template <int NR, int NT>
struct acc16 {
    __m512 v[NR][NT];
    acc16(const float* acc, std::int64_t ld) noexcept {
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) v[r][t] = _mm512_load_ps(acc + r * ld + t * simd::acc_slot);
    }
    void store(float* acc, std::int64_t ld) const noexcept {
        for (int r = 0; r < NR; ++r)
            for (int t = 0; t < NT; ++t) _mm512_store_ps(acc + r * ld + t * simd::acc_slot, v[r][t]);
    }
};

struct byte_index {
    alignas(64) std::uint8_t bytes[64];
};

// vpermt2b indexes for four q8_0 blocks (34 bytes each, quant bytes from byte 2): bytes 16 i ..
// 16 i + 15 take the first 16 quant bytes of block i from (the quad's bytes [0, 64), [64, 128));
// the second 16 from (its bytes [8, 72), [72, 136)).
inline constexpr byte_index q8_0_quad_low = [] {
    byte_index ix{};
    for (int j = 0; j < 64; ++j) ix.bytes[j] = static_cast<std::uint8_t>(34 * (j / 16) + 2 + j % 16);
    return ix;
}();
inline constexpr byte_index q8_0_quad_high = [] {
    byte_index ix{};
    for (int j = 0; j < 64; ++j) ix.bytes[j] = static_cast<std::uint8_t>(34 * (j / 16) + 18 + j % 16 - 8);
    return ix;
}();

inline __m512i load_index(const byte_index& ix) noexcept { return _mm512_load_si512(ix.bytes); }

// A mask of the first max(0, min(64, n)) bytes.
inline __mmask64 first_bytes(std::int64_t n) noexcept {
    return n >= 64 ? ~__mmask64{0} : n <= 0 ? __mmask64{0} : (__mmask64{1} << n) - 1;
}

// Calls, for groups of K blocks from b0 to b1 and rows r < NR, u = unpack(s0, s1, s2, s3) (the 64
// bytes of row r from the group's byte 0, X1, X2 and X3), and mac(r, t, u, act(t, b)) for tokens
// t < NT (act: token t's activations of the group at block b, in registers). A last group of fewer
// than K blocks (only at the end of a row) is read with masks, never past the row; bytes past it
// are zero. Near: prefetch_near each row's group near_steps groups ahead (tiles of up to 4
// tokens: 1.1B shape, 2 threads, batch 2 q8_0 44.6-45.2 -> 46.2-47.6 tokens/s, q4_0 72.4-75.7 ->
// 75.9-78.0; batch 4 the same within noise).
// Tiles of rows_inside_tokens tokens or more unpack the group of all NR rows first and then take
// the tokens, rows inside, so that each token's activations are loaded once a group rather than
// once a row (1.1B shape, 2 threads, both codes in turn, four runs, tokens/s: prefill of 128
// tokens q8_0 144-159 -> 148-180, q4_0 189-208 -> 221-246; batch 8 q8_0 104-111 -> 113-118, q4_0
// 145-162 -> 162-173; batch 16 q8_0 117-120 -> 128-134, q4_0 148-171 -> 174-190; in tiles of 4
// tokens, batch 4 q4_0 lost 3% with 4 rows and gained nothing beyond noise with 2). Every output
// adds the same numbers in the same order either way.
inline constexpr int rows_inside_tokens = 5;
template <int NR, int NT, int K, int X1, int X2, int X3, bool Near, class Block, class Unpack, class Act, class Mac>
inline void for_each_group(const Block* const* w, std::int64_t b0, std::int64_t b1, simd::prefetch_cursor& pf,
                           Unpack&& unpack, Act&& act, Mac&& mac) noexcept {
    // load(r, offset): the 64 bytes of row r's group from byte offset; near(r): row r's prefetch.
    auto group = [&](std::int64_t b, auto&& load, auto&& near) {
        auto row = [&](int r) {
            near(r);
            return unpack(load(r, 0), load(r, X1), load(r, X2), load(r, X3));
        };
        if constexpr (NT >= rows_inside_tokens) {
            decltype(row(0)) u[NR];
            NEXTTOK_UNROLL
            for (int r = 0; r < NR; ++r) u[r] = row(r);
            NEXTTOK_UNROLL
            for (int t = 0; t < NT; ++t) {
                const auto xa = act(t, b);
                NEXTTOK_UNROLL
                for (int r = 0; r < NR; ++r) mac(r, t, u[r], xa);
            }
        } else {
            NEXTTOK_UNROLL
            for (int r = 0; r < NR; ++r) {
                const auto u = row(r);
                NEXTTOK_UNROLL
                for (int t = 0; t < NT; ++t) mac(r, t, u, act(t, b));
            }
        }
    };
    std::int64_t b = b0;
    for (; b + K <= b1; b += K) {
        pf.advance(NR * K * sizeof(Block));
        group(
            b, [&](int r, int offset) { return _mm512_loadu_si512(reinterpret_cast<const char*>(w[r] + b) + offset); },
            [&](int r) {
                if constexpr (Near) prefetch_near<near_steps * K * sizeof(Block), K * sizeof(Block)>(w[r] + b);
            });
    }
    if (b < b1) {
        const std::int64_t n = static_cast<std::int64_t>(sizeof(Block)) * (b1 - b);
        group(
            b,
            [&](int r, int offset) {
                return _mm512_maskz_loadu_epi8(first_bytes(n - offset),
                                               reinterpret_cast<const char*>(w[r] + b) + offset);
            },
            [](int) {});
    }
}

// Four q8_0 blocks (136 bytes) per step, against the activations' quad grouping
// (q8_act_row::quad_qs): the first halves of the four blocks' quant bytes by one two-source byte
// permutation of the quad's bytes [0, 128), the second halves by one of [8, 136), the four scales
// by one word permutation. A last group of 1-3 blocks (only at the end of a row) is read with
// masks, never past the row. Signed weights: w + 128 is unsigned, and sum (w + 128) x - 128 sum x
// takes its correction from the activations' lane sums (q8_act_row::quad_minus128_sums).
template <int NR, int NT>
inline void qdot_range(const block_q8_0* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc16<NR, NT> a(acc, ld);
    const __m512i pick_lo = load_index(q8_0_quad_low), pick_hi = load_index(q8_0_quad_high);
    const __m512i dpick = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 51, 51, 51, 51, 34, 34, 34,
                                           34, 17, 17, 17, 17, 0, 0, 0, 0);
    const __m512i bias = _mm512_set1_epi8(-128);
    struct unpacked {
        __m512i lo, hi;  // the quant bytes + 128, quad grouping
        __m512 d;        // each lane's block scale
    };
    struct act_quad {
        __m512i minus128_sums, q_lo, q_hi;
        __m512 scales;
    };
    // s0, s64, s8, s72: the quad's bytes from 0, 64, 8 and 72.
    auto unpack = [&](__m512i s0, __m512i s64, __m512i s8, __m512i s72) {
        return unpacked{_mm512_xor_si512(_mm512_permutex2var_epi8(s0, pick_lo, s64), bias),
                        _mm512_xor_si512(_mm512_permutex2var_epi8(s8, pick_hi, s72), bias),
                        _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutex2var_epi16(s0, dpick, s64)))};
    };
    auto act = [&](int t, std::int64_t b) {
        const q8_act_row& xr = *x[t];
        const std::int8_t* xq = xr.quad_qs + 32 * b;
        // the correction: -128 * lane sum
        return act_quad{_mm512_load_si512(xr.quad_minus128_sums + 4 * b), _mm512_load_si512(xq),
                        _mm512_load_si512(xq + 64), _mm512_load_ps(xr.quad_lane_scales + 4 * b)};
    };
    auto mac = [&](int r, int t, const unpacked& u, const act_quad& xa) {
        __m512i sum = _mm512_dpbusd_epi32(xa.minus128_sums, u.lo, xa.q_lo);
        sum = _mm512_dpbusd_epi32(sum, u.hi, xa.q_hi);
        const __m512 scale = _mm512_mul_ps(u.d, xa.scales);
        a.v[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), scale, a.v[r][t]);
    };
    for_each_group<NR, NT, 4, 64, 8, 72, NT <= 4>(w, b0, b1, pf, unpack, act, mac);
    a.store(acc, ld);
}

// vpermt2b index for eight q4_0 blocks (144 bytes, quant bytes from byte 2): over (the octet's
// bytes [0, 64), [72, 136)), byte 8k + j takes quant byte j of block k; over ([8, 72), [80, 144)),
// quant byte 8 + j. Both are the same index: block k's byte sits at 18 (k % 4) + 2 + j of the
// first source (k < 4) or of the second.
inline constexpr byte_index q4_0_octet_bytes = [] {
    byte_index ix{};
    for (int i = 0; i < 64; ++i)
        ix.bytes[i] = static_cast<std::uint8_t>(18 * (i / 8 % 4) + 2 + i % 8 + (i >= 32 ? 64 : 0));
    return ix;
}();

// The high nibble of every byte, by one affine transformation over GF(2): result bit i is
// source bit i + 4 (i < 4), other bits zero.
inline __m512i high_nibbles(__m512i v) noexcept {
#if defined(NEXTTOK_KERNELS_GFNI)
    return _mm512_gf2p8affine_epi64_epi8(v, _mm512_set1_epi64(0x1020408000000000), 0);
#else
    return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0f));
#endif
}

// Eight q4_0 blocks (144 bytes) per step: the first 8 and the last 8 quant bytes of each block
// gathered by one two-source byte permutation each, so that a lane of 4 bytes stays in one block
// through all four integer dot products (low and high nibbles of both) and the float work (scale,
// convert, multiply-add) is done once per 8 blocks. The 8 scales come by one two-source word
// permutation. A last group of 1-7 blocks (only at the end of a row) is read with masks, never
// past the row, and meets the activations' zero padding.
template <int NR, int NT>
inline void qdot_range(const block_q4_0* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc16<NR, NT> a(acc, ld);
    const __m512i pick = load_index(q4_0_octet_bytes);
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    // Lane l: block l / 2's scale, at word 9 (k % 4) of the first source (k < 4) or of the second.
    const __m512i dpick = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 59, 59, 50, 50, 41, 41, 32,
                                           32, 27, 27, 18, 18, 9, 9, 0, 0);
    struct unpacked {
        __m512i q[4];  // the nibbles, octet grouping
        __m512 d;      // each lane's block scale
    };
    struct act_octet {
        __m512i minus8_sums, q[4];
        __m512 scales;
    };
    // s0, s72, s8, s80: the octet's bytes from 0, 72, 8 and 80.
    auto unpack = [&](__m512i s0, __m512i s72, __m512i s8, __m512i s80) {
        const __m512i first = _mm512_permutex2var_epi8(s0, pick, s72), last = _mm512_permutex2var_epi8(s8, pick, s80);
        return unpacked{
            {_mm512_and_si512(first, low4), high_nibbles(first), _mm512_and_si512(last, low4), high_nibbles(last)},
            _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutex2var_epi16(s0, dpick, s72)))};
    };
    auto act = [&](int t, std::int64_t b) {
        const q8_act_row& xr = *x[t];
        const std::int8_t* xq = xr.octet_qs + 32 * b;
        return act_octet{_mm512_load_si512(xr.octet_minus8_sums + 2 * b),
                         {_mm512_load_si512(xq), _mm512_load_si512(xq + 64), _mm512_load_si512(xq + 128),
                          _mm512_load_si512(xq + 192)},
                         _mm512_load_ps(xr.octet_lane_scales + 2 * b)};
    };
    auto mac = [&](int r, int t, const unpacked& u, const act_octet& xa) {
        // sum (nibble - 8) x = sum nibble x - 8 sum x
        __m512i sum = xa.minus8_sums;
        for (int m = 0; m < 4; ++m) sum = _mm512_dpbusd_epi32(sum, u.q[m], xa.q[m]);
        const __m512 scale = _mm512_mul_ps(u.d, xa.scales);
        a.v[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), scale, a.v[r][t]);
    };
    for_each_group<NR, NT, 8, 72, 8, 80, NT <= 4>(w, b0, b1, pf, unpack, act, mac);
    a.store(acc, ld);
}

// vpermb indexes of a q4_k step's scales: step i multiplies sub-blocks (0, 2), (1, 3), (4, 6) or
// (5, 7), so its words 0-15 take scale byte a, words 16-31 scale byte b (the odd bytes are masked).
struct byte_indexes4 {
    byte_index ix[4];
};
inline constexpr byte_indexes4 q4_k_scale_pick = [] {
    byte_indexes4 p{};
    for (int i = 0; i < 4; ++i)
        for (int w = 0; w < 32; ++w) p.ix[i].bytes[2 * w] = static_cast<std::uint8_t>(q4_k_step_sub_blocks[w / 16][i]);
    return p;
}();

// The 6-bit scales and minimums of q4_k blocks a and b (ggml's get_scale_min_k4), a's in the low
// 128 bits and b's in the high, each as bytes: scales 0-3, 4-7, minimums 0-3, 4-7. With a block's
// scale bytes as words u0, u1, u2, scales 0-3 are u0 & 0x3f.., minimums 0-3 u1 & 0x3f.., scales 4-7
// (u2 & 0x0f..) | ((u0 >> 2) & 0x30..), minimums 4-7 ((u2 >> 4) & 0x0f..) | ((u1 >> 2) & 0x30..).
// The 16-byte loads end in the blocks' first quant bytes. (Two rows' blocks at once rather than
// one in 128 bits: 1.1B-shaped decode products, 2 threads, median ms per token 1.2% shorter,
// measured with both codes in one process, token by token in turn.)
inline __m256i q4_k_scales_mins(const block_q4_k& a, const block_q4_k& b) noexcept {
    const __m256i u =
        _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a.scales))),
                                _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)), 1);
    const __m256i lo = _mm256_and_si256(u, _mm256_set1_epi32(0x3f3f3f3f));
    const __m256i u2 =
        _mm256_srlv_epi32(_mm256_shuffle_epi32(u, _MM_SHUFFLE(2, 2, 2, 2)), _mm256_set_epi32(0, 0, 4, 0, 0, 0, 4, 0));
    const __m256i hi = _mm256_or_si256(_mm256_and_si256(u2, _mm256_set1_epi32(0x0f0f0f0f)),
                                       _mm256_and_si256(_mm256_srli_epi32(u, 2), _mm256_set1_epi32(0x30303030)));
    return _mm256_unpacklo_epi32(lo, hi);
}

// A q4_k block against the activations' per-256 quantization (q8_act_row::q8k_qs, q8k_scales, q8k_block_sums), as
// llama.cpp's q4_K x q8_K: sub-block j is d sc_j q - dmin m_j, so the block's dot is
// xd (d sum_j sc_j sum(q xq) - dmin sum_j m_j bsum_j), both sums exact in int32. Sub-blocks go
// two per step: unsigned nibbles times signed activations summed in pairs (16 bits, at most
// 2 x 15 x 127), then times the sub-blocks' scales and summed in pairs into one int32 vector
// (vpdpwssd) over the whole block, so the float work is one conversion and one multiply-add per
// block and row. (Per-32 activation scales, four conversions and multiply-adds a block, were
// slower: 1.1B-shaped decode products, 2 threads, median ms per token 2% longer, measured with
// both codes in one process, token by token in turn.)
// The minimum terms of two rows go together in 256 bits (row r in lanes 0-3, row r + 1 in 4-7)
// into their own accumulator, which is subtracted from lanes 0-3 of the rows' accumulators after
// each block whose index is 7 mod 8 and at the end of the range. Ranges split only there (at
// multiples of 8 blocks), so every tile shape and range split adds the same numbers in the same
// order. (Against the minimums added into each row's accumulator every block: 14 instructions
// fewer a block and two rows, every weight product of a 1.1B token 0.979-0.983 of the time, 2
// threads, three runs, median ratio with both codes in one process, token by token in turn.)
template <int NR, int NT>
inline void qdot_range(const block_q4_k* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                       float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    acc16<NR, NT> a(acc, ld);
    constexpr int NP = (NR + 1) / 2;  // row pairs (the last may hold one row twice)
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const __m512i scale_pick[4] = {load_index(q4_k_scale_pick.ix[0]), load_index(q4_k_scale_pick.ix[1]),
                                   load_index(q4_k_scale_pick.ix[2]), load_index(q4_k_scale_pick.ix[3])};
    // Bytes 8-15 of each 128-bit lane (a row's minimums, from q4_k_scales_mins) as words.
    const __m256i mins_words = _mm256_set_epi8(-1, 15, -1, 14, -1, 13, -1, 12, -1, 11, -1, 10, -1, 9, -1, 8, -1, 15, -1,
                                               14, -1, 13, -1, 12, -1, 11, -1, 10, -1, 9, -1, 8);
    const __m256i dmin_pick = _mm256_set_epi32(3, 3, 3, 3, 1, 1, 1, 1);  // dmin xd of row r, r + 1
    const __m512i d_second = _mm512_set1_epi32(2);                       // d xd of row r + 1
    for (std::int64_t c0 = b0, c1; c0 < b1; c0 = c1) {                   // chunks ending at multiples of 8 blocks
        c1 = std::min(b1, (c0 / 8 + 1) * 8);
        __m256 macc[NP][NT];
        for (int p = 0; p < NP; ++p)
            for (int t = 0; t < NT; ++t) macc[p][t] = _mm256_setzero_ps();
        for (std::int64_t b = c0; b < c1; ++b) {
            pf.advance(NR * sizeof(block_q4_k));
            NEXTTOK_UNROLL
            for (int p = 0; p < NP; ++p) {
                const int r = 2 * p, r1 = std::min(r + 1, NR - 1);
                const block_q4_k& wa = w[r][b];
                const block_q4_k& wb1 = w[r1][b];
                const __m256i both = q4_k_scales_mins(wa, wb1);
                std::uint32_t da, db;
                std::memcpy(&da, &wa.d, 4);
                std::memcpy(&db, &wb1.d, 4);
                // d, dmin of row r, then of row r + 1 (lanes 4-7 zero)
                const __m256 dm =
                    _mm256_cvtph_ps(_mm_insert_epi32(_mm_cvtsi32_si128(static_cast<int>(da)), static_cast<int>(db), 1));
                const __m256i m16 = _mm256_shuffle_epi8(both, mins_words);
                NEXTTOK_UNROLL
                for (int h = 0; h < 2; ++h) {
                    if (r + h >= NR) break;
                    const block_q4_k& wb = w[r + h][b];
                    if constexpr (NT == 1) prefetch_near<near_steps * sizeof(block_q4_k), sizeof(block_q4_k)>(&wb);
                    const __m128i sm8 = h == 0 ? _mm256_castsi256_si128(both) : _mm256_extracti128_si256(both, 1);
                    __m512i sc[4];  // step i's scales as words
                    for (int i = 0; i < 4; ++i)
                        sc[i] = _mm512_maskz_permutexvar_epi8(0x5555555555555555, scale_pick[i],
                                                              _mm512_castsi128_si512(sm8));
                    __m512i q[4];
                    for (int k = 0; k < 2; ++k) {  // qs bytes [64k, 64k + 64): sub-blocks 4k .. 4k + 3
                        const __m512i raw = _mm512_loadu_si512(wb.qs + 64 * k);
                        q[2 * k] = _mm512_and_si512(raw, low4);  // sub-blocks 4k, 4k + 2
                        q[2 * k + 1] = high_nibbles(raw);        // sub-blocks 4k + 1, 4k + 3
                    }
                    NEXTTOK_UNROLL
                    for (int t = 0; t < NT; ++t) {
                        const q8_act_row& xr = *x[t];
                        __m512i sum = _mm512_setzero_si512();
                        for (int i = 0; i < 4; ++i) {
                            const __m512i xq = _mm512_load_si512(xr.q8k_qs + 256 * b + 64 * i);
                            sum = _mm512_dpwssd_epi32(sum, _mm512_maddubs_epi16(q[i], xq), sc[i]);
                        }
                        const __m256 dk = _mm256_mul_ps(dm, _mm256_set1_ps(xr.q8k_scales[b]));
                        if (h == 0) {  // both rows' minimum terms
                            const __m256i bs = _mm256_broadcastsi128_si256(
                                _mm_loadu_si128(reinterpret_cast<const __m128i*>(xr.q8k_block_sums + 8 * b)));
                            const __m256 mins = _mm256_cvtepi32_ps(_mm256_madd_epi16(m16, bs));
                            macc[p][t] = _mm256_fmadd_ps(mins, _mm256_permutexvar_ps(dmin_pick, dk), macc[p][t]);
                        }
                        const __m512 dx = h == 0 ? _mm512_broadcastss_ps(_mm256_castps256_ps128(dk))
                                                 : _mm512_permutexvar_ps(d_second, _mm512_castps256_ps512(dk));
                        a.v[r + h][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), dx, a.v[r + h][t]);
                    }
                }
            }
        }
        NEXTTOK_UNROLL
        for (int p = 0; p < NP; ++p)
            for (int t = 0; t < NT; ++t) {
                a.v[2 * p][t] =
                    _mm512_mask_sub_ps(a.v[2 * p][t], 0x000f, a.v[2 * p][t], _mm512_castps256_ps512(macc[p][t]));
                if (2 * p + 1 < NR)
                    a.v[2 * p + 1][t] =
                        _mm512_mask_sub_ps(a.v[2 * p + 1][t], 0x000f, a.v[2 * p + 1][t],
                                           _mm512_castps128_ps512(_mm256_extractf128_ps(macc[p][t], 1)));
            }
    }
    a.store(acc, ld);
}

NEXTTOK_INTRINSICS_END

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

#endif

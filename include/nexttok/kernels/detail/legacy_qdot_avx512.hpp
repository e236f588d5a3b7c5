// The AVX-512 kernels of q4_1, q5_0, q5_1 and iq4_nl (BW, DQ, VL, VBMI, VNNI: NEXTTOK_KERNELS_INT8_AVX512):
// the order of legacy_qdot.hpp an octet of 8 blocks at a time, which fills the 16 lanes.
// Internal (legacy_qdot.hpp).
//
// An octet (144 to 192 bytes) is read by four 64-byte loads: window A, its bytes [0, 128), holds
// blocks 0-3, window B, its last 128 bytes, blocks 4-7 (never past the octet; a last octet of 1-7
// blocks is read with masks, never past the row). As for q4_0 (quant_act.hpp), the first 8 and the
// last 8 quant bytes of the 8 blocks are gathered into bytes 8k .. 8k + 7 (block k), each by a
// two-source byte permutation of both windows and a blend; their low and high nibbles meet the
// activations' octet grouping (q8_act_row::octet_qs), whose int32 lane l is exactly half l % 2 of
// block l / 2. The scales (and minimums) come to their lanes by word permutations; q5_0 and q5_1
// take the fifth bits of each part as a 64-bit mask, the part's qh byte of each of the 8 blocks,
// added as 16 under it. Unsigned levels go into vpdpbusd: q5_0's q - 16 as q with -16 sum xq from
// the activations' lane sums (q8_act_row::octet_minus8_sums * 2), iq4_nl's table values plus 128 with
// -128 sum xq (octet_minus8_sums * 16). (Quads of 4 blocks against q8_act_row::quad_qs, one lane per quarter
// block, were 1.3-1.6x slower: the float work per block doubles.)
// Part of every kernel set (kernels/detail/passes.hpp includes it once per set): no include guard.

#if defined(NEXTTOK_KERNELS_INT8_AVX512)

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail {

NEXTTOK_INTRINSICS_BEGIN

template <class Block>
inline constexpr bool legacy_has_qh = std::is_same_v<Block, block_q5_0> || std::is_same_v<Block, block_q5_1>;

// The permutation indexes of an octet of Block (see above), as constants. Each index byte (word)
// points into its own window: A for blocks 0-3, B for blocks 4-7.
template <class Block>
struct legacy_octet_indexes {
    static constexpr int size = static_cast<int>(sizeof(Block));
    static constexpr int b_start = 8 * size - 128;  // window B's first byte in the octet
    byte_index first, last;                         // byte 8k + j: block k's quant byte j, 8 + j
    byte_index qh;      // byte 8m + k: block k's qh byte {0, 2, 1, 3}[m] (the fifth bits of part m)
    byte_index scales;  // words: d of block l / 2 in word l (l < 16), m of block (l - 16) / 2 in word l

    static constexpr std::uint8_t window(int k, int B) { return static_cast<std::uint8_t>(k < 4 ? B : B - b_start); }
    static constexpr legacy_octet_indexes make() {
        legacy_octet_indexes ix{};
        int qs = 0, qh = 0, m = 0;
        if constexpr (std::is_same_v<Block, block_q4_1>) qs = 4, m = 2;
        if constexpr (std::is_same_v<Block, block_q5_0>) qs = 6, qh = 2;
        if constexpr (std::is_same_v<Block, block_q5_1>) qs = 8, qh = 4, m = 2;
        if constexpr (std::is_same_v<Block, block_iq4_nl>) qs = 2;
        constexpr int part_byte[4] = {0, 2, 1, 3};
        for (int i = 0; i < 64; ++i) {
            const int k = i / 8, j = i % 8;
            ix.first.bytes[i] = window(k, size * k + qs + j);
            ix.last.bytes[i] = window(k, size * k + qs + 8 + j);
            const int qk = i % 8;  // qh: byte 8m + k
            ix.qh.bytes[i] = i < 32 ? window(qk, size * qk + qh + part_byte[i / 8]) : 0;
        }
        for (int l = 0; l < 32; ++l) {
            const int k = l < 16 ? l / 2 : (l - 16) / 2;
            ix.scales.bytes[2 * l] = static_cast<std::uint8_t>(window(k, size * k + (l < 16 ? 0 : m)) / 2);
            ix.scales.bytes[2 * l + 1] = 0;
        }
        return ix;
    }
};
template <class Block>
inline constexpr legacy_octet_indexes<Block> legacy_octet = legacy_octet_indexes<Block>::make();

static_assert(offsetof(block_q4_1, qs) == 4 && offsetof(block_q5_0, qh) == 2 && offsetof(block_q5_0, qs) == 6 &&
              offsetof(block_q5_1, qh) == 4 && offsetof(block_q5_1, qs) == 8 && offsetof(block_q5_1, m) == 2 &&
              offsetof(block_iq4_nl, qs) == 2);

// An octet of one row unpacked: the levels of parts 0-3 (elements j, 16 + j, 8 + j, 24 + j of
// each block, as q8_act_row::octet_qs), the scales and minimums of its lanes.
struct legacy_octet_weights {
    __m512i q[4];
    __m512 d, m;
};

// a0, a1: window A (the octet's bytes from 0 and 64); b0, b1: window B.
template <class Block>
inline legacy_octet_weights legacy_unpack_octet(__m512i a0, __m512i a1, __m512i b0, __m512i b1) noexcept {
    const legacy_octet_indexes<Block>& ix = legacy_octet<Block>;
    constexpr __mmask64 blocks_4_7 = 0xFFFFFFFF00000000ull;
    auto gather = [&](const byte_index& index) {
        const __m512i i = load_index(index);
        return _mm512_mask_blend_epi8(blocks_4_7, _mm512_permutex2var_epi8(a0, i, a1),
                                      _mm512_permutex2var_epi8(b0, i, b1));
    };
    legacy_octet_weights w;
    const __m512i first = gather(ix.first), last = gather(ix.last);
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    w.q[0] = _mm512_and_si512(first, low4);
    w.q[1] = high_nibbles(first);
    w.q[2] = _mm512_and_si512(last, low4);
    w.q[3] = high_nibbles(last);
    if constexpr (legacy_has_qh<Block>) {
        // Part m's mask: byte k = block k's qh byte {0, 2, 1, 3}[m], bit j = element j of the part.
        const __m512i i = load_index(ix.qh);
        const __m256i all = _mm512_castsi512_si256(_mm512_mask_blend_epi8(
            0xF0F0F0F0ull, _mm512_permutex2var_epi8(a0, i, a1), _mm512_permutex2var_epi8(b0, i, b1)));
        const __m512i sixteen = _mm512_set1_epi8(16);
        const __m128i lo = _mm256_castsi256_si128(all), hi = _mm256_extracti128_si256(all, 1);
        const std::uint64_t mk[4] = {
            static_cast<std::uint64_t>(_mm_cvtsi128_si64(lo)), static_cast<std::uint64_t>(_mm_extract_epi64(lo, 1)),
            static_cast<std::uint64_t>(_mm_cvtsi128_si64(hi)), static_cast<std::uint64_t>(_mm_extract_epi64(hi, 1))};
        for (int p = 0; p < 4; ++p) w.q[p] = _mm512_mask_add_epi8(w.q[p], _cvtu64_mask64(mk[p]), w.q[p], sixteen);
    }
    if constexpr (std::is_same_v<Block, block_iq4_nl>) {
        alignas(16) std::int8_t table[16];
        for (int i = 0; i < 16; ++i) table[i] = static_cast<std::int8_t>(iq4_nl_values[i] + 128);
        const __m512i t = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(table)));
        for (int p = 0; p < 4; ++p) w.q[p] = _mm512_shuffle_epi8(t, w.q[p]);
    }
    const __m512i si = load_index(ix.scales);
    // Words of blocks 4-7: 8-15 (scales) and 24-31 (minimums).
    const __m512i words = _mm512_mask_blend_epi16(0xFF00FF00u, _mm512_permutex2var_epi16(a0, si, a1),
                                                  _mm512_permutex2var_epi16(b0, si, b1));
    w.d = _mm512_cvtph_ps(_mm512_castsi512_si256(words));
    if constexpr (legacy_has_min<Block>) w.m = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(words, 1));
    return w;
}

// A tile's accumulators over blocks [b0, b1), the octets taken as for_each_group does (quant_act_avx512.hpp).
template <int NR, int NT, class Block>
inline void legacy_avx512_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1,
                                float* acc, std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    constexpr int b_start = legacy_octet_indexes<Block>::b_start;
    acc16<NR, NT> a(acc, ld);
    const __m512i block_lanes = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
    struct act_octet {
        __m512i sum0, q[4];   // sum0: the lane sums' correction (q5_0, iq4_nl), else zero
        __m512 scales, dsum;  // dsum: each block's d sum x in lane 2k (q4_1, q5_1)
    };
    auto act = [&](int t, std::int64_t b) {
        const q8_act_row& xr = *x[t];
        const std::int8_t* xq = xr.octet_qs + 32 * b;
        act_octet xa{_mm512_setzero_si512(),
                     {_mm512_load_si512(xq), _mm512_load_si512(xq + 64), _mm512_load_si512(xq + 128),
                      _mm512_load_si512(xq + 192)},
                     _mm512_load_ps(xr.octet_lane_scales + 2 * b),
                     _mm512_setzero_ps()};
        if constexpr (std::is_same_v<Block, block_q5_0>)
            xa.sum0 = _mm512_slli_epi32(_mm512_load_si512(xr.octet_minus8_sums + 2 * b), 1);
        if constexpr (std::is_same_v<Block, block_iq4_nl>)
            xa.sum0 = _mm512_slli_epi32(_mm512_load_si512(xr.octet_minus8_sums + 2 * b), 4);
        if constexpr (legacy_has_min<Block>)
            xa.dsum = _mm512_permutexvar_ps(block_lanes, _mm512_castps256_ps512(_mm256_loadu_ps(xr.dsum + b)));
        return xa;
    };
    auto mac = [&](int r, int t, const legacy_octet_weights& q, const act_octet& xa) {
        __m512i sum = xa.sum0;
        for (int p = 0; p < 4; ++p) sum = _mm512_dpbusd_epi32(sum, q.q[p], xa.q[p]);
        const __m512 scale = _mm512_mul_ps(q.d, xa.scales);
        __m512& v = a.v[r][t];
        v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), scale, v);
        if constexpr (legacy_has_min<Block>) v = _mm512_mask3_fmadd_ps(q.m, xa.dsum, v, 0x5555);
    };
    auto unpack = [](__m512i a0, __m512i a1, __m512i bb0, __m512i bb1) {
        return legacy_unpack_octet<Block>(a0, a1, bb0, bb1);
    };
    for_each_group<NR, NT, 8, 64, b_start, b_start + 64, NT == 1>(w, b0, b1, pf, unpack, act, mac);
    a.store(acc, ld);
}

template <int NR, int NT, legacy_int8_block Block>
inline void qdot_range(const Block* const* w, const q8_act_row* const* x, std::int64_t b0, std::int64_t b1, float* acc,
                       std::int64_t ld, simd::prefetch_cursor pf) noexcept {
    legacy_avx512_range<NR, NT>(w, x, b0, b1, acc, ld, pf);
}

NEXTTOK_INTRINSICS_END

}  // namespace nexttok::NEXTTOK_KERNEL_PASS::kernel_detail

#endif

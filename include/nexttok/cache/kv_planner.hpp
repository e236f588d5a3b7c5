// Sizing a paged KV cache before allocating it: for a model's kv_shape, a storage format and a
// block size, how many blocks (and positions) fit in a memory budget, and how many bytes S
// sequences of P positions need (S * ceil(P / block_size) blocks: a sequence's last block is
// whole even when partly filled). The numbers equal what paged_kv_cache / q8_0_paged_kv_cache
// report (block_bytes()); a contiguous kv_cache of capacity P is kv_pool_bytes with block_size 1.
// Pure arithmetic, overflow-checked; invalid input throws invalid_argument_error.
#pragma once

#include <nexttok/cache/kv_shape.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace nexttok {

// How a cache stores a row of keys or values.
enum class kv_format { f32, f16, bf16, q8_0 };

inline const char* to_string(kv_format f) noexcept {
    switch (f) {
        case kv_format::f32:
            return "f32";
        case kv_format::f16:
            return "f16";
        case kv_format::bf16:
            return "bf16";
        case kv_format::q8_0:
            return "q8_0";
    }
    return "?";
}

// The format of a cache whose rows hold Element (its element_type).
template <class Element>
constexpr kv_format kv_format_of() {
    if constexpr (std::is_same_v<Element, float>)
        return kv_format::f32;
    else if constexpr (std::is_same_v<Element, Eigen::half>)
        return kv_format::f16;
    else if constexpr (std::is_same_v<Element, Eigen::bfloat16>)
        return kv_format::bf16;
    else {
        static_assert(std::is_same_v<Element, block_q8_0>,
                      "kv_format_of: a KV cache stores float, Eigen::half, Eigen::bfloat16 or block_q8_0");
        return kv_format::q8_0;
    }
}

struct kv_plan {
    std::int64_t n_blocks = 0;     // blocks that fit
    std::int64_t n_positions = 0;  // n_blocks * block_size
    std::size_t bytes = 0;         // n_blocks * kv_block_bytes (<= the budget)
};

namespace detail {

inline std::size_t planner_mul(std::size_t a, std::size_t b, const char* what) {
    std::size_t r;
    if (__builtin_mul_overflow(a, b, &r))
        throw invalid_argument_error(std::string("kv planner: ") + what + " overflows");
    return r;
}

inline void check_block_size(std::int64_t block_size) {
    if (block_size <= 0)
        throw invalid_argument_error("kv planner: block_size is " + std::to_string(block_size) + " (expected >= 1)");
}

}  // namespace detail

// Bytes of one row of keys OR of values: kv_dim values in the format.
inline std::size_t kv_row_bytes(const kv_shape& c, kv_format f) {
    const std::int64_t kv_dim = c.kv_dim();
    if (c.n_layers <= 0 || kv_dim <= 0)
        throw invalid_argument_error("kv planner: the shape has n_layers " + std::to_string(c.n_layers) +
                                     " and kv_dim " + std::to_string(kv_dim) + " (expected both positive)");
    const auto n = static_cast<std::size_t>(kv_dim);
    switch (f) {
        case kv_format::f32:
            return detail::planner_mul(n, sizeof(float), "a row");
        case kv_format::f16:
            return detail::planner_mul(n, sizeof(Eigen::half), "a row");
        case kv_format::bf16:
            return detail::planner_mul(n, sizeof(Eigen::bfloat16), "a row");
        case kv_format::q8_0:
            if (kv_dim % block_q8_0::block_size != 0)
                throw invalid_argument_error("kv planner: q8_0 rows of " + std::to_string(kv_dim) +
                                             " values (n_kv_heads x head_dim), expected a multiple of 32");
            return n / block_q8_0::block_size * sizeof(block_q8_0);
    }
    throw invalid_argument_error("kv planner: unknown kv_format " + std::to_string(static_cast<int>(f)));
}

// Bytes of one block: keys and values of block_size positions over all layers. Equals the paged
// cache's block_bytes().
inline std::size_t kv_block_bytes(const kv_shape& c, kv_format f, std::int64_t block_size) {
    detail::check_block_size(block_size);
    const std::size_t row = kv_row_bytes(c, f);
    return detail::planner_mul(detail::planner_mul(2 * row, static_cast<std::size_t>(c.n_layers), "a block"),
                               static_cast<std::size_t>(block_size), "a block");
}

// The most blocks that fit in budget_bytes (n_blocks for paged_cache_options), and what they hold.
inline kv_plan plan_kv_pool(const kv_shape& c, kv_format f, std::int64_t block_size, std::size_t budget_bytes) {
    const std::size_t block = kv_block_bytes(c, f, block_size);
    std::size_t n = budget_bytes / block;
    const auto max_blocks = static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());  // a pool's limit
    if (n > max_blocks) n = max_blocks;
    return {static_cast<std::int64_t>(n), static_cast<std::int64_t>(n) * block_size, n * block};
}

// Bytes of a pool holding n_sequences sequences of n_positions positions each:
// n_sequences * ceil(n_positions / block_size) blocks.
inline std::size_t kv_pool_bytes(const kv_shape& c, kv_format f, std::int64_t block_size, std::int64_t n_positions,
                                 std::int64_t n_sequences = 1) {
    const std::size_t block = kv_block_bytes(c, f, block_size);
    if (n_positions < 0 || n_sequences < 0)
        throw invalid_argument_error("kv planner: " + std::to_string(n_sequences) + " sequences of " +
                                     std::to_string(n_positions) + " positions (expected both >= 0)");
    const auto per_sequence = static_cast<std::size_t>((n_positions + block_size - 1) / block_size);
    return detail::planner_mul(detail::planner_mul(per_sequence, static_cast<std::size_t>(n_sequences), "the pool"),
                               block, "the pool");
}

// How many sequences of n_positions positions (n_positions >= 1) fit together in budget_bytes.
inline std::int64_t kv_pool_sequences(const kv_shape& c, kv_format f, std::int64_t block_size, std::size_t budget_bytes,
                                      std::int64_t n_positions) {
    if (n_positions <= 0)
        throw invalid_argument_error("kv planner: sequences of " + std::to_string(n_positions) +
                                     " positions (expected >= 1)");
    const kv_plan p = plan_kv_pool(c, f, block_size, budget_bytes);
    return p.n_blocks / ((n_positions + block_size - 1) / block_size);
}

}  // namespace nexttok

// The checks a paged pool (paged_storage.hpp) makes of its options at construction, before it
// allocates anything. Internal.
#pragma once

#include <nexttok/cache/kv_planner.hpp>
#include <nexttok/cache/kv_shape.hpp>
#include <nexttok/cache/paged_cache_options.hpp>
#include <nexttok/detail/memory_limit.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace nexttok::detail {

// A pool's size as the storage resolved it from the options and the shape.
struct paged_pool_size {
    std::int64_t n_blocks, block_size, max_seq_len, kv_dim;
};

// Throws invalid_argument_error, its message starting with `kind` and naming the option, for
// counts out of range, a shape without positive dimensions, rows that are not whole Element
// values, or a pool too large to address; memory_limit_error (with `remedy`) when the whole pool would
// exceed options.max_bytes or the machine's memory. The whole pool is checked although blocks are
// allocated as they are first used: a pool is sized to be used, and running out of memory half-way
// through a batch is worse.
template <class Element>
void check_paged_pool(const char* kind, const kv_shape& c, const paged_cache_options& o, const paged_pool_size& p,
                      const std::string& remedy) {
    constexpr std::int64_t values_per_element = std::is_same_v<Element, block_q8_0> ? block_q8_0::block_size : 1;
    const auto fail = [&](const std::string& what) {
        throw invalid_argument_error(std::string(kind) + ": " + what);
    };
    constexpr std::int64_t max_positions = std::int64_t{1} << 24;
    if (p.n_blocks <= 0 || p.n_blocks > std::numeric_limits<std::int32_t>::max())
        fail("options.n_blocks is " + std::to_string(p.n_blocks) + " (expected 1..2147483647)");
    if (p.block_size <= 0 || p.block_size > max_positions)
        fail("options.block_size is " + std::to_string(p.block_size) + " (expected 1..16777216 positions)");
    if (o.max_seq_len < 0 || p.max_seq_len <= 0 || p.max_seq_len > max_positions)
        fail("options.max_seq_len is " + std::to_string(o.max_seq_len) +
             " (expected 1..16777216, or 0 for the shape's " + std::to_string(c.max_seq_len) + ")");
    if (c.n_layers <= 0 || c.n_kv_heads <= 0 || c.head_dim <= 0)
        fail("the shape has n_layers " + std::to_string(c.n_layers) + ", n_kv_heads " + std::to_string(c.n_kv_heads) +
             ", head_dim " + std::to_string(c.head_dim) + " (expected all positive)");
    if (p.kv_dim % values_per_element != 0)
        fail("the model's key and value rows have " + std::to_string(p.kv_dim) +
             " values (n_kv_heads x head_dim), expected a multiple of " + std::to_string(values_per_element) +
             " (whole q8_0 blocks)");
    // The whole pool's bytes must be representable, even though it is allocated lazily.
    std::uint64_t total = 2 * sizeof(Element);
    for (std::int64_t f : {c.n_layers, p.block_size, p.kv_dim / values_per_element, p.n_blocks})
        if (__builtin_mul_overflow(total, static_cast<std::uint64_t>(f), &total) || total > (std::uint64_t{1} << 62))
            fail("a pool of " + std::to_string(p.n_blocks) + " blocks of " + std::to_string(p.block_size) +
                 " positions is too large to address");
    const std::string description = std::string(kind) + ": a pool of " + std::to_string(p.n_blocks) + " blocks of " +
                                    std::to_string(p.block_size) + " positions x " + std::to_string(c.n_layers) +
                                    " layers x " + std::to_string(c.n_kv_heads) + " KV heads x head size " +
                                    std::to_string(c.head_dim) + " in " + to_string(kv_format_of<Element>()) +
                                    " (keys and values)";
    check_memory_limit(description, static_cast<std::size_t>(total), o.max_bytes, remedy);
}

}  // namespace nexttok::detail

// What the decoder needs from a KV cache: a row of keys and a row of values (n_kv_heads *
// head_dim values) for each layer and position, and room for positions [0, capacity). The row
// holds the values as `element_type`: Scalar (the decoder's type) by default, or block_q8_0
// (kv_dim / 32 blocks of 8-bit values with a scale each: q8_0_kv_cache); `scalar_type` is the
// decoder's Scalar the cache is made for either way. `retains_history` says whether rows written
// by one forward call are still there for the next: true for a real cache; false for no_cache,
// which makes generate() recompute the whole prefix at every step.
#pragma once

#include <nexttok/cache/kv_shape.hpp>
#include <nexttok/tensor/quant_blocks.hpp>
#include <nexttok/tensor/quantize.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>

namespace nexttok {

namespace detail {
template <class C>
struct kv_element {
    using type = typename C::scalar_type;
};
template <class C>
requires requires { typename C::element_type; }
struct kv_element<C> {
    using type = typename C::element_type;
};
}  // namespace detail

// What a cache's rows hold: C::element_type if it names one, else C::scalar_type.
template <class C>
using kv_element_t = typename detail::kv_element<C>::type;

template <class C, class Scalar>
concept kv_storage = requires(C& c, const C& cc, std::int64_t layer, std::int64_t pos) {
    typename C::scalar_type;
    requires std::same_as<typename C::scalar_type, Scalar>;
    requires std::same_as<kv_element_t<C>, Scalar> || std::same_as<kv_element_t<C>, block_q8_0>;
    { C::retains_history } -> std::convertible_to<bool>;
    { c.key(layer, pos) } -> std::same_as<kv_element_t<C>*>;
    { c.value(layer, pos) } -> std::same_as<kv_element_t<C>*>;
    { cc.key(layer, pos) } -> std::same_as<const kv_element_t<C>*>;
    { cc.value(layer, pos) } -> std::same_as<const kv_element_t<C>*>;
    { cc.capacity() } -> std::convertible_to<std::int64_t>;
    { cc.size() } -> std::convertible_to<std::int64_t>;
    { cc.bytes() } -> std::convertible_to<std::size_t>;
    c.reserve(pos);  // throws cache_full_error when pos > capacity(); records size() = max(size(), pos)
    c.clear();
};

// A cache that can forget its last positions: truncate(n) keeps [0, n) (no-op when it holds fewer).
// Speculative decoding drops the positions of rejected drafts with it. kv_cache, q8_0_kv_cache and a
// paged sequence have it; no_cache retains nothing, so it has nothing to forget.
template <class C, class Scalar>
concept rewindable_kv_storage = kv_storage<C, Scalar> && C::retains_history && requires(C& c, std::int64_t n) {
    c.truncate(n);
};

// Stores n float values (n % 32 == 0 for block_q8_0, which the cache checked when it was made) into
// a cache row of Element: converted, or quantized to q8_0 (quantize_row_q8_0).
template <class Element>
inline void store_kv_row(const float* x, Element* row, std::int64_t n) {
    if constexpr (std::same_as<Element, block_q8_0>)
        quantize_row_q8_0(x, row, n);
    else
        for (std::int64_t j = 0; j < n; ++j) row[j] = static_cast<Element>(x[j]);
}

// Bytes of keys and values for n_positions positions of one sequence, before allocating anything.
inline std::size_t kv_cache_bytes(const kv_shape& c, std::int64_t n_positions, std::size_t scalar_bytes) noexcept {
    return 2 * static_cast<std::size_t>(c.n_layers) * static_cast<std::size_t>(n_positions) *
           static_cast<std::size_t>(c.kv_dim()) * scalar_bytes;
}

// The same for a cache of q8_0 blocks (q8_0_kv_cache): 34 bytes per 32 values.
inline std::size_t kv_cache_bytes_q8_0(const kv_shape& c, std::int64_t n_positions) noexcept {
    return 2 * static_cast<std::size_t>(c.n_layers) * static_cast<std::size_t>(n_positions) *
           static_cast<std::size_t>(c.kv_dim() / block_q8_0::block_size) * sizeof(block_q8_0);
}

}  // namespace nexttok

// What the decoder needs from a KV cache: a row of keys and a row of values (n_kv_heads *
// head_dim elements of Scalar) for each layer and position, and room for positions [0, capacity).
// `retains_history` says whether rows written by one forward call are still there for the next:
// true for a real cache; false for no_cache, which makes generate() recompute the whole prefix at
// every step.
#pragma once

#include <nexttok/model/model_config.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>

namespace nexttok {

template <class C, class Scalar>
concept kv_storage = requires(C& c, const C& cc, std::int64_t layer, std::int64_t pos) {
    typename C::scalar_type;
    requires std::same_as<typename C::scalar_type, Scalar>;
    { C::retains_history } -> std::convertible_to<bool>;
    { c.key(layer, pos) } -> std::same_as<Scalar*>;
    { c.value(layer, pos) } -> std::same_as<Scalar*>;
    { cc.key(layer, pos) } -> std::same_as<const Scalar*>;
    { cc.value(layer, pos) } -> std::same_as<const Scalar*>;
    { cc.capacity() } -> std::convertible_to<std::int64_t>;
    { cc.size() } -> std::convertible_to<std::int64_t>;
    { cc.bytes() } -> std::convertible_to<std::size_t>;
    c.reserve(pos);  // throws cache_full_error when pos > capacity(); records size() = max(size(), pos)
    c.clear();
};

// Bytes of keys and values for n_positions positions of one sequence, before allocating anything.
inline std::size_t kv_cache_bytes(const model_config& c, std::int64_t n_positions, std::size_t scalar_bytes) noexcept {
    return 2 * static_cast<std::size_t>(c.n_layers) * static_cast<std::size_t>(n_positions) *
           static_cast<std::size_t>(c.kv_dim()) * scalar_bytes;
}

}  // namespace nexttok

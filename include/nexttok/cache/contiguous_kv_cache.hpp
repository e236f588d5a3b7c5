// The keys and values of one sequence in the decoder's Scalar, (n_layers, capacity,
// n_kv_heads * head_dim) each, allocated once at construction: the one class behind kv_cache
// (kv_cache.hpp) and no_cache (no_cache.hpp), which differ only in RetainsHistory, what generate()
// may assume of the rows written by an earlier forward call (kv_storage.hpp). Use those two names.
// Not thread-safe; one sequence at a time.
#pragma once

#include <nexttok/cache/detail/contiguous_storage.hpp>
#include <nexttok/cache/kv_storage.hpp>

#include <cstddef>
#include <cstdint>

namespace nexttok {

template <class Scalar, bool RetainsHistory>
class contiguous_kv_cache : public detail::contiguous_storage<Scalar> {
public:
    using scalar_type = Scalar;
    static constexpr bool retains_history = RetainsHistory;

    // capacity: positions it holds; 0 means the model's max_seq_len. Allocates bytes() now;
    // max_bytes: their limit (0: the machine's physical memory), over it a resource_error. Errors
    // name the cache as "kv_cache" or "no_cache".
    explicit contiguous_kv_cache(const kv_shape& c, std::int64_t capacity = 0, std::size_t max_bytes = 0)
            : detail::contiguous_storage<Scalar>(c, capacity, RetainsHistory ? "kv_cache" : "no_cache", max_bytes) {}
};

}  // namespace nexttok

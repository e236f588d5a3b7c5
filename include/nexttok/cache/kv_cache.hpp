// The contiguous KV cache of one sequence: keys and values in Scalar, (n_layers, capacity,
// n_kv_heads * head_dim) each, allocated once at construction. Decoding a token appends one row
// per layer and reads all earlier rows, so generation costs linear, not quadratic, work.
// Not thread-safe; one sequence at a time.
#pragma once

#include <nexttok/cache/detail/contiguous_storage.hpp>
#include <nexttok/cache/kv_storage.hpp>

namespace nexttok {

template <class Scalar>
class kv_cache : public detail::contiguous_storage<Scalar> {
public:
    using scalar_type = Scalar;
    static constexpr bool retains_history = true;

    // capacity: positions it holds; 0 means the model's max_seq_len. Allocates bytes() now;
    // max_bytes: their limit (0: the machine's physical memory), over it a resource_error.
    explicit kv_cache(const kv_shape& c, std::int64_t capacity = 0, std::size_t max_bytes = 0)
            : detail::contiguous_storage<Scalar>(c, capacity, "kv_cache", max_bytes) {}
};

}  // namespace nexttok

// The contiguous KV cache of one sequence: keys and values in Scalar, (n_layers, capacity,
// n_kv_heads * head_dim) each, allocated once at construction. Decoding a token appends one row
// per layer and reads all earlier rows, so generation costs linear, not quadratic, work.
// kv_cache<Scalar>(shape, capacity = 0, max_bytes = 0): see contiguous_kv_cache.
// Not thread-safe; one sequence at a time.
#pragma once

#include <nexttok/cache/contiguous_kv_cache.hpp>

namespace nexttok {

template <class Scalar>
using kv_cache = contiguous_kv_cache<Scalar, true>;

}  // namespace nexttok

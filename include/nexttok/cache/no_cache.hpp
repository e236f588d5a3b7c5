// The uncached baseline: nothing survives from one forward call to the next, so generate()
// feeds the whole sequence again at every step and the cost of a token grows with the context
// (quadratic total work). It still needs room for the keys and values of the pass in flight,
// which it allocates once; bytes() reports that scratch memory.
// no_cache<Scalar>(shape, capacity = 0, max_bytes = 0): see contiguous_kv_cache.
#pragma once

#include <nexttok/cache/contiguous_kv_cache.hpp>

namespace nexttok {

template <class Scalar>
using no_cache = contiguous_kv_cache<Scalar, false>;

}  // namespace nexttok

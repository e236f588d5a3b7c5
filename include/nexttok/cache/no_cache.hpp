// The uncached baseline: nothing survives from one forward call to the next, so generate()
// feeds the whole sequence again at every step and the cost of a token grows with the context
// (quadratic total work). It still needs room for the keys and values of the pass in flight,
// which it allocates once; bytes() reports that scratch memory.
#pragma once

#include <nexttok/cache/detail/contiguous_storage.hpp>
#include <nexttok/cache/kv_storage.hpp>

namespace nexttok {

template <class Scalar>
class no_cache : public detail::contiguous_storage<Scalar> {
public:
    using scalar_type = Scalar;
    static constexpr bool retains_history = false;

    explicit no_cache(const kv_shape& c, std::int64_t capacity = 0, std::size_t max_bytes = 0)
            : detail::contiguous_storage<Scalar>(c, capacity, "no_cache", max_bytes) {}
};

}  // namespace nexttok

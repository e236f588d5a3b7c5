// A KV cache of one sequence stored as q8_0, as llama.cpp's `--cache-type-k/-v q8_0`: each row of
// keys or values (n_kv_heads * head_dim values) is kv_dim / 32 blocks of 32 signed 8-bit values
// and a half-precision scale (d = max |x| / 127, q = round(x / d): quantize_row_q8_0), 34 bytes
// per 32 values, 3.8x smaller than a float cache and 1.9x smaller than a half one. The decoder
// quantizes each row as it writes it and attention reads the blocks in place (q8_0_row), so the
// cache is never converted as a whole. Scalar is the type of the decoder it serves (decoder<Scalar>).
// The error it adds is measured against llama.cpp's logits in tests/model (see README).
// Construction throws invalid_argument_error unless kv_dim is a multiple of 32. Not thread-safe;
// one sequence at a time.
#pragma once

#include <nexttok/cache/detail/contiguous_storage.hpp>
#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

namespace nexttok {

template <class Scalar>
class q8_0_kv_cache : public detail::contiguous_storage<block_q8_0> {
public:
    using scalar_type = Scalar;
    using element_type = block_q8_0;
    static constexpr bool retains_history = true;

    // capacity: positions it holds; 0 means the model's max_seq_len. Allocates bytes() now;
    // max_bytes: their limit (0: the machine's physical memory), over it a resource_error.
    explicit q8_0_kv_cache(const kv_shape& c, std::int64_t capacity = 0, std::size_t max_bytes = 0)
            : detail::contiguous_storage<block_q8_0>(c, capacity, "q8_0_kv_cache", max_bytes) {}
};

}  // namespace nexttok

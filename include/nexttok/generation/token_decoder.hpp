// What generate(), generate_n() and score() need from a model: nexttok::decoder<Scalar> satisfies it,
// and so does a user type that wraps one (to count forward calls, log, or run another model).
//   scalar_type              the KV cache's element type (Cache must be kv_storage<scalar_type>)
//   config().vocab_size      logits per position
//   reserve(n_tokens, max_positions)   size scratch before the loop
//   forward(tokens, pos0, cache, logits, logits_for)   decoder.hpp's contract
#pragma once

#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/decoder/logits_for.hpp>
#include <nexttok/types.hpp>

#include <concepts>
#include <cstdint>
#include <span>

namespace nexttok {

template <class D, class Cache>
concept token_decoder = requires(D& d, const D& cd, std::span<const token_id> tokens, std::int64_t pos, Cache& cache,
                                 std::span<float> logits) {
    typename D::scalar_type;
    requires kv_storage<Cache, typename D::scalar_type>;
    { cd.config().vocab_size } -> std::convertible_to<std::int64_t>;
    d.reserve(pos, pos);
    d.forward(tokens, pos, cache, logits, logits_for::all);
};

}  // namespace nexttok

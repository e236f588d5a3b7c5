// One decoder step over a model a loader accepted, with a small cache, skipped when the model is
// too large to run in a few milliseconds: the loaders' checks must make every accepted model safe
// to run, whatever its numbers.
#pragma once

#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/model/model.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace nexttok::fuzz {

// Multiply-adds of one step above which it is skipped (the seeds' tiny models need about 0.3 M).
inline constexpr std::int64_t max_step_flops = std::int64_t{1} << 24;
inline constexpr std::int64_t max_cache_positions = 16;

inline bool small_enough(const model_config& c) {
    const std::int64_t per_layer = c.dim * (c.q_dim() + 2 * c.kv_dim()) + c.q_dim() * c.dim + 3 * c.dim * c.hidden_dim;
    return per_layer * c.n_layers + c.vocab_size * c.dim <= max_step_flops;
}

// `seed` picks the token.
inline void decoder_step(const std::shared_ptr<const model>& m, std::uint8_t seed) {
    const model_config& c = m->config();
    if (!small_enough(c)) return;
    kv_shape shape(c);
    shape.max_seq_len = std::min(c.max_seq_len, max_cache_positions);
    kv_cache<float> cache(shape, shape.max_seq_len);
    decoder<float> dec(m, 1);
    std::vector<float> logits(static_cast<std::size_t>(c.vocab_size));
    const token_id tokens[] = {static_cast<token_id>(seed % c.vocab_size)};
    dec.forward(std::span<const token_id>(tokens), 0, cache, logits);
}

}  // namespace nexttok::fuzz

// The shape of a model's keys and values, all a KV cache needs to know of the model: layers, key/value
// heads, head size and the context the model was trained for. The cache folder knows no model; a
// kv_shape converts implicitly from any configuration with those fields (model_config), so
// `kv_cache<float> cache(model->config())` reads as before.
#pragma once

#include <concepts>
#include <cstdint>

namespace nexttok {

struct kv_shape {
    std::int64_t n_layers = 0;
    std::int64_t n_kv_heads = 0;
    std::int64_t head_dim = 0;
    std::int64_t max_seq_len = 0;  // the context the model was trained for (the default capacity)

    kv_shape() = default;
    kv_shape(std::int64_t layers, std::int64_t kv_heads, std::int64_t head_size, std::int64_t max_seq) noexcept
            : n_layers(layers), n_kv_heads(kv_heads), head_dim(head_size), max_seq_len(max_seq) {}
    template <class Config>
    requires requires(const Config& c) {
        { c.n_layers } -> std::convertible_to<std::int64_t>;
        { c.n_kv_heads } -> std::convertible_to<std::int64_t>;
        { c.head_dim } -> std::convertible_to<std::int64_t>;
        { c.max_seq_len } -> std::convertible_to<std::int64_t>;
    }
    kv_shape(const Config& c) noexcept  // NOLINT(google-explicit-constructor): a model_config is a kv_shape
            : kv_shape(c.n_layers, c.n_kv_heads, c.head_dim, c.max_seq_len) {}

    // Values in one row of keys (or values): n_kv_heads * head_dim.
    std::int64_t kv_dim() const noexcept { return n_kv_heads * head_dim; }
};

}  // namespace nexttok

// Runtime hyper-parameters of a decoder-only transformer, spelled the same everywhere in nexttok.
// Read from a file's metadata (GGUF `<arch>.*` keys, config.json, the llama2.c header); validated before use.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/model/architecture.hpp>
#include <nexttok/model/rope_scaling.hpp>

#include <cstdint>
#include <string>

namespace nexttok {

struct model_config {
    std::string architecture = "llama";  // GGUF general.architecture
    norm_kind norm = norm_kind::rms;
    position_kind positions = position_kind::rope_adjacent;
    mlp_kind mlp = mlp_kind::swiglu;
    std::int64_t vocab_size = 0;
    std::int64_t dim = 0;         // width of the residual stream
    std::int64_t hidden_dim = 0;  // width of the feed-forward layer
    std::int64_t n_layers = 0;
    std::int64_t n_heads = 0;          // query heads
    std::int64_t n_kv_heads = 0;       // key/value heads (grouped-query attention when < n_heads)
    std::int64_t head_dim = 0;         // dim / n_heads unless the file says otherwise
    std::int64_t max_seq_len = 0;      // the context length the model was trained for
    std::int64_t rope_dim = 0;         // leading dimensions of each head that RoPE rotates (= head_dim usually)
    float rope_theta = 10000.0f;       // RoPE base frequency
    rope_scaling_config rope_scaling;  // linear / llama3 / YaRN scaling of the RoPE frequencies (type none: unscaled)
    float norm_eps = 1e-5f;            // epsilon of RMSNorm or LayerNorm
    bool tied_output = false;          // the classifier is the token-embedding matrix

    std::int64_t q_dim() const noexcept { return n_heads * head_dim; }
    std::int64_t kv_dim() const noexcept { return n_kv_heads * head_dim; }

    // Takes the norm, position and MLP kinds of a known architecture.
    void set_architecture(const architecture_traits& a) {
        architecture = std::string(a.name);
        norm = a.norm;
        positions = a.positions;
        mlp = a.mlp;
    }

    // Throws format_error "<file>: <what>" when the numbers cannot describe a working model.
    NEXTTOK_DECL void validate(const std::string& file) const;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/model/impl/model_config.ipp>
#endif

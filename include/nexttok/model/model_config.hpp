// Runtime hyper-parameters of a decoder-only transformer, spelled the same everywhere in nexttok.
// Read from a file's metadata (GGUF `<arch>.*` keys, config.json, the llama2.c header); validated before use.
#pragma once

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
    void validate(const std::string& file) const {
        auto fail = [&](const std::string& what) {
            throw format_error(file + ": hyper-parameters: " + what);
        };
        auto positive = [&](std::int64_t v, const char* name, std::int64_t max) {
            if (v <= 0 || v > max)
                fail(std::string(name) + " = " + std::to_string(v) + " (expected 1.." + std::to_string(max) + ")");
        };
        positive(vocab_size, "vocab_size", std::int64_t{1} << 24);
        positive(dim, "dim", std::int64_t{1} << 20);
        positive(hidden_dim, "hidden_dim", std::int64_t{1} << 22);
        positive(n_layers, "n_layers", 4096);
        positive(n_heads, "n_heads", 4096);
        positive(n_kv_heads, "n_kv_heads", 4096);
        positive(head_dim, "head_dim", 1024);
        positive(max_seq_len, "max_seq_len", std::int64_t{1} << 24);
        if (n_heads % n_kv_heads != 0)
            fail("n_heads = " + std::to_string(n_heads) +
                 " is not a multiple of n_kv_heads = " + std::to_string(n_kv_heads));
        if (positions != position_kind::learned && (rope_dim <= 0 || rope_dim > head_dim || rope_dim % 2 != 0))
            fail("rope_dim = " + std::to_string(rope_dim) + " (expected an even number in 2.." +
                 std::to_string(head_dim) + ")");
        if (!(rope_theta > 0.0f)) fail("rope_theta = " + std::to_string(rope_theta) + " (expected > 0)");
        if (positions != position_kind::learned) rope_scaling.validate(file, rope_dim);
        if (!(norm_eps > 0.0f) || !(norm_eps < 1.0f))
            fail("norm_eps = " + std::to_string(norm_eps) + " (expected in (0, 1))");
    }
};

}  // namespace nexttok

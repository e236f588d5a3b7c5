// Builds a model from a GGUF file of the Llama architecture: hyper-parameters from the `llama.*`
// keys, weights as views into the mapping. Tensors follow llama.cpp's names (token_embd,
// blk.N.attn_q, ..., output_norm, output); no `output.weight` means the classifier is tied to
// the token embedding.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/model/detail/weight_checks.hpp>
#include <nexttok/model/model.hpp>

#include <filesystem>
#include <memory>
#include <string>

namespace nexttok {

namespace detail {

inline std::int64_t gguf_hparam(const gguf_file& g, const std::string& key) {
    const std::uint64_t v = g.get_uint(key);
    if (v > (std::uint64_t{1} << 40)) throw format_error(g.name() + ": metadata key '" + key + "': absurd value " + std::to_string(v));
    return static_cast<std::int64_t>(v);
}

inline const tensor_view& gguf_tensor(const gguf_file& g, const std::string& name) {
    const tensor_view* t = g.find_tensor(name);
    if (t == nullptr) throw format_error(g.name() + ": tensor '" + name + "' is missing");
    return *t;
}

inline model_config read_llama_config(const gguf_file& g) {
    model_config c;
    c.architecture = std::string(g.get_string("general.architecture"));
    if (c.architecture != "llama")
        throw unsupported_error(g.name() + ": general.architecture '" + c.architecture + "' is not supported (expected llama)");
    const std::string a = c.architecture + ".";
    c.dim = gguf_hparam(g, a + "embedding_length");
    c.hidden_dim = gguf_hparam(g, a + "feed_forward_length");
    c.n_layers = gguf_hparam(g, a + "block_count");
    c.n_heads = gguf_hparam(g, a + "attention.head_count");
    c.n_kv_heads = g.find_uint(a + "attention.head_count_kv") ? gguf_hparam(g, a + "attention.head_count_kv") : c.n_heads;
    c.max_seq_len = gguf_hparam(g, a + "context_length");
    if (c.n_heads <= 0) throw format_error(g.name() + ": metadata key '" + a + "attention.head_count' must be positive");
    c.head_dim = g.find_uint(a + "attention.key_length") ? gguf_hparam(g, a + "attention.key_length") : c.dim / c.n_heads;
    c.rope_dim = g.find_uint(a + "rope.dimension_count") ? gguf_hparam(g, a + "rope.dimension_count") : c.head_dim;
    c.rope_theta = static_cast<float>(g.find_float(a + "rope.freq_base").value_or(10000.0));
    c.norm_eps = static_cast<float>(g.find_float(a + "attention.layer_norm_rms_epsilon").value_or(1e-5));
    const tensor_view& embd = gguf_tensor(g, "token_embd.weight");
    c.vocab_size = g.find_uint(a + "vocab_size") ? gguf_hparam(g, a + "vocab_size")
                                                  : static_cast<std::int64_t>(embd.n_dims == 2 ? embd.ne[1] : 0);
    c.tied_output = g.find_tensor("output.weight") == nullptr;
    if (c.head_dim * c.n_heads != c.dim && !g.find_uint(a + "attention.key_length"))
        throw format_error(g.name() + ": hyper-parameters: dim = " + std::to_string(c.dim) + " is not a multiple of n_heads = " + std::to_string(c.n_heads));
    c.validate(g.name());
    return c;
}

}  // namespace detail

// Loads a Llama-architecture GGUF model. Throws io_error, format_error or unsupported_error.
inline std::shared_ptr<const model> load_gguf_model(const std::filesystem::path& path) {
    gguf_file g(path);
    const model_config c = detail::read_llama_config(g);
    const std::string file = g.name();
    auto get = [&](const std::string& name, std::int64_t rows, std::int64_t cols) {
        const tensor_view& t = detail::gguf_tensor(g, name);
        detail::check_weight(file, t, rows, cols);
        return t;
    };
    model_weights w;
    w.token_embd = get("token_embd.weight", c.vocab_size, c.dim);
    w.output_norm = get("output_norm.weight", 0, c.dim);
    w.output = c.tied_output ? w.token_embd : get("output.weight", c.vocab_size, c.dim);
    w.layers.resize(static_cast<std::size_t>(c.n_layers));
    for (std::int64_t i = 0; i < c.n_layers; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        layer_weights& l = w.layers[static_cast<std::size_t>(i)];
        l.attn_norm = get(p + "attn_norm.weight", 0, c.dim);
        l.attn_q = get(p + "attn_q.weight", c.q_dim(), c.dim);
        l.attn_k = get(p + "attn_k.weight", c.kv_dim(), c.dim);
        l.attn_v = get(p + "attn_v.weight", c.kv_dim(), c.dim);
        l.attn_output = get(p + "attn_output.weight", c.dim, c.q_dim());
        l.ffn_norm = get(p + "ffn_norm.weight", 0, c.dim);
        l.ffn_gate = get(p + "ffn_gate.weight", c.hidden_dim, c.dim);
        l.ffn_up = get(p + "ffn_up.weight", c.hidden_dim, c.dim);
        l.ffn_down = get(p + "ffn_down.weight", c.dim, c.hidden_dim);
    }
    return std::make_shared<const model>(c, std::move(w), model::source(std::move(g)));
}

}  // namespace nexttok

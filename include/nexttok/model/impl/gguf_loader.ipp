// The definitions of gguf_loader.hpp: the hyper-parameters from the `<arch>.*` keys, the RoPE
// scaling, and the weights through the architecture's tensor table.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/model/architecture.hpp>
#include <nexttok/model/detail/weight_checks.hpp>
#include <nexttok/model/detail/weight_table.hpp>
#include <nexttok/model/gguf_loader.hpp>
#include <nexttok/model/load_options.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/model/tensor_check.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nexttok {

namespace detail {

NEXTTOK_DECL std::int64_t gguf_hparam(const gguf_file& g, const std::string& key) {
    const std::uint64_t v = g.get_uint(key);
    if (v > (std::uint64_t{1} << 40))
        throw format_error(g.name() + ": metadata key '" + key + "': absurd value " + std::to_string(v));
    return static_cast<std::int64_t>(v);
}

NEXTTOK_DECL std::int64_t gguf_hparam_or(const gguf_file& g, const std::string& key, std::int64_t fallback) {
    return g.find_uint(key) ? gguf_hparam(g, key) : fallback;
}

// The f32 vector rope_freqs.weight (Llama 3.1's per-pair frequency divisors), rope_dim / 2 values.
NEXTTOK_DECL std::vector<float> read_rope_freqs(const gguf_file& g, const tensor_view& t, std::int64_t rope_dim) {
    const std::string where = tensor_place(g.name(), t) + ": ";
    if (t.type != tensor_type::f32) throw format_error(where + "type " + to_string(t.type) + " (expected f32)");
    if (t.n_dims != 1 || static_cast<std::int64_t>(t.ne[0]) != rope_dim / 2)
        throw format_error(where + std::to_string(t.n_elements()) + " values in " + std::to_string(t.n_dims) +
                           " dimensions (expected a vector of rope_dim / 2 = " + std::to_string(rope_dim / 2) + ")");
    std::vector<float> v(static_cast<std::size_t>(rope_dim / 2));
    std::memcpy(v.data(), t.data, v.size() * sizeof(float));
    return v;
}

// RoPE scaling from `<arch>.rope.scaling.*` (type, factor, original_context_length, yarn_*), the
// older `<arch>.rope.scale_linear`, and the rope_freqs.weight tensor, read as llama.cpp reads them:
// a factor without a type is linear; rope_freqs alone is Llama 3.1's scaling (type llama3), and
// it divides the frequencies whatever the type says, as in ggml. The original context defaults to
// the file's context_length. Unknown types and YaRN variants we do not compute are refused.
NEXTTOK_DECL rope_scaling_config read_gguf_rope_scaling(const gguf_file& g, const std::string& a,
                                                        const model_config& c) {
    rope_scaling_config s;
    const std::string type_key = a + "rope.scaling.type";
    const std::string type(g.find_string(type_key).value_or(""));
    std::optional<double> factor = g.find_float(a + "rope.scaling.factor");
    if (!factor) factor = g.find_float(a + "rope.scale_linear");
    if (type == "linear" || (type.empty() && factor && *factor != 0.0 && *factor != 1.0))
        s.type = rope_scaling_type::linear;
    else if (type == "yarn")
        s.type = rope_scaling_type::yarn;
    else if (!type.empty() && type != "none")
        throw unsupported_error(g.name() + ": metadata key '" + type_key + "' = '" + type + "': RoPE scaling '" + type +
                                "' is not supported (expected none, linear or yarn)");
    if (factor && *factor != 0.0) s.factor = static_cast<float>(*factor);  // llama.cpp reads 0 as "no scaling"
    s.original_max_seq_len = gguf_hparam_or(g, a + "rope.scaling.original_context_length", c.max_seq_len);
    s.beta_fast = static_cast<float>(g.find_float(a + "rope.scaling.yarn_beta_fast").value_or(s.beta_fast));
    s.beta_slow = static_cast<float>(g.find_float(a + "rope.scaling.yarn_beta_slow").value_or(s.beta_slow));
    s.ext_factor = static_cast<float>(g.find_float(a + "rope.scaling.yarn_ext_factor").value_or(s.ext_factor));
    s.attn_factor = static_cast<float>(g.find_float(a + "rope.scaling.yarn_attn_factor").value_or(s.attn_factor));
    if (const auto log_mul = g.find_float(a + "rope.scaling.yarn_log_multiplier"); log_mul && *log_mul != 0.0)
        throw unsupported_error(g.name() + ": metadata key '" + a + "rope.scaling.yarn_log_multiplier' = " +
                                std::to_string(*log_mul) + ": DeepSeek's YaRN magnitude is not supported");
    if (const tensor_view* t = g.find_tensor("rope_freqs.weight")) {
        s.freq_factors = read_rope_freqs(g, *t, c.rope_dim);
        if (s.type == rope_scaling_type::none) s.type = rope_scaling_type::llama3;
    }
    return s;
}

NEXTTOK_DECL model_config read_gguf_config(const gguf_file& g) {
    model_config c;
    const std::string arch(g.get_string("general.architecture"));
    const auto traits = find_architecture(arch);
    if (!traits)
        throw unsupported_error(g.name() + ": general.architecture '" + arch + "' is not supported (expected one of " +
                                known_architecture_names() + ")");
    c.set_architecture(*traits);
    const std::string a = arch + ".";
    c.dim = gguf_hparam(g, a + "embedding_length");
    c.hidden_dim = gguf_hparam(g, a + "feed_forward_length");
    c.n_layers = gguf_hparam(g, a + "block_count");
    c.n_heads = gguf_hparam(g, a + "attention.head_count");
    c.n_kv_heads = gguf_hparam_or(g, a + "attention.head_count_kv", c.n_heads);
    c.max_seq_len = gguf_hparam(g, a + "context_length");
    if (c.n_heads <= 0)
        throw format_error(g.name() + ": metadata key '" + a + "attention.head_count' must be positive");
    const bool explicit_head_dim = g.find_uint(a + "attention.key_length").has_value();
    c.head_dim = explicit_head_dim ? gguf_hparam(g, a + "attention.key_length") : c.dim / c.n_heads;
    if (!explicit_head_dim && c.head_dim * c.n_heads != c.dim)
        throw format_error(g.name() + ": hyper-parameters: dim = " + std::to_string(c.dim) +
                           " is not a multiple of n_heads = " + std::to_string(c.n_heads));
    c.rope_dim = gguf_hparam_or(g, a + "rope.dimension_count", c.head_dim);
    c.rope_theta = static_cast<float>(g.find_float(a + "rope.freq_base").value_or(10000.0));
    if (c.positions != position_kind::learned) c.rope_scaling = read_gguf_rope_scaling(g, a, c);
    c.norm_eps = static_cast<float>(g.find_float(a + std::string(traits->norm_eps_key)).value_or(1e-5));
    const tensor_view* embd = g.find_tensor("token_embd.weight");
    if (embd == nullptr) throw format_error(g.name() + ": tensor 'token_embd.weight' is missing");
    c.vocab_size = gguf_hparam_or(g, a + "vocab_size", static_cast<std::int64_t>(embd->n_dims == 2 ? embd->ne[1] : 0));
    c.tied_output = g.find_tensor("output.weight") == nullptr;
    c.validate(g.name());
    return c;
}

// A GGUF file's tensors as load_weight_table reads them: llama.cpp's names, "blk.N." for a layer.
struct gguf_tensors {
    const gguf_file& g;

    std::string name(const tensor_entry& e, std::int64_t layer) const {
        const std::string n(info(e.role).gguf);
        return layer < 0 ? n : "blk." + std::to_string(layer) + "." + n;
    }
    bool has(const std::string& name) const { return g.find_tensor(name) != nullptr; }
    tensor_view load(const std::string& name, const tensor_entry&, std::int64_t rows, std::int64_t cols) const {
        const tensor_view* t = g.find_tensor(name);
        if (t == nullptr) throw format_error(g.name() + ": tensor '" + name + "' is missing");
        check_weight(g.name(), *t, rows, cols);
        return *t;
    }
};

}  // namespace detail

NEXTTOK_DECL std::shared_ptr<const model> load_gguf_model(const std::filesystem::path& path,
                                                          const load_options& options) {
    gguf_file g(path);
    const model_config c = detail::read_gguf_config(g);
    const std::string file = g.name();
    const architecture_traits a = *find_architecture(c.architecture);
    model_weights w;
    detail::gguf_tensors tensors{g};
    detail::load_weight_table(a, c, tensors, w);
    w.output = c.tied_output ? w.token_embd : tensors.load("output.weight", {}, c.vocab_size, c.dim);
    check_weights(file, w, options);
    return std::make_shared<const model>(c, std::move(w), model::source(std::move(g)), options.repack_weights);
}

}  // namespace nexttok

// How the decoder-only families differ, as data: one row per architecture, read once at load time.
// A row gives the family's pieces (norm, position encoding, MLP), the names of its hyper-parameters
// in GGUF and in a Hugging Face config.json, and a table of its tensors: each weight's role (its
// llama.cpp GGUF name and shape follow from the role: detail/weight_table.hpp), its Hugging Face name and
// its quirks (fused QKV, Conv1D storage). Both loaders read these rows and nothing else about a
// family, and the decoder runs one code path that picks the norm, the positions and the MLP per
// layer call (never per element). So a new family that combines known pieces is one row here and
// one tensor table; a genuinely new piece is one enumerator and one kernel.
#pragma once

#include <nexttok/detail/config.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace nexttok {

enum class norm_kind {
    rms,    // RMSNorm: x / rms(x) * w                       (Llama, Qwen2)
    layer,  // LayerNorm: (x - mean) / std(x) * w + b        (GPT-2)
};

enum class position_kind {
    rope_adjacent,  // RoPE on pairs (x[2i], x[2i+1]): llama2.c, GGUF llama (llama.cpp's "normal" mode)
    rope_neox,      // RoPE on pairs (x[i], x[i + d/2]): Qwen2 and Hugging Face's rotate_half
    learned,        // a learned position-embedding table added to the token embedding (GPT-2)
};

enum class mlp_kind {
    swiglu,  // down(silu(gate(x)) * up(x))        (Llama, Qwen2)
    gelu,    // down(gelu_tanh(up(x) + b) ) + b    (GPT-2)
};

// What a weight does in the decoder (model_weights.hpp holds one view per role). The classifier
// (GGUF output.weight, Hugging Face lm_head.weight, or the token embedding when tied) is the same
// in every family and is not in the tables.
enum class weight_role : std::uint8_t {
    // once per model
    token_embd,
    position_embd,
    output_norm,
    output_norm_b,
    // once per layer
    attn_norm,
    attn_norm_b,
    attn_qkv,  // a fused (q_dim + 2 kv_dim, dim) matrix, split into attn_q, attn_k, attn_v at load
    attn_qkv_b,
    attn_q,
    attn_k,
    attn_v,
    attn_q_b,
    attn_k_b,
    attn_v_b,
    attn_output,
    attn_output_b,
    ffn_norm,
    ffn_norm_b,
    ffn_gate,
    ffn_up,
    ffn_up_b,
    ffn_down,
    ffn_down_b,
};

inline constexpr bool is_layer_role(weight_role r) noexcept { return r >= weight_role::attn_norm; }

// One tensor of a family, in the order the loaders read them. When a fused attn_qkv is loaded (it
// comes before them), the family's attn_q/k/v and their biases are its split and are skipped.
struct tensor_entry {
    weight_role role;
    bool required = true;    // false: loaded when the file has it (biases some checkpoints carry)
    std::string_view hf{};   // Hugging Face's name, under "<layer_prefix>N." for a layer's tensor;
                             // empty: the Hugging Face layout has no such tensor
    bool hf_conv1d = false;  // stored (in, out) as GPT-2's Conv1D: transposed at load
};

// The names of a family's hyper-parameters in a Hugging Face config.json. An empty key means the
// family has no such setting (the default or another value stands in).
struct hf_config_keys {
    std::array<std::string_view, 2> classes;  // config.json "architectures"[0]
    std::string_view prefix;                  // where the tensors live ("model.")
    bool unprefixed_too = false;              // tensors may also be saved without the prefix
    std::string_view layer_prefix;            // a layer's tensors are under "<layer_prefix>N."
    std::string_view dim, hidden_dim, n_layers, n_heads, n_kv_heads;
    std::array<std::string_view, 2> max_seq_len;  // tried in order
    std::string_view norm_eps, rope_theta;
    std::int64_t hidden_dim_per_dim = 0;  // default hidden_dim = this * dim (0: the key is required)
    std::int64_t max_seq_len_default = 2048;
    double norm_eps_default = 1e-5;
    bool tied_default = false;  // the config class's default of tie_word_embeddings
};

struct architecture_traits {
    std::string_view name;  // GGUF general.architecture
    norm_kind norm;
    position_kind positions;
    mlp_kind mlp;
    std::string_view norm_eps_key;  // the GGUF key (after "<name>.") that holds the norm epsilon
    hf_config_keys hf;
    std::span<const tensor_entry> tensors;
};

namespace architectures {

using r = weight_role;

inline constexpr tensor_entry llama_tensors[] = {
    {r::token_embd, true, "embed_tokens.weight"},
    {r::output_norm, true, "norm.weight"},
    {r::attn_norm, true, "input_layernorm.weight"},
    {r::attn_qkv, false, {}},  // some GGUF conversions fuse Q, K and V
    {r::attn_qkv_b, false, {}},
    {r::attn_q, true, "self_attn.q_proj.weight"},
    {r::attn_k, true, "self_attn.k_proj.weight"},
    {r::attn_v, true, "self_attn.v_proj.weight"},
    {r::attn_q_b, false, "self_attn.q_proj.bias"},  // Qwen2 has them
    {r::attn_k_b, false, "self_attn.k_proj.bias"},
    {r::attn_v_b, false, "self_attn.v_proj.bias"},
    {r::attn_output, true, "self_attn.o_proj.weight"},
    {r::attn_output_b, false, {}},
    {r::ffn_norm, true, "post_attention_layernorm.weight"},
    {r::ffn_gate, true, "mlp.gate_proj.weight"},
    {r::ffn_up, true, "mlp.up_proj.weight"},
    {r::ffn_up_b, false, {}},
    {r::ffn_down, true, "mlp.down_proj.weight"},
    {r::ffn_down_b, false, {}},
};

inline constexpr tensor_entry gpt2_tensors[] = {
    {r::token_embd, true, "wte.weight"},
    {r::position_embd, true, "wpe.weight"},
    {r::output_norm, true, "ln_f.weight"},
    {r::output_norm_b, true, "ln_f.bias"},
    {r::attn_norm, true, "ln_1.weight"},
    {r::attn_norm_b, true, "ln_1.bias"},
    {r::attn_qkv, true, "attn.c_attn.weight", true},
    {r::attn_qkv_b, true, "attn.c_attn.bias"},
    {r::attn_output, true, "attn.c_proj.weight", true},
    {r::attn_output_b, true, "attn.c_proj.bias"},
    {r::ffn_norm, true, "ln_2.weight"},
    {r::ffn_norm_b, true, "ln_2.bias"},
    {r::ffn_up, true, "mlp.c_fc.weight", true},
    {r::ffn_up_b, true, "mlp.c_fc.bias"},
    {r::ffn_down, true, "mlp.c_proj.weight", true},
    {r::ffn_down_b, true, "mlp.c_proj.bias"},
};

// LlamaConfig's and Qwen2Config's keys (Mistral's are Llama's).
inline constexpr hf_config_keys llama_config_keys(std::string_view cls, std::string_view cls2, double eps) {
    return {.classes = {cls, cls2},
            .prefix = "model.",
            .layer_prefix = "layers.",
            .dim = "hidden_size",
            .hidden_dim = "intermediate_size",
            .n_layers = "num_hidden_layers",
            .n_heads = "num_attention_heads",
            .n_kv_heads = "num_key_value_heads",
            .max_seq_len = {"max_position_embeddings", {}},
            .norm_eps = "rms_norm_eps",
            .rope_theta = "rope_theta",
            .norm_eps_default = eps};
}

}  // namespace architectures

inline constexpr std::array<architecture_traits, 3> known_architectures{{
    {"llama", norm_kind::rms, position_kind::rope_adjacent, mlp_kind::swiglu, "attention.layer_norm_rms_epsilon",
     architectures::llama_config_keys("LlamaForCausalLM", "MistralForCausalLM", 1e-6), architectures::llama_tensors},
    {"qwen2", norm_kind::rms, position_kind::rope_neox, mlp_kind::swiglu, "attention.layer_norm_rms_epsilon",
     architectures::llama_config_keys("Qwen2ForCausalLM", {}, 1e-6), architectures::llama_tensors},
    {"gpt2",
     norm_kind::layer,
     position_kind::learned,
     mlp_kind::gelu,
     "attention.layer_norm_epsilon",
     {.classes = {"GPT2LMHeadModel", {}},
      .prefix = "transformer.",
      .unprefixed_too = true,
      .layer_prefix = "h.",
      .dim = "n_embd",
      .hidden_dim = "n_inner",
      .n_layers = "n_layer",
      .n_heads = "n_head",
      .n_kv_heads = {},
      .max_seq_len = {"n_positions", "n_ctx"},
      .norm_eps = "layer_norm_epsilon",
      .rope_theta = {},
      .hidden_dim_per_dim = 4,
      .max_seq_len_default = 1024,
      .tied_default = true},
     architectures::gpt2_tensors},
}};

NEXTTOK_DECL std::optional<architecture_traits> find_architecture(std::string_view name) noexcept;

// The family whose Hugging Face class (config.json "architectures"[0]) is `cls`.
NEXTTOK_DECL std::optional<architecture_traits> find_hf_architecture(std::string_view cls) noexcept;

// The GGUF names and the Hugging Face classes of the known families, for messages ("llama, qwen2, gpt2").
NEXTTOK_DECL std::string known_architecture_names();
NEXTTOK_DECL std::string known_hf_class_names();

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/model/impl/architecture.ipp>
#endif

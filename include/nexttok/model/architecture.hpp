// How the decoder-only families differ: a row of traits per architecture, read once at load time.
// The decoder runs one code path and picks the norm, the position encoding and the MLP per layer
// call (never per element), so a new family that combines known pieces is one row in
// `known_architectures`; a genuinely new piece is one enumerator and one kernel.
#pragma once

#include <array>
#include <optional>
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

struct architecture_traits {
    std::string_view name;  // GGUF general.architecture
    norm_kind norm;
    position_kind positions;
    mlp_kind mlp;
    std::string_view norm_eps_key;  // the GGUF key (after "<name>.") that holds the norm epsilon
};

inline constexpr std::array<architecture_traits, 3> known_architectures{{
    {"llama", norm_kind::rms, position_kind::rope_adjacent, mlp_kind::swiglu, "attention.layer_norm_rms_epsilon"},
    {"qwen2", norm_kind::rms, position_kind::rope_neox, mlp_kind::swiglu, "attention.layer_norm_rms_epsilon"},
    {"gpt2", norm_kind::layer, position_kind::learned, mlp_kind::gelu, "attention.layer_norm_epsilon"},
}};

inline std::optional<architecture_traits> find_architecture(std::string_view name) noexcept {
    for (const architecture_traits& a : known_architectures)
        if (a.name == name) return a;
    return std::nullopt;
}

inline std::string known_architecture_names() {
    std::string s;
    for (const architecture_traits& a : known_architectures) s += (s.empty() ? "" : ", ") + std::string(a.name);
    return s;
}

}  // namespace nexttok

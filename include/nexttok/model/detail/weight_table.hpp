// What the loaders share about weights: each role's llama.cpp GGUF name, the shape the
// hyper-parameters give it and its place in model_weights, and one loop that fills model_weights
// from an architecture's tensor table (architecture.hpp) through a file format's lookup. Internal.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/model/architecture.hpp>
#include <nexttok/model/model_config.hpp>
#include <nexttok/model/model_weights.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace nexttok::detail {

// A dimension of a weight, in terms of the hyper-parameters.
enum class extent : std::uint8_t { none, dim, q_dim, kv_dim, qkv_dim, hidden_dim, vocab, context };

struct role_info {
    std::string_view gguf;  // llama.cpp's name, after "blk.N." for a layer's tensor
    extent rows, cols;      // rows none: a vector of cols
};

inline constexpr role_info role_infos[] = {
    {"token_embd.weight", extent::vocab, extent::dim},    {"position_embd.weight", extent::context, extent::dim},
    {"output_norm.weight", extent::none, extent::dim},    {"output_norm.bias", extent::none, extent::dim},
    {"attn_norm.weight", extent::none, extent::dim},      {"attn_norm.bias", extent::none, extent::dim},
    {"attn_qkv.weight", extent::qkv_dim, extent::dim},    {"attn_qkv.bias", extent::none, extent::qkv_dim},
    {"attn_q.weight", extent::q_dim, extent::dim},        {"attn_k.weight", extent::kv_dim, extent::dim},
    {"attn_v.weight", extent::kv_dim, extent::dim},       {"attn_q.bias", extent::none, extent::q_dim},
    {"attn_k.bias", extent::none, extent::kv_dim},        {"attn_v.bias", extent::none, extent::kv_dim},
    {"attn_output.weight", extent::dim, extent::q_dim},   {"attn_output.bias", extent::none, extent::dim},
    {"ffn_norm.weight", extent::none, extent::dim},       {"ffn_norm.bias", extent::none, extent::dim},
    {"ffn_gate.weight", extent::hidden_dim, extent::dim}, {"ffn_up.weight", extent::hidden_dim, extent::dim},
    {"ffn_up.bias", extent::none, extent::hidden_dim},    {"ffn_down.weight", extent::dim, extent::hidden_dim},
    {"ffn_down.bias", extent::none, extent::dim},
};

inline const role_info& info(weight_role r) noexcept { return role_infos[static_cast<std::size_t>(r)]; }

inline std::int64_t size_of(extent e, const model_config& c) noexcept {
    switch (e) {
        case extent::none:
            return 0;
        case extent::dim:
            return c.dim;
        case extent::q_dim:
            return c.q_dim();
        case extent::kv_dim:
            return c.kv_dim();
        case extent::qkv_dim:
            return c.q_dim() + 2 * c.kv_dim();
        case extent::hidden_dim:
            return c.hidden_dim;
        case extent::vocab:
            return c.vocab_size;
        case extent::context:
            return c.max_seq_len;
    }
    return 0;
}

// The view of model_weights that holds role r (layer_index for a layer's role).
inline tensor_view& slot(model_weights& w, std::size_t layer_index, weight_role r) noexcept {
    layer_weights& l = w.layers[is_layer_role(r) ? layer_index : 0];
    switch (r) {
        case weight_role::token_embd:
            return w.token_embd;
        case weight_role::position_embd:
            return w.position_embd;
        case weight_role::output_norm:
            return w.output_norm;
        case weight_role::output_norm_b:
            return w.output_norm_b;
        case weight_role::attn_norm:
            return l.attn_norm;
        case weight_role::attn_norm_b:
            return l.attn_norm_b;
        case weight_role::attn_q:
            return l.attn_q;
        case weight_role::attn_k:
            return l.attn_k;
        case weight_role::attn_v:
            return l.attn_v;
        case weight_role::attn_q_b:
            return l.attn_q_b;
        case weight_role::attn_k_b:
            return l.attn_k_b;
        case weight_role::attn_v_b:
            return l.attn_v_b;
        case weight_role::attn_output:
            return l.attn_output;
        case weight_role::attn_output_b:
            return l.attn_output_b;
        case weight_role::ffn_norm:
            return l.ffn_norm;
        case weight_role::ffn_norm_b:
            return l.ffn_norm_b;
        case weight_role::ffn_gate:
            return l.ffn_gate;
        case weight_role::ffn_up:
            return l.ffn_up;
        case weight_role::ffn_up_b:
            return l.ffn_up_b;
        case weight_role::ffn_down:
            return l.ffn_down;
        case weight_role::ffn_down_b:
            return l.ffn_down_b;
        case weight_role::attn_qkv:
        case weight_role::attn_qkv_b:
            break;  // split into attn_q/k/v (and their biases) instead
    }
    return l.attn_q;
}

// Rows [first, first + n) of a matrix, or elements [first, first + n) of a vector, as a view.
inline tensor_view slice_rows(const tensor_view& t, std::uint64_t first, std::uint64_t n, const std::string& name) {
    tensor_view s = t;
    s.name = name;
    const std::uint64_t row_bytes = t.n_dims == 1 ? t.n_bytes / t.ne[0] : t.row_bytes();
    if (t.n_dims == 1)
        s.ne[0] = n;
    else
        s.ne[1] = n;
    s.data = t.data + first * row_bytes;
    s.file_offset = t.file_offset + first * row_bytes;
    s.n_bytes = n * row_bytes;
    return s;
}

// A fused (q_dim + 2 kv_dim, ...) matrix or bias vector as three views of consecutive rows.
inline void split_qkv(const tensor_view& fused, const model_config& c, tensor_view& q, tensor_view& k, tensor_view& v) {
    const auto q_dim = static_cast<std::uint64_t>(c.q_dim()), kv_dim = static_cast<std::uint64_t>(c.kv_dim());
    q = slice_rows(fused, 0, q_dim, fused.name + "[q]");
    k = slice_rows(fused, q_dim, kv_dim, fused.name + "[k]");
    v = slice_rows(fused, q_dim + kv_dim, kv_dim, fused.name + "[v]");
}

inline bool is_split_role(weight_role r) noexcept { return r >= weight_role::attn_q && r <= weight_role::attn_v_b; }

// Fills w (its layers sized to c.n_layers) with the tensors of architecture a, except the
// classifier. `source` knows the file format:
//   std::string name(const tensor_entry&, std::int64_t layer)  the tensor's name in the file (layer -1:
//                                                             a model tensor), empty if the format has none
//   bool has(const std::string& name)
//   tensor_view load(const std::string& name, const tensor_entry&, std::int64_t rows, std::int64_t cols)
//                                                             checked against (rows, cols); throws if missing
template <class Source>
void load_weight_table(const architecture_traits& a, const model_config& c, Source& source, model_weights& w) {
    w.layers.resize(static_cast<std::size_t>(c.n_layers));
    auto load = [&](const tensor_entry& e, std::int64_t layer, bool fused) {
        if (fused && is_split_role(e.role)) return false;
        const std::string name = source.name(e, layer);
        if (name.empty() || (!e.required && !source.has(name))) return false;
        const tensor_view t = source.load(name, e, size_of(info(e.role).rows, c), size_of(info(e.role).cols, c));
        const auto index = static_cast<std::size_t>(layer < 0 ? 0 : layer);
        layer_weights& l = w.layers[index];
        if (e.role == weight_role::attn_qkv)
            split_qkv(t, c, l.attn_q, l.attn_k, l.attn_v);
        else if (e.role == weight_role::attn_qkv_b)
            split_qkv(t, c, l.attn_q_b, l.attn_k_b, l.attn_v_b);
        else
            slot(w, index, e.role) = t;
        return true;
    };
    for (const tensor_entry& e : a.tensors)
        if (!is_layer_role(e.role)) load(e, -1, false);
    for (std::int64_t i = 0; i < c.n_layers; ++i) {
        bool fused = false;
        for (const tensor_entry& e : a.tensors)
            if (is_layer_role(e.role)) {
                const bool loaded = load(e, i, fused);
                fused = fused || (loaded && e.role == weight_role::attn_qkv);
            }
    }
}

}  // namespace nexttok::detail

// Typed, non-owning views of a decoder's weights inside a mapped file. Matrices use ggml's order
// (see tensor_view): a [rows, cols] matrix has `rows` outputs, each a row of `cols`. Biases and the
// LayerNorm shifts are empty views in families that have none; a fused QKV matrix in the file is
// split by the loader into three views of consecutive rows.
#pragma once

#include <nexttok/tensor/tensor_view.hpp>

#include <vector>

namespace nexttok {

struct layer_weights {
    tensor_view attn_norm;    // (dim)
    tensor_view attn_q;       // (n_heads * head_dim, dim)
    tensor_view attn_k;       // (n_kv_heads * head_dim, dim)
    tensor_view attn_v;       // (n_kv_heads * head_dim, dim)
    tensor_view attn_output;  // (dim, n_heads * head_dim)
    tensor_view ffn_norm;     // (dim)
    tensor_view ffn_gate;     // (hidden_dim, dim)   w1 in llama2.c; empty for a GELU MLP
    tensor_view ffn_up;       // (hidden_dim, dim)   w3
    tensor_view ffn_down;     // (dim, hidden_dim)   w2
    // Optional (empty when the family has none):
    tensor_view attn_norm_b, ffn_norm_b;                      // (dim) LayerNorm shifts
    tensor_view attn_q_b, attn_k_b, attn_v_b, attn_output_b;  // biases of the projections
    tensor_view ffn_up_b, ffn_down_b;                         // biases of the MLP
};

struct model_weights {
    tensor_view token_embd;  // (vocab_size, dim)
    std::vector<layer_weights> layers;
    tensor_view output_norm;    // (dim)
    tensor_view output;         // (vocab_size, dim); the same view as token_embd when tied
    tensor_view output_norm_b;  // (dim) LayerNorm shift, optional
    tensor_view position_embd;  // (n_positions, dim) learned positions, optional
};

}  // namespace nexttok

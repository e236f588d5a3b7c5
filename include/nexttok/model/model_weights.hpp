// Typed, non-owning views of a Llama-family model's weights inside a mapped file. Matrices use
// ggml's order (see tensor_view): a [rows, cols] matrix has `rows` outputs, each a row of `cols`.
#pragma once

#include <nexttok/io/tensor_view.hpp>

#include <vector>

namespace nexttok {

struct layer_weights {
    tensor_view attn_norm;    // (dim)
    tensor_view attn_q;       // (n_heads * head_dim, dim)
    tensor_view attn_k;       // (n_kv_heads * head_dim, dim)
    tensor_view attn_v;       // (n_kv_heads * head_dim, dim)
    tensor_view attn_output;  // (dim, n_heads * head_dim)
    tensor_view ffn_norm;     // (dim)
    tensor_view ffn_gate;     // (hidden_dim, dim)   w1 in llama2.c
    tensor_view ffn_up;       // (hidden_dim, dim)   w3
    tensor_view ffn_down;     // (dim, hidden_dim)   w2
};

struct model_weights {
    tensor_view token_embd;   // (vocab_size, dim)
    std::vector<layer_weights> layers;
    tensor_view output_norm;  // (dim)
    tensor_view output;       // (vocab_size, dim); the same view as token_embd when tied
};

}  // namespace nexttok

// Writes a Llama-layout model (one made by make_random_model, say) as a GGUF file that load_model
// reads back: the llama.* hyper-parameters and every tensor in its own type (a model built without
// repacking: a repacked matrix has no GGUF type). No tokenizer is
// written (the decoder does not need one).
#pragma once

#include <nexttok/io/gguf_writer.hpp>
#include <nexttok/model/model.hpp>

#include <cstdint>
#include <filesystem>

namespace nexttok::bench {

inline void write_model_gguf(const model& m, const std::filesystem::path& path) {
    const model_config& c = m.config();
    const model_weights& w = m.weights();
    gguf_writer g;
    g.add_string("general.architecture", "llama");
    g.add_u32("llama.context_length", static_cast<std::uint32_t>(c.max_seq_len));
    g.add_u32("llama.embedding_length", static_cast<std::uint32_t>(c.dim));
    g.add_u32("llama.feed_forward_length", static_cast<std::uint32_t>(c.hidden_dim));
    g.add_u32("llama.block_count", static_cast<std::uint32_t>(c.n_layers));
    g.add_u32("llama.attention.head_count", static_cast<std::uint32_t>(c.n_heads));
    g.add_u32("llama.attention.head_count_kv", static_cast<std::uint32_t>(c.n_kv_heads));
    g.add_u32("llama.rope.dimension_count", static_cast<std::uint32_t>(c.rope_dim));
    g.add_f32("llama.rope.freq_base", c.rope_theta);
    g.add_f32("llama.attention.layer_norm_rms_epsilon", c.norm_eps);
    g.add_tensor(w.token_embd);
    for (const layer_weights& l : w.layers)
        for (const tensor_view* t : {&l.attn_norm, &l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_norm,
                                     &l.ffn_gate, &l.ffn_up, &l.ffn_down})
            g.add_tensor(*t);
    g.add_tensor(w.output_norm);
    if (!c.tied_output) g.add_tensor(w.output);
    g.write(path);
}

}  // namespace nexttok::bench

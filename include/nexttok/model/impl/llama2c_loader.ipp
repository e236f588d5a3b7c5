// The definitions of llama2c_loader.hpp: the checkpoint's header and its tensors in file order.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/byte_reader.hpp>
#include <nexttok/io/mapped_file.hpp>
#include <nexttok/model/detail/weight_checks.hpp>
#include <nexttok/model/llama2c_loader.hpp>
#include <nexttok/model/load_options.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/model/tensor_check.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

namespace nexttok {

NEXTTOK_DECL std::shared_ptr<const model> load_llama2c_model(const std::filesystem::path& path,
                                                             const load_options& options) {
    mapped_file f(path);
    const std::string file = f.name();
    byte_reader r(f.bytes(), file);
    const char* names[] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
    std::int32_t h[7];
    for (int i = 0; i < 7; ++i) h[i] = r.read<std::int32_t>(std::string("header field ") + names[i]);
    for (int i = 0; i < 7; ++i)
        if (i != 5 && h[i] <= 0)
            r.fail_at(4 * static_cast<std::size_t>(i), std::string("header field ") + names[i],
                      "expected a positive number, got " + std::to_string(h[i]));
    if (h[5] == 0 || h[5] == INT32_MIN)
        r.fail_at(20, "header field vocab_size", "expected a non-zero number, got " + std::to_string(h[5]));

    model_config c;
    c.dim = h[0];
    c.hidden_dim = h[1];
    c.n_layers = h[2];
    c.n_heads = h[3];
    c.n_kv_heads = h[4];
    c.vocab_size = h[5] < 0 ? -static_cast<std::int64_t>(h[5]) : h[5];
    c.tied_output = h[5] > 0;
    c.max_seq_len = h[6];
    if (c.dim % c.n_heads != 0)
        r.fail_at(12, "header field n_heads",
                  "dim = " + std::to_string(c.dim) + " is not a multiple of n_heads = " + std::to_string(c.n_heads));
    c.head_dim = c.dim / c.n_heads;
    c.rope_dim = c.head_dim;
    c.validate(file);

    // Lay the tensors out in file order, checking each lies inside the file.
    std::uint64_t offset = 28;
    auto take = [&](const std::string& name, std::int64_t rows, std::int64_t cols) {
        tensor_view t;
        t.name = name;
        t.type = tensor_type::f32;
        t.n_dims = rows == 0 ? 1 : 2;
        t.ne = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows == 0 ? 1 : rows), 1, 1};
        t.n_bytes = t.n_elements() * 4;
        t.file_offset = offset;
        std::uint64_t end = 0;
        if (detail::add_overflows(offset, t.n_bytes, end) || end > f.size())
            r.fail_at(offset, "tensor '" + name + "'",
                      std::to_string(t.n_bytes) + " bytes of data run past the end of the file (" +
                          std::to_string(f.size()) + " bytes; truncated?)");
        t.data = f.data() + offset;
        offset = end;
        return t;
    };
    // llama2.c stores each weight kind for all layers contiguously: (layer, rows, cols).
    const auto L = static_cast<std::size_t>(c.n_layers);
    model_weights w;
    w.layers.resize(L);
    w.token_embd = take("token_embedding_table", c.vocab_size, c.dim);
    auto per_layer = [&](const char* name, tensor_view layer_weights::*member, std::int64_t rows, std::int64_t cols) {
        for (std::size_t i = 0; i < L; ++i)
            w.layers[i].*member = take(std::string(name) + "[" + std::to_string(i) + "]", rows, cols);
    };
    per_layer("rms_att_weight", &layer_weights::attn_norm, 0, c.dim);
    per_layer("wq", &layer_weights::attn_q, c.q_dim(), c.dim);
    per_layer("wk", &layer_weights::attn_k, c.kv_dim(), c.dim);
    per_layer("wv", &layer_weights::attn_v, c.kv_dim(), c.dim);
    per_layer("wo", &layer_weights::attn_output, c.dim, c.q_dim());
    per_layer("rms_ffn_weight", &layer_weights::ffn_norm, 0, c.dim);
    per_layer("w1", &layer_weights::ffn_gate, c.hidden_dim, c.dim);
    per_layer("w2", &layer_weights::ffn_down, c.dim, c.hidden_dim);
    per_layer("w3", &layer_weights::ffn_up, c.hidden_dim, c.dim);
    w.output_norm = take("rms_final_weight", 0, c.dim);
    take("freq_cis_real", c.max_seq_len, c.head_dim / 2);  // stale RoPE tables: skipped
    take("freq_cis_imag", c.max_seq_len, c.head_dim / 2);
    w.output = c.tied_output ? w.token_embd : take("wcls", c.vocab_size, c.dim);
    if (offset != f.size())
        r.fail_at(offset, "end of weights",
                  std::to_string(f.size() - offset) +
                      " unexpected trailing bytes (expected the file to end here for these hyper-parameters)");
    check_weights(file, w, options);
    return std::make_shared<const model>(c, std::move(w), model::source(std::move(f)), options.repack_weights);
}

}  // namespace nexttok

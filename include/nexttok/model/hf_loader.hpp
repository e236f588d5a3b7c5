// Builds a model from a Hugging Face directory: config.json, then model.safetensors or the shards
// named by model.safetensors.index.json. Supported: LlamaForCausalLM (and Mistral's, the same
// layout), Qwen2ForCausalLM, GPT2LMHeadModel, with F32/F16/BF16 tensors used in place.
//
// Two differences from GGUF are handled here, exactly:
// - Llama's Q/K rows are in HF's rotate-half order (llama.cpp's converter permutes them to
//   adjacent pairs): the model runs with NeoX-pairing RoPE instead, which is the same function.
// - GPT-2 stores Conv1D weights as (in, out): those are transposed once at load into buffers the
//   model owns (the only weights not used in place).
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/json_limits.hpp>
#include <nexttok/io/safetensors.hpp>
#include <nexttok/model/architecture.hpp>
#include <nexttok/model/detail/hf_config.hpp>
#include <nexttok/model/detail/weight_checks.hpp>
#include <nexttok/model/gguf_loader.hpp>
#include <nexttok/model/load_options.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/model/tensor_check.hpp>

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace nexttok {

namespace detail {

// The safetensors files of a directory: model.safetensors, or every shard of the index.
inline std::vector<safetensors_file> open_shards(const std::filesystem::path& dir) {
    std::vector<safetensors_file> shards;
    if (std::filesystem::exists(dir / "model.safetensors")) {
        shards.emplace_back(dir / "model.safetensors");
        return shards;
    }
    const auto index_path = dir / "model.safetensors.index.json";
    if (!std::filesystem::exists(index_path))
        throw io_error(dir.string() + ": neither model.safetensors nor model.safetensors.index.json is there");
    const nlohmann::json index = read_json_object(index_path);
    const std::string name = index_path.filename().string();
    if (!index.contains("weight_map") || !index["weight_map"].is_object())
        throw format_error(name + ": key 'weight_map': expected an object mapping tensor names to files");
    std::set<std::string> files;
    for (const auto& [tensor, file] : index["weight_map"].items()) {
        if (!file.is_string())
            throw format_error(name + ": weight_map['" + quote_text(tensor) + "']: expected a file name");
        const std::string f = file.get<std::string>();
        if (f.find('/') != std::string::npos || f.find("..") != std::string::npos)
            throw format_error(name + ": weight_map['" + quote_text(tensor) + "'] = '" + quote_text(f) +
                               "': expected a file name inside the directory");
        files.insert(f);
    }
    for (const std::string& f : files) shards.emplace_back(dir / f);
    return shards;
}

// A (rows, cols) copy of a (cols, rows)-stored matrix, elements of `elem` bytes, into `out`.
inline void transpose_into(const tensor_view& t, std::size_t elem, std::byte* out) {
    const std::uint64_t in_rows = t.ne[1], in_cols = t.ne[0];
    for (std::uint64_t r = 0; r < in_rows; ++r)
        for (std::uint64_t c = 0; c < in_cols; ++c)
            std::memcpy(out + (c * in_rows + r) * elem, t.data + (r * in_cols + c) * elem, elem);
}

}  // namespace detail

// options.check_tensors: whether the weights are scanned for NaN and inf (tensor_check.hpp).
inline std::shared_ptr<const model> load_hf_model(const std::filesystem::path& directory,
                                                  const load_options& options = {}) {
    const std::filesystem::path dir = std::filesystem::path(directory).lexically_normal().parent_path() /
                                      std::filesystem::path(directory).lexically_normal().filename();
    const detail::hf_model_config hc = detail::read_hf_config(dir);
    const model_config& c = hc.config;
    model::hf_files files;
    files.dir = dir.filename().empty() ? dir.parent_path() : dir;
    files.shards = detail::open_shards(dir);
    std::map<std::string, const tensor_view*, std::less<>> by_name;
    std::map<std::string, std::string, std::less<>> shard_of;
    for (const safetensors_file& s : files.shards)
        for (const tensor_view& t : s.tensors()) {
            by_name[t.name] = &t;
            shard_of[t.name] = s.name();
        }
    auto find = [&](const std::string& name) -> const tensor_view* {
        for (const std::string& p : hc.prefixes)
            if (auto it = by_name.find(p + name); it != by_name.end()) return it->second;
        return nullptr;
    };
    auto required = [&](const std::string& name, std::int64_t rows, std::int64_t cols) {
        const tensor_view* t = find(name);
        if (t == nullptr)
            throw format_error(files.dir.filename().string() + ": tensor '" + hc.prefixes.front() + name +
                               "' is missing");
        detail::check_weight(shard_of[t->name], *t, rows, cols);
        return *t;
    };
    auto optional = [&](const std::string& name, std::int64_t rows, std::int64_t cols) {
        return find(name) != nullptr ? required(name, rows, cols) : tensor_view{};
    };
    // GPT-2's Conv1D weights, stored (in, out): checked as such, then transposed to (out, in).
    auto conv1d = [&](const std::string& name, std::int64_t out, std::int64_t in) {
        const tensor_view stored = required(name, in, out);
        const std::size_t elem = stored.n_bytes / stored.n_elements();
        model::memory_buffer& buf =
            files.converted.emplace_back(model::memory_buffer::allocate(stored.n_bytes, stored.name));
        detail::transpose_into(stored, elem, buf.bytes.get());
        tensor_view t = stored;
        t.ne = {static_cast<std::uint64_t>(in), static_cast<std::uint64_t>(out), 1, 1};
        t.data = buf.bytes.get();
        return t;
    };

    model_weights w;
    const bool gpt2 = c.architecture == "gpt2";
    w.token_embd = required(gpt2 ? "wte.weight" : "embed_tokens.weight", c.vocab_size, c.dim);
    w.layers.resize(static_cast<std::size_t>(c.n_layers));
    for (std::int64_t i = 0; i < c.n_layers; ++i) {
        layer_weights& l = w.layers[static_cast<std::size_t>(i)];
        if (gpt2) {
            const std::string p = "h." + std::to_string(i) + ".";
            l.attn_norm = required(p + "ln_1.weight", 0, c.dim);
            l.attn_norm_b = required(p + "ln_1.bias", 0, c.dim);
            const std::int64_t qkv_rows = c.q_dim() + 2 * c.kv_dim();
            detail::split_qkv(l, conv1d(p + "attn.c_attn.weight", qkv_rows, c.dim),
                              required(p + "attn.c_attn.bias", 0, qkv_rows), static_cast<std::uint64_t>(c.q_dim()),
                              static_cast<std::uint64_t>(c.kv_dim()));
            l.attn_output = conv1d(p + "attn.c_proj.weight", c.dim, c.q_dim());
            l.attn_output_b = required(p + "attn.c_proj.bias", 0, c.dim);
            l.ffn_norm = required(p + "ln_2.weight", 0, c.dim);
            l.ffn_norm_b = required(p + "ln_2.bias", 0, c.dim);
            l.ffn_up = conv1d(p + "mlp.c_fc.weight", c.hidden_dim, c.dim);
            l.ffn_up_b = required(p + "mlp.c_fc.bias", 0, c.hidden_dim);
            l.ffn_down = conv1d(p + "mlp.c_proj.weight", c.dim, c.hidden_dim);
            l.ffn_down_b = required(p + "mlp.c_proj.bias", 0, c.dim);
        } else {
            const std::string p = "layers." + std::to_string(i) + ".";
            l.attn_norm = required(p + "input_layernorm.weight", 0, c.dim);
            l.attn_q = required(p + "self_attn.q_proj.weight", c.q_dim(), c.dim);
            l.attn_k = required(p + "self_attn.k_proj.weight", c.kv_dim(), c.dim);
            l.attn_v = required(p + "self_attn.v_proj.weight", c.kv_dim(), c.dim);
            l.attn_q_b = optional(p + "self_attn.q_proj.bias", 0, c.q_dim());
            l.attn_k_b = optional(p + "self_attn.k_proj.bias", 0, c.kv_dim());
            l.attn_v_b = optional(p + "self_attn.v_proj.bias", 0, c.kv_dim());
            l.attn_output = required(p + "self_attn.o_proj.weight", c.dim, c.q_dim());
            l.ffn_norm = required(p + "post_attention_layernorm.weight", 0, c.dim);
            l.ffn_gate = required(p + "mlp.gate_proj.weight", c.hidden_dim, c.dim);
            l.ffn_up = required(p + "mlp.up_proj.weight", c.hidden_dim, c.dim);
            l.ffn_down = required(p + "mlp.down_proj.weight", c.dim, c.hidden_dim);
        }
    }
    if (gpt2) {
        w.position_embd = required("wpe.weight", c.max_seq_len, c.dim);
        w.output_norm = required("ln_f.weight", 0, c.dim);
        w.output_norm_b = required("ln_f.bias", 0, c.dim);
    } else {
        w.output_norm = required("norm.weight", 0, c.dim);
    }
    // lm_head sits outside the "model." prefix.
    model_config final_config = c;
    const auto head = by_name.find("lm_head.weight");
    final_config.tied_output = c.tied_output || head == by_name.end();
    if (final_config.tied_output) {
        w.output = w.token_embd;
    } else {
        detail::check_weight(shard_of["lm_head.weight"], *head->second, c.vocab_size, c.dim);
        w.output = *head->second;
    }
    check_weights(dir.filename().string(), w, options);
    return std::make_shared<const model>(final_config, std::move(w), model::source(std::move(files)));
}

}  // namespace nexttok

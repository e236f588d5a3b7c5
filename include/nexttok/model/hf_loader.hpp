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

// The tensors of a directory's shards by name, as the loader asks for them: under the config's
// prefixes ("model." ...), checked against the shape the model config implies, with GPT-2's
// Conv1D weights transposed into buffers that `files` owns.
class hf_tensors {
public:
    hf_tensors(const hf_model_config& hc, model::hf_files& files) : hc_(hc), files_(files) {
        for (const safetensors_file& s : files.shards)
            for (const tensor_view& t : s.tensors()) {
                by_name_[t.name] = &t;
                shard_of_[t.name] = s.name();
            }
    }

    // The tensor `name` under the first prefix that has it, or null.
    const tensor_view* find(const std::string& name) const {
        for (const std::string& p : hc_.prefixes)
            if (auto it = by_name_.find(p + name); it != by_name_.end()) return it->second;
        return nullptr;
    }
    // `name` of (rows, cols) (rows 0: a vector of cols); format_error when it is missing or
    // misshapen.
    tensor_view required(const std::string& name, std::int64_t rows, std::int64_t cols) const {
        const tensor_view* t = find(name);
        if (t == nullptr)
            throw format_error(files_.dir.filename().string() + ": tensor '" + hc_.prefixes.front() + name +
                               "' is missing");
        check_weight(shard_of_.at(t->name), *t, rows, cols);
        return *t;
    }
    tensor_view optional(const std::string& name, std::int64_t rows, std::int64_t cols) const {
        return find(name) != nullptr ? required(name, rows, cols) : tensor_view{};
    }
    // GPT-2's Conv1D weights, stored (in, out): checked as such, then transposed to (out, in).
    tensor_view conv1d(const std::string& name, std::int64_t out, std::int64_t in) {
        const tensor_view stored = required(name, in, out);
        const std::size_t elem = stored.n_bytes / stored.n_elements();
        model::memory_buffer& buf =
            files_.converted.emplace_back(model::memory_buffer::allocate(stored.n_bytes, stored.name));
        transpose_into(stored, elem, buf.bytes.get());
        tensor_view t = stored;
        t.ne = {static_cast<std::uint64_t>(in), static_cast<std::uint64_t>(out), 1, 1};
        t.data = buf.bytes.get();
        return t;
    }
    // lm_head.weight, which sits outside the prefixes, or null; checked as (vocab_size, dim).
    const tensor_view* lm_head(const model_config& c) const {
        const auto head = by_name_.find("lm_head.weight");
        if (head == by_name_.end()) return nullptr;
        check_weight(shard_of_.at(head->first), *head->second, c.vocab_size, c.dim);
        return head->second;
    }

private:
    const hf_model_config& hc_;
    model::hf_files& files_;
    std::map<std::string, const tensor_view*, std::less<>> by_name_;
    std::map<std::string, std::string, std::less<>> shard_of_;
};

// Layer i of GPT2LMHeadModel: LayerNorm, fused QKV and MLP as Conv1D, every projection biased.
inline void hf_gpt2_layer(hf_tensors& t, const model_config& c, std::int64_t i, layer_weights& l) {
    const std::string p = "h." + std::to_string(i) + ".";
    l.attn_norm = t.required(p + "ln_1.weight", 0, c.dim);
    l.attn_norm_b = t.required(p + "ln_1.bias", 0, c.dim);
    const std::int64_t qkv_rows = c.q_dim() + 2 * c.kv_dim();
    split_qkv(l, t.conv1d(p + "attn.c_attn.weight", qkv_rows, c.dim), t.required(p + "attn.c_attn.bias", 0, qkv_rows),
              static_cast<std::uint64_t>(c.q_dim()), static_cast<std::uint64_t>(c.kv_dim()));
    l.attn_output = t.conv1d(p + "attn.c_proj.weight", c.dim, c.q_dim());
    l.attn_output_b = t.required(p + "attn.c_proj.bias", 0, c.dim);
    l.ffn_norm = t.required(p + "ln_2.weight", 0, c.dim);
    l.ffn_norm_b = t.required(p + "ln_2.bias", 0, c.dim);
    l.ffn_up = t.conv1d(p + "mlp.c_fc.weight", c.hidden_dim, c.dim);
    l.ffn_up_b = t.required(p + "mlp.c_fc.bias", 0, c.hidden_dim);
    l.ffn_down = t.conv1d(p + "mlp.c_proj.weight", c.dim, c.hidden_dim);
    l.ffn_down_b = t.required(p + "mlp.c_proj.bias", 0, c.dim);
}

// Layer i of LlamaForCausalLM (and Mistral's, Qwen2's: the same names, Qwen2 with Q/K/V biases).
inline void hf_llama_layer(const hf_tensors& t, const model_config& c, std::int64_t i, layer_weights& l) {
    const std::string p = "layers." + std::to_string(i) + ".";
    l.attn_norm = t.required(p + "input_layernorm.weight", 0, c.dim);
    l.attn_q = t.required(p + "self_attn.q_proj.weight", c.q_dim(), c.dim);
    l.attn_k = t.required(p + "self_attn.k_proj.weight", c.kv_dim(), c.dim);
    l.attn_v = t.required(p + "self_attn.v_proj.weight", c.kv_dim(), c.dim);
    l.attn_q_b = t.optional(p + "self_attn.q_proj.bias", 0, c.q_dim());
    l.attn_k_b = t.optional(p + "self_attn.k_proj.bias", 0, c.kv_dim());
    l.attn_v_b = t.optional(p + "self_attn.v_proj.bias", 0, c.kv_dim());
    l.attn_output = t.required(p + "self_attn.o_proj.weight", c.dim, c.q_dim());
    l.ffn_norm = t.required(p + "post_attention_layernorm.weight", 0, c.dim);
    l.ffn_gate = t.required(p + "mlp.gate_proj.weight", c.hidden_dim, c.dim);
    l.ffn_up = t.required(p + "mlp.up_proj.weight", c.hidden_dim, c.dim);
    l.ffn_down = t.required(p + "mlp.down_proj.weight", c.dim, c.hidden_dim);
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
    detail::hf_tensors t(hc, files);

    model_weights w;
    const bool gpt2 = c.architecture == "gpt2";
    w.token_embd = t.required(gpt2 ? "wte.weight" : "embed_tokens.weight", c.vocab_size, c.dim);
    w.layers.resize(static_cast<std::size_t>(c.n_layers));
    for (std::int64_t i = 0; i < c.n_layers; ++i) {
        layer_weights& l = w.layers[static_cast<std::size_t>(i)];
        if (gpt2)
            detail::hf_gpt2_layer(t, c, i, l);
        else
            detail::hf_llama_layer(t, c, i, l);
    }
    if (gpt2) {
        w.position_embd = t.required("wpe.weight", c.max_seq_len, c.dim);
        w.output_norm = t.required("ln_f.weight", 0, c.dim);
        w.output_norm_b = t.required("ln_f.bias", 0, c.dim);
    } else {
        w.output_norm = t.required("norm.weight", 0, c.dim);
    }
    model_config final_config = c;
    const tensor_view* head = c.tied_output ? nullptr : t.lm_head(c);  // outside the prefixes
    final_config.tied_output = head == nullptr;
    w.output = final_config.tied_output ? w.token_embd : *head;
    check_weights(dir.filename().string(), w, options);
    return std::make_shared<const model>(final_config, std::move(w), model::source(std::move(files)));
}

}  // namespace nexttok

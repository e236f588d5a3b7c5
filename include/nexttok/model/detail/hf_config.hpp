// Reading a Hugging Face config.json into a model_config. Internal: see hf_loader.hpp.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/model/architecture.hpp>
#include <nexttok/model/model_config.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace nexttok::detail {

// Parses a JSON file that must hold an object; io_error / format_error naming the file.
inline nlohmann::json read_json_object(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw io_error(path.string() + ": cannot open");
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw format_error(path.filename().string() + ": not valid JSON: " + e.what());
    }
    if (!j.is_object()) throw format_error(path.filename().string() + ": expected a JSON object, found " + std::string(j.type_name()));
    return j;
}

struct hf_model_config {
    model_config config;
    std::vector<std::string> prefixes;  // where the decoder's tensors live ("model.", "transformer.", "")
};

inline hf_model_config read_hf_config(const std::filesystem::path& dir) {
    const auto path = dir / "config.json";
    const nlohmann::json j = read_json_object(path);
    const std::string file = "config.json";
    auto integer = [&](const char* key) -> std::int64_t {
        if (!j.contains(key)) throw format_error(file + ": key '" + key + "' is missing");
        if (!j[key].is_number_integer() || j[key].get<std::int64_t>() < 0)
            throw format_error(file + ": key '" + key + "': expected a non-negative integer");
        return j[key].get<std::int64_t>();
    };
    auto integer_or = [&](const char* key, std::int64_t fallback) {
        return j.contains(key) && !j[key].is_null() ? integer(key) : fallback;
    };
    auto bool_or = [&](const char* key, bool fallback) {
        if (!j.contains(key) || j[key].is_null()) return fallback;
        if (!j[key].is_boolean()) throw format_error(file + ": key '" + key + "': expected true or false");
        return j[key].get<bool>();
    };
    auto number_or = [&](const char* key, double fallback) {
        if (!j.contains(key) || j[key].is_null()) return fallback;
        if (!j[key].is_number()) throw format_error(file + ": key '" + key + "': expected a number");
        return j[key].get<double>();
    };
    std::string arch;
    if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() && j["architectures"][0].is_string())
        arch = j["architectures"][0].get<std::string>();
    else
        throw format_error(file + ": key 'architectures': expected a list naming the model class");

    hf_model_config h;
    model_config& c = h.config;
    if (arch == "GPT2LMHeadModel") {
        c.set_architecture(*find_architecture("gpt2"));
        c.dim = integer("n_embd");
        c.n_layers = integer("n_layer");
        c.n_heads = integer("n_head");
        c.n_kv_heads = c.n_heads;
        c.max_seq_len = integer_or("n_positions", integer_or("n_ctx", 1024));
        c.hidden_dim = integer_or("n_inner", 4 * c.dim);
        c.norm_eps = static_cast<float>(number_or("layer_norm_epsilon", 1e-5));
        c.tied_output = bool_or("tie_word_embeddings", true);  // GPT2Config's default
        h.prefixes = {"transformer.", ""};
    } else if (arch == "LlamaForCausalLM" || arch == "MistralForCausalLM" || arch == "Qwen2ForCausalLM") {
        const bool qwen2 = arch == "Qwen2ForCausalLM";
        c.set_architecture(*find_architecture(qwen2 ? "qwen2" : "llama"));
        // HF keeps Q/K rows in rotate-half order: NeoX pairing, not GGUF's permuted adjacent pairs.
        c.positions = position_kind::rope_neox;
        c.dim = integer("hidden_size");
        c.hidden_dim = integer("intermediate_size");
        c.n_layers = integer("num_hidden_layers");
        c.n_heads = integer("num_attention_heads");
        c.n_kv_heads = integer_or("num_key_value_heads", c.n_heads);
        c.max_seq_len = integer_or("max_position_embeddings", 2048);
        c.rope_theta = static_cast<float>(number_or("rope_theta", 10000.0));
        c.norm_eps = static_cast<float>(number_or("rms_norm_eps", 1e-6));
        c.tied_output = bool_or("tie_word_embeddings", false);  // LlamaConfig's and Qwen2Config's default
        if (j.contains("rope_scaling") && !j["rope_scaling"].is_null())
            throw unsupported_error(file + ": key 'rope_scaling': RoPE scaling (" + j["rope_scaling"].dump() + ") is not supported");
        h.prefixes = {"model."};
    } else {
        throw unsupported_error(file + ": architecture '" + arch + "' is not supported (expected LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM or GPT2LMHeadModel)");
    }
    c.vocab_size = integer("vocab_size");
    if (c.n_heads == 0) throw format_error(file + ": the number of attention heads is 0");
    c.head_dim = integer_or("head_dim", c.dim / c.n_heads);
    c.rope_dim = c.head_dim;
    c.validate(file);
    return h;
}

}  // namespace nexttok::detail

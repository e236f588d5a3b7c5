// Reading a Hugging Face config.json into a model_config. Internal: see hf_loader.hpp.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/json_limits.hpp>
#include <nexttok/model/architecture.hpp>
#include <nexttok/model/model_config.hpp>
#include <nexttok/model/rope_scaling.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <cmath>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace nexttok::detail {

// Parses a JSON file that must hold an object, nested at most max_json_depth levels; io_error /
// format_error naming the file.
inline nlohmann::json read_json_object(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw io_error(path.string() + ": cannot open");
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    const nlohmann::json j = parse_json_text(text, path.filename().string());
    if (!j.is_object())
        throw format_error(path.filename().string() + ": expected a JSON object, found " + std::string(j.type_name()));
    return j;
}

// config.json's rope_scaling ({"rope_type" or "type": ..., ...}) as Hugging Face's
// _compute_*_parameters and llama.cpp's converter read it: "default" (none); "linear" (factor);
// "llama3" (factor, low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings 8192:
// the per-pair factors computed here, as the converter writes rope_freqs.weight); "yarn" (factor,
// original_max_position_embeddings (default max_position_embeddings), beta_fast 32, beta_slow 1,
// and attention_factor, which replaces the whole magnitude 1 + 0.1 ln(factor)). The factor is
// rope_scaling's own, as llama.cpp's converter takes it. Other types (dynamic, longrope, ...) and
// YaRN variants (DeepSeek's mscale, truncate: false) are refused by name. Needs c's rope_dim,
// rope_theta and max_seq_len.
inline rope_scaling_config read_hf_rope_scaling(const nlohmann::json& r, const model_config& c,
                                                const std::string& file) {
    const std::string where = file + ": key 'rope_scaling'";
    if (!r.is_object()) throw format_error(where + ": expected an object, found " + std::string(r.type_name()));
    const char* type_key = r.contains("rope_type") ? "rope_type" : "type";
    if (!r.contains(type_key) || !r[type_key].is_string())
        throw format_error(where + ": expected a string 'rope_type' (or 'type') naming the scaling");
    const std::string type = r[type_key].get<std::string>();
    auto number = [&](const char* key, std::optional<double> fallback) {
        if (!r.contains(key) || r[key].is_null()) {
            if (!fallback)
                throw format_error(where + ": key '" + key + "' is missing (RoPE scaling '" + type + "' needs it)");
            return *fallback;
        }
        if (!r[key].is_number()) throw format_error(where + ": key '" + key + "': expected a number");
        return r[key].get<double>();
    };
    auto original = [&](std::int64_t fallback) {
        const double v = number("original_max_position_embeddings", static_cast<double>(fallback));
        if (!(v >= 1.0) || v > static_cast<double>(std::int64_t{1} << 40) || v != std::floor(v))
            throw format_error(where + ": key 'original_max_position_embeddings': expected a positive integer");
        return static_cast<std::int64_t>(v);
    };
    rope_scaling_config s;
    if (type == "default") return s;
    if (type == "linear") {
        s.type = rope_scaling_type::linear;
        s.factor = static_cast<float>(number("factor", std::nullopt));
    } else if (type == "llama3") {
        s.type = rope_scaling_type::llama3;
        s.factor = static_cast<float>(number("factor", std::nullopt));
        s.low_freq_factor = static_cast<float>(number("low_freq_factor", 1.0));
        s.high_freq_factor = static_cast<float>(number("high_freq_factor", 4.0));
        s.original_max_seq_len = original(8192);
        if (!(s.factor > 0.0f) || !(s.low_freq_factor > 0.0f) || !(s.high_freq_factor > s.low_freq_factor))
            throw format_error(where + ": llama3 needs factor > 0 and high_freq_factor > low_freq_factor > 0");
        s.freq_factors = llama3_frequency_factors(c.rope_dim, c.rope_theta, s.factor, s.low_freq_factor,
                                                  s.high_freq_factor, s.original_max_seq_len);
    } else if (type == "yarn") {
        s.type = rope_scaling_type::yarn;
        s.factor = static_cast<float>(number("factor", std::nullopt));
        s.original_max_seq_len = original(c.max_seq_len);
        s.beta_fast = static_cast<float>(number("beta_fast", 32.0));
        s.beta_slow = static_cast<float>(number("beta_slow", 1.0));
        if (r.contains("attention_factor") && !r["attention_factor"].is_null())
            s.attn_factor = static_cast<float>(number("attention_factor", std::nullopt) /
                                               (1.0 + 0.1 * std::log(static_cast<double>(s.factor))));
        for (const char* key : {"mscale", "mscale_all_dim"})
            if (r.contains(key) && !r[key].is_null())
                throw unsupported_error(where + ": key '" + key + "': DeepSeek's YaRN magnitude is not supported");
        if (r.contains("truncate") && r["truncate"] == false)
            throw unsupported_error(
                where + ": key 'truncate' = false: YaRN without truncated correction dims is not supported");
    } else {
        throw unsupported_error(where + ": RoPE scaling '" + quote_text(type) +
                                "' is not supported (expected default, linear, llama3 or yarn)");
    }
    return s;
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
    if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
        j["architectures"][0].is_string())
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
        h.prefixes = {"model."};
    } else {
        throw unsupported_error(
            file + ": architecture '" + quote_text(arch) +
            "' is not supported (expected LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM or GPT2LMHeadModel)");
    }
    c.vocab_size = integer("vocab_size");
    if (c.n_heads == 0) throw format_error(file + ": the number of attention heads is 0");
    c.head_dim = integer_or("head_dim", c.dim / c.n_heads);
    c.rope_dim = c.head_dim;
    if (c.positions != position_kind::learned && j.contains("rope_scaling") && !j["rope_scaling"].is_null())
        c.rope_scaling = read_hf_rope_scaling(j["rope_scaling"], c, file);
    c.validate(file);
    return h;
}

}  // namespace nexttok::detail

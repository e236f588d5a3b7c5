// Reading a Hugging Face config.json into a model_config. Internal: see hf_loader.hpp.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/json_file.hpp>
#include <nexttok/model/architecture.hpp>
#include <nexttok/model/model_config.hpp>
#include <nexttok/model/rope_scaling.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <cmath>
#include <optional>
#include <string>

namespace nexttok::detail {

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
    architecture_traits architecture;  // its hf row names the tensors' prefixes and layout
};

// config.json through the keys of the family its "architectures"[0] names (architecture.hpp).
inline hf_model_config read_hf_config(const std::filesystem::path& dir) {
    const nlohmann::json j = read_json_object(dir / "config.json");
    const json_fields f("config.json");
    const std::string& file = f.file();
    const nlohmann::json* classes = json_fields::find(j, "architectures");
    if (classes == nullptr || !classes->is_array() || classes->empty() || !(*classes)[0].is_string())
        throw format_error(file + ": key 'architectures': expected a list naming the model class");
    const std::string& cls = (*classes)[0].get_ref<const std::string&>();
    const auto a = find_hf_architecture(cls);
    if (!a)
        throw unsupported_error(file + ": architecture '" + quote_text(cls) + "' is not supported (expected one of " +
                                known_hf_class_names() + ")");
    const hf_config_keys& k = a->hf;
    auto count = [&](std::string_view key) {
        return f.count(f.require(j, key, key), key);
    };

    hf_model_config h{{}, *a};
    model_config& c = h.config;
    c.set_architecture(*a);
    // HF keeps Q/K rows in rotate-half order: NeoX pairing, not GGUF's permuted adjacent pairs.
    if (c.positions != position_kind::learned) c.positions = position_kind::rope_neox;
    c.dim = count(k.dim);
    c.hidden_dim =
        k.hidden_dim_per_dim > 0 ? f.count_or(j, k.hidden_dim, k.hidden_dim_per_dim * c.dim) : count(k.hidden_dim);
    c.n_layers = count(k.n_layers);
    c.n_heads = count(k.n_heads);
    c.n_kv_heads = k.n_kv_heads.empty() ? c.n_heads : f.count_or(j, k.n_kv_heads, c.n_heads);
    c.max_seq_len = k.max_seq_len_default;
    for (auto key = k.max_seq_len.rbegin(); key != k.max_seq_len.rend(); ++key)
        if (!key->empty()) c.max_seq_len = f.count_or(j, *key, c.max_seq_len);
    if (!k.rope_theta.empty()) c.rope_theta = static_cast<float>(f.number_or(j, k.rope_theta, 10000.0));
    c.norm_eps = static_cast<float>(f.number_or(j, k.norm_eps, k.norm_eps_default));
    c.tied_output = f.flag_or(j, "tie_word_embeddings", k.tied_default);
    c.vocab_size = count("vocab_size");
    if (c.n_heads == 0) throw format_error(file + ": the number of attention heads is 0");
    c.head_dim = f.count_or(j, "head_dim", c.dim / c.n_heads);
    c.rope_dim = c.head_dim;
    if (const nlohmann::json* r = json_fields::find(j, "rope_scaling");
        r != nullptr && c.positions != position_kind::learned)
        c.rope_scaling = read_hf_rope_scaling(*r, c, file);
    c.validate(file);
    return h;
}

}  // namespace nexttok::detail

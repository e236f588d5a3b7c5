// Hugging Face directories: the stories260K directory in ../shared (Llama, Q/K in rotate-half
// order, tied) against llama.cpp's logits for the same model; Qwen2 and GPT-2 directories written
// here from the shared GGUF files (HF names, GPT-2's Conv1D weights transposed as HF stores them,
// GPT-2 sharded with an index) against llama.cpp's logits for those GGUF files; the rope-* files
// with config.json's rope_scaling (linear, llama3, yarn) against the logits of their GGUF; malformed inputs.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/io/safetensors.hpp>
#include <nexttok/model/load_model.hpp>

#include <file_patch.hpp>
#include <reference_logits.hpp>
#include <safetensors_writer.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <cstring>

namespace nexttok {
namespace {

double reference_error(const std::shared_ptr<const model>& m, const test::reference_logits& ref, bool check_greedy) {
    const std::int64_t V = m->config().vocab_size;
    decoder<float> dec(m);
    kv_cache<float> cache(m->config(), static_cast<std::int64_t>(ref.prompt.size() + ref.greedy.size()));
    std::vector<float> logits(ref.prompt.size() * V);
    dec.forward(ref.prompt, 0, cache, logits, logits_for::all);
    std::vector<float> expected;
    for (const auto& row : ref.logits) expected.insert(expected.end(), row.begin(), row.end());
    for (std::size_t p = 0; p < ref.prompt.size(); ++p)
        EXPECT_EQ(test::argmax(logits.data() + p * V, V), test::argmax(ref.logits[p].data(), V)) << "position " << p;
    if (check_greedy) {
        std::vector<float> step(V);
        auto next = static_cast<token_id>(test::argmax(logits.data() + (ref.prompt.size() - 1) * V, V));
        auto pos = static_cast<std::int64_t>(ref.prompt.size());
        for (std::size_t i = 0; i < ref.greedy.size(); ++i) {
            EXPECT_EQ(next, ref.greedy[i]) << "greedy token " << i;
            dec.forward(std::span<const token_id>(&next, 1), pos++, cache, step);
            next = static_cast<token_id>(test::argmax(step.data(), V));
        }
    }
    return test::relative_rms_error(logits, expected);
}

TEST(hf_directory, stories260_k_matches_llama_cpp) {
    NEXTTOK_REQUIRE_DATA("models/stories260K/hf/model.safetensors");
    auto m = load_model(test::data_path("models/stories260K/hf"));
    EXPECT_EQ(m->format(), model_file_format::hf_directory);
    EXPECT_EQ(m->config().positions, position_kind::rope_neox);
    EXPECT_TRUE(m->config().tied_output);
    const auto ref = test::read_reference_logits(test::data_path("reference/stories260K.logits.txt").string());
    EXPECT_LT(reference_error(m, ref, true), 1e-4);
}

// A tensor of a GGUF file in HF's layout: PyTorch shape (rows, cols), or (cols, rows) with the data
// transposed for GPT-2's Conv1D weights.
test::st_tensor from_gguf(const gguf_file& g, const std::string& gguf_name, const std::string& hf_name,
                          bool conv1d = false) {
    const tensor_view* t = g.find_tensor(gguf_name);
    if (t == nullptr) throw std::runtime_error("test: no tensor " + gguf_name);
    test::st_tensor s;
    s.name = hf_name;
    const std::uint64_t cols = t->ne[0], rows = t->ne[1];
    s.data.resize(t->n_bytes);
    if (t->n_dims == 1) {
        s.shape = {cols};
        std::memcpy(s.data.data(), t->data, t->n_bytes);
    } else if (!conv1d) {
        s.shape = {rows, cols};
        std::memcpy(s.data.data(), t->data, t->n_bytes);
    } else {
        s.shape = {cols, rows};
        for (std::uint64_t r = 0; r < rows; ++r)
            for (std::uint64_t c = 0; c < cols; ++c)
                std::memcpy(s.data.data() + (c * rows + r) * 4, t->data + (r * cols + c) * 4, 4);
    }
    return s;
}

TEST(hf_directory, qwen2_written_from_gguf_matches_llama_cpp) {
    NEXTTOK_REQUIRE_DATA("models/random/tiny-qwen2-f32.gguf");
    gguf_file g(test::data_path("models/random/tiny-qwen2-f32.gguf"));
    test::temp_dir dir;
    std::vector<test::st_tensor> ts = {from_gguf(g, "token_embd.weight", "model.embed_tokens.weight"),
                                       from_gguf(g, "output_norm.weight", "model.norm.weight")};
    const std::pair<const char*, const char*> names[] = {{"attn_norm.weight", "input_layernorm.weight"},
                                                         {"attn_q.weight", "self_attn.q_proj.weight"},
                                                         {"attn_k.weight", "self_attn.k_proj.weight"},
                                                         {"attn_v.weight", "self_attn.v_proj.weight"},
                                                         {"attn_q.bias", "self_attn.q_proj.bias"},
                                                         {"attn_k.bias", "self_attn.k_proj.bias"},
                                                         {"attn_v.bias", "self_attn.v_proj.bias"},
                                                         {"attn_output.weight", "self_attn.o_proj.weight"},
                                                         {"ffn_norm.weight", "post_attention_layernorm.weight"},
                                                         {"ffn_gate.weight", "mlp.gate_proj.weight"},
                                                         {"ffn_up.weight", "mlp.up_proj.weight"},
                                                         {"ffn_down.weight", "mlp.down_proj.weight"}};
    for (int l = 0; l < 2; ++l)
        for (const auto& [ours, hf] : names)
            ts.push_back(
                from_gguf(g, "blk." + std::to_string(l) + "." + ours, "model.layers." + std::to_string(l) + "." + hf));
    test::write_safetensors(dir.path() / "model.safetensors", ts);
    test::write_json(dir.path() / "config.json", {{"architectures", {"Qwen2ForCausalLM"}},
                                                  {"hidden_size", 128},
                                                  {"intermediate_size", 352},
                                                  {"num_hidden_layers", 2},
                                                  {"num_attention_heads", 4},
                                                  {"num_key_value_heads", 2},
                                                  {"vocab_size", 512},
                                                  {"max_position_embeddings", 512},
                                                  {"rms_norm_eps", 1e-6},
                                                  {"rope_theta", 1000000.0},
                                                  {"tie_word_embeddings", true}});
    auto m = load_model(dir.path());
    EXPECT_EQ(m->config().architecture, "qwen2");
    const auto ref = test::read_reference_logits(test::data_path("reference/tiny-qwen2-f32.logits.txt").string());
    EXPECT_LT(reference_error(m, ref, true), 1e-4);
}

// A Llama or Qwen2 GGUF of the shared files as a Hugging Face directory: HF tensor names, and for
// Llama the Q/K rows put back into HF's rotate-half order (llama.cpp's converter permutes each
// head's rows h*hd + s*hd/2 + j to h*hd + 2j + s), so the model runs with NeoX pairing as HF's does.
void write_hf_from_gguf(const gguf_file& g, const std::filesystem::path& dir, const nlohmann::json& config,
                        bool llama) {
    const auto n_layers = config["num_hidden_layers"].get<std::int64_t>(),
               n_heads = config["num_attention_heads"].get<std::int64_t>();
    const auto n_kv_heads = config["num_key_value_heads"].get<std::int64_t>(),
               hd = config["hidden_size"].get<std::int64_t>() / n_heads;
    std::vector<test::st_tensor> ts = {from_gguf(g, "token_embd.weight", "model.embed_tokens.weight"),
                                       from_gguf(g, "output_norm.weight", "model.norm.weight")};
    if (g.find_tensor("output.weight") != nullptr) ts.push_back(from_gguf(g, "output.weight", "lm_head.weight"));
    auto rotate_half_rows = [&](test::st_tensor t, std::int64_t heads) {
        if (!llama) return t;
        const std::size_t row = static_cast<std::size_t>(t.shape[1]) * 4;
        std::vector<char> out(t.data.size());
        for (std::int64_t h = 0; h < heads; ++h)
            for (std::int64_t s = 0; s < 2; ++s)
                for (std::int64_t j = 0; j < hd / 2; ++j)
                    std::memcpy(out.data() + static_cast<std::size_t>(h * hd + s * hd / 2 + j) * row,
                                t.data.data() + static_cast<std::size_t>(h * hd + 2 * j + s) * row, row);
        t.data = std::move(out);
        return t;
    };
    const std::pair<const char*, const char*> names[] = {{"attn_norm.weight", "input_layernorm.weight"},
                                                         {"attn_v.weight", "self_attn.v_proj.weight"},
                                                         {"attn_q.bias", "self_attn.q_proj.bias"},
                                                         {"attn_k.bias", "self_attn.k_proj.bias"},
                                                         {"attn_v.bias", "self_attn.v_proj.bias"},
                                                         {"attn_output.weight", "self_attn.o_proj.weight"},
                                                         {"ffn_norm.weight", "post_attention_layernorm.weight"},
                                                         {"ffn_gate.weight", "mlp.gate_proj.weight"},
                                                         {"ffn_up.weight", "mlp.up_proj.weight"},
                                                         {"ffn_down.weight", "mlp.down_proj.weight"}};
    for (std::int64_t l = 0; l < n_layers; ++l) {
        const std::string gp = "blk." + std::to_string(l) + ".", hp = "model.layers." + std::to_string(l) + ".";
        ts.push_back(rotate_half_rows(from_gguf(g, gp + "attn_q.weight", hp + "self_attn.q_proj.weight"), n_heads));
        ts.push_back(rotate_half_rows(from_gguf(g, gp + "attn_k.weight", hp + "self_attn.k_proj.weight"), n_kv_heads));
        for (const auto& [ours, hf] : names)
            if (g.find_tensor(gp + ours) != nullptr) ts.push_back(from_gguf(g, gp + ours, hp + hf));
    }
    test::write_safetensors(dir / "model.safetensors", ts);
    test::write_json(dir / "config.json", config);
}

// The rope-* files as HF directories with the matching rope_scaling: the same logits as llama.cpp
// gives for the GGUF. llama3's per-frequency factors are computed from config.json here (the GGUF
// carries them as rope_freqs.weight).
struct hf_rope_case {
    const char* gguf;       // under models/random/
    const char* reference;  // under reference/
    const char* architecture;
    double rope_theta;
    const char* rope_scaling;  // JSON
};
void PrintTo(const hf_rope_case& c, std::ostream* os) { *os << c.gguf; }

class hf_rope_scaling_test : public ::testing::TestWithParam<hf_rope_case> {};

TEST_P(hf_rope_scaling_test, matches_llama_cpp_for_the_gguf) {
    const hf_rope_case& rc = GetParam();
    NEXTTOK_REQUIRE_DATA(std::string("models/random/") + rc.gguf);
    gguf_file g(test::data_path(std::string("models/random/") + rc.gguf));
    test::temp_dir dir;
    const bool llama = std::string(rc.architecture) == "LlamaForCausalLM";
    nlohmann::json config = {{"architectures", {rc.architecture}},
                             {"hidden_size", 128},
                             {"intermediate_size", 352},
                             {"num_hidden_layers", 2},
                             {"num_attention_heads", 4},
                             {"num_key_value_heads", 2},
                             {"vocab_size", 512},
                             {"max_position_embeddings", llama ? 512 : 2048},
                             {"rms_norm_eps", llama ? 1e-5 : 1e-6},
                             {"rope_theta", rc.rope_theta},
                             {"tie_word_embeddings", false},
                             {"rope_scaling", nlohmann::json::parse(rc.rope_scaling)}};
    write_hf_from_gguf(g, dir.path(), config, llama);
    auto m = load_model(dir.path());
    auto from_gguf_file = load_model(test::data_path(std::string("models/random/") + rc.gguf));
    EXPECT_EQ(m->config().rope_scaling.type, from_gguf_file->config().rope_scaling.type);
    const auto ref = test::read_reference_logits(test::data_path(std::string("reference/") + rc.reference).string());
    ASSERT_EQ(ref.prompt.size(), 64u);
    const double err = reference_error(m, ref, true);
    ::testing::Test::RecordProperty("relative_rms_error", std::to_string(err));
    EXPECT_LT(err, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    files, hf_rope_scaling_test,
    ::testing::Values(
        hf_rope_case{"rope-linear-f32.gguf", "rope-linear-f32.logits.txt", "LlamaForCausalLM", 10000.0,
                     R"({"type": "linear", "factor": 4.0})"},
        hf_rope_case{"rope-llama3-f32.gguf", "rope-llama3-f32.logits.txt", "LlamaForCausalLM", 500000.0,
                     R"({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                       "original_max_position_embeddings": 64})"},
        hf_rope_case{"rope-yarn-qwen2-f32.gguf", "rope-yarn-qwen2-f32.logits.txt", "Qwen2ForCausalLM", 1000000.0,
                     R"({"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64})"}),
    [](const ::testing::TestParamInfo<hf_rope_case>& info) {
        std::string name = info.param.gguf;
        name = name.substr(0, name.find('.'));
        for (char& ch : name)
            if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
        return name;
    });

TEST(hf_directory, gpt2_sharded_with_conv1d_weights_matches_llama_cpp) {
    NEXTTOK_REQUIRE_DATA("models/random/tiny-gpt2-f32.gguf");
    gguf_file g(test::data_path("models/random/tiny-gpt2-f32.gguf"));
    test::temp_dir dir;
    std::vector<test::st_tensor> first = {from_gguf(g, "token_embd.weight", "transformer.wte.weight"),
                                          from_gguf(g, "position_embd.weight", "transformer.wpe.weight")};
    std::vector<test::st_tensor> second = {from_gguf(g, "output_norm.weight", "transformer.ln_f.weight"),
                                           from_gguf(g, "output_norm.bias", "transformer.ln_f.bias"),
                                           from_gguf(g, "output.weight", "lm_head.weight")};
    const std::tuple<const char*, const char*, bool> names[] = {
        {"attn_norm.weight", "ln_1.weight", false},         {"attn_norm.bias", "ln_1.bias", false},
        {"attn_qkv.weight", "attn.c_attn.weight", true},    {"attn_qkv.bias", "attn.c_attn.bias", false},
        {"attn_output.weight", "attn.c_proj.weight", true}, {"attn_output.bias", "attn.c_proj.bias", false},
        {"ffn_norm.weight", "ln_2.weight", false},          {"ffn_norm.bias", "ln_2.bias", false},
        {"ffn_up.weight", "mlp.c_fc.weight", true},         {"ffn_up.bias", "mlp.c_fc.bias", false},
        {"ffn_down.weight", "mlp.c_proj.weight", true},     {"ffn_down.bias", "mlp.c_proj.bias", false}};
    nlohmann::json weight_map = nlohmann::json::object();
    for (int l = 0; l < 2; ++l)
        for (const auto& [ours, hf, conv] : names)
            (l == 0 ? first : second)
                .push_back(from_gguf(g, "blk." + std::to_string(l) + "." + ours,
                                     "transformer.h." + std::to_string(l) + "." + hf, conv));
    for (const auto& t : first) weight_map[t.name] = "model-00001-of-00002.safetensors";
    for (const auto& t : second) weight_map[t.name] = "model-00002-of-00002.safetensors";
    test::write_safetensors(dir.path() / "model-00001-of-00002.safetensors", first);
    test::write_safetensors(dir.path() / "model-00002-of-00002.safetensors", second);
    test::write_json(dir.path() / "model.safetensors.index.json",
                     {{"metadata", {{"total_size", 0}}}, {"weight_map", weight_map}});
    test::write_json(dir.path() / "config.json", {{"architectures", {"GPT2LMHeadModel"}},
                                                  {"n_embd", 128},
                                                  {"n_layer", 2},
                                                  {"n_head", 4},
                                                  {"n_positions", 256},
                                                  {"n_inner", nullptr},
                                                  {"vocab_size", 512},
                                                  {"layer_norm_epsilon", 1e-5},
                                                  {"tie_word_embeddings", false}});
    auto m = load_model(dir.path());
    EXPECT_EQ(m->config().architecture, "gpt2");
    EXPECT_FALSE(m->config().tied_output);
    const auto ref = test::read_reference_logits(test::data_path("reference/tiny-gpt2-f32.logits.txt").string());
    EXPECT_LT(reference_error(m, ref, false), 1e-3);
}

// ---- malformed input ----

std::string safetensors_error(const test::bytes& b) {
    test::temp_dir dir;
    const auto path = dir.write("bad.safetensors", b);
    try {
        safetensors_file f(path);
    } catch (const format_error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("bad.safetensors"), std::string::npos) << msg;
        return msg;
    }
    ADD_FAILURE() << "malformed safetensors file opened without error";
    return {};
}

test::bytes make_safetensors(const std::string& header, std::size_t data_bytes) {
    test::bytes b(8 + header.size() + data_bytes);
    test::put<std::uint64_t>(b, 0, header.size());
    std::memcpy(b.data() + 8, header.data(), header.size());
    return b;
}

TEST(safetensors_malformed, header_length_past_the_end) {
    auto b = make_safetensors(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8);
    test::put<std::uint64_t>(b, 0, 1u << 20);
    EXPECT_NE(safetensors_error(b).find("header length at offset 0x0"), std::string::npos);
    test::put<std::uint64_t>(b, 0, ~std::uint64_t{0});
    EXPECT_NE(safetensors_error(b).find("do not fit"), std::string::npos);
    EXPECT_NE(safetensors_error(test::bytes(5)).find("header length"), std::string::npos);
}

TEST(safetensors_malformed, header_is_not_a_json_object) {
    EXPECT_NE(safetensors_error(make_safetensors("[1, 2, 3]", 0)).find("expected a JSON object"), std::string::npos);
    EXPECT_NE(safetensors_error(make_safetensors("{\"a\": ", 0)).find("not valid JSON"), std::string::npos);
}

TEST(safetensors_malformed, offsets_out_of_bounds_or_inconsistent) {
    const auto past =
        safetensors_error(make_safetensors(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8));
    EXPECT_NE(past.find("tensor 'w'"), std::string::npos) << past;
    EXPECT_NE(past.find("outside the 8 bytes of data"), std::string::npos) << past;
    const auto size =
        safetensors_error(make_safetensors(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8));
    EXPECT_NE(size.find("need 12"), std::string::npos) << size;
    const auto overlap = safetensors_error(make_safetensors(
        R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
        16));
    EXPECT_NE(overlap.find("overlaps"), std::string::npos) << overlap;
}

TEST(safetensors_malformed, unknown_dtype) {
    const auto msg =
        safetensors_error(make_safetensors(R"({"w":{"dtype":"F12","shape":[2],"data_offsets":[0,8]}})", 8));
    EXPECT_NE(msg.find("unknown dtype 'F12'"), std::string::npos) << msg;
}

// Each entry of the header that is not what safetensors specifies names the tensor and what was expected.
TEST(safetensors_malformed, header_entries_name_the_tensor) {
    const auto entry = [](const std::string& w) {
        return safetensors_error(make_safetensors("{\"w\":" + w + "}", 8));
    };
    const std::string at = "bad.safetensors: tensor 'w' in the header at offset 0x8: ";
    EXPECT_NE(entry("[1]").find(at + "expected an object with dtype, shape and data_offsets"), std::string::npos);
    EXPECT_NE(entry(R"({"dtype":"F32","shape":[2]})").find(at + "expected an object with dtype"), std::string::npos);
    EXPECT_NE(entry(R"({"dtype":4,"shape":[2],"data_offsets":[0,8]})").find(at + "dtype is not a string"),
              std::string::npos);
    EXPECT_NE(entry(R"({"dtype":"F32","shape":[1,1,1,1,2],"data_offsets":[0,8]})")
                  .find(at + "shape must be an array of at most 4"),
              std::string::npos);
    EXPECT_NE(entry(R"({"dtype":"F32","shape":{"a":2},"data_offsets":[0,8]})").find(at + "shape must be an array"),
              std::string::npos);
    for (const char* offsets : {"[0,8,9]", "[-1,8]", "[0,\"8\"]", "8"})
        EXPECT_NE(entry(std::string(R"({"dtype":"F32","shape":[2],"data_offsets":)") + offsets + "}")
                      .find(at + "data_offsets must be two non-negative integers"),
                  std::string::npos)
            << offsets;
    EXPECT_NE(entry(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})")
                  .find(at + "shape entries must be non-negative integers"),
              std::string::npos);
    EXPECT_NE(entry(R"({"dtype":"F32","shape":[1099511627777],"data_offsets":[0,8]})").find(at + "absurd shape"),
              std::string::npos);
    EXPECT_NE(entry(R"({"dtype":"F32","shape":[16777216,16777216,2],"data_offsets":[0,8]})").find(at + "absurd shape"),
              std::string::npos);
    EXPECT_NE(entry(R"({"dtype":"F32","shape":[2],"data_offsets":[8,0]})")
                  .find(at + "data_offsets [8, 0] are outside the 8 bytes of data"),
              std::string::npos);
    const std::string metadata = safetensors_error(make_safetensors(R"({"__metadata__":[1]})", 0));
    EXPECT_NE(metadata.find("bad.safetensors: header key '__metadata__' at offset 0x8: expected an object of strings"),
              std::string::npos)
        << metadata;
}

TEST(hf_directory_malformed, config_errors_name_the_key) {
    NEXTTOK_REQUIRE_DATA("models/stories260K/hf/model.safetensors");
    test::temp_dir dir;
    std::filesystem::copy_file(test::data_path("models/stories260K/hf/model.safetensors"),
                               dir.path() / "model.safetensors");
    auto expect_error = [&](const nlohmann::json& config, const std::string& needle) {
        test::write_json(dir.path() / "config.json", config);
        try {
            load_model(dir.path());
            ADD_FAILURE() << "loaded: " << config.dump();
        } catch (const error& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    const auto text = test::read_bytes(test::data_path("models/stories260K/hf/config.json"));
    const nlohmann::json good = nlohmann::json::parse(text.begin(), text.end());
    auto c = good;
    c.erase("num_hidden_layers");
    expect_error(c, "config.json: key 'num_hidden_layers' is missing");
    c = good;
    c["architectures"] = {"MambaForCausalLM"};
    expect_error(c, "architecture 'MambaForCausalLM' is not supported");
    c = good;
    c["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
    expect_error(c, "config.json: key 'rope_scaling': RoPE scaling 'dynamic' is not supported");
    c["rope_scaling"] = {{"rope_type", "linear"}};
    expect_error(c, "config.json: key 'rope_scaling': key 'factor' is missing");
    c = good;
    c["num_key_value_heads"] = 3;
    expect_error(c, "not a multiple of n_kv_heads");
    // Values of the wrong type or out of their domain.
    c = good;
    c["hidden_size"] = 64.5;
    expect_error(c, "config.json: key 'hidden_size': expected a non-negative integer");
    c["hidden_size"] = -64;
    expect_error(c, "config.json: key 'hidden_size': expected a non-negative integer");
    c = good;
    c["tie_word_embeddings"] = "yes";
    expect_error(c, "config.json: key 'tie_word_embeddings': expected true or false");
    c = good;
    c["rms_norm_eps"] = "1e-5";
    expect_error(c, "config.json: key 'rms_norm_eps': expected a number");
    c = good;
    c["architectures"] = "LlamaForCausalLM";
    expect_error(c, "config.json: key 'architectures': expected a list naming the model class");
    c["architectures"] = nlohmann::json::array();
    expect_error(c, "config.json: key 'architectures': expected a list naming the model class");
    c = good;
    c["num_attention_heads"] = 0;
    expect_error(c, "config.json: the number of attention heads is 0");
    // rope_scaling, each way it can be wrong.
    c = good;
    const std::string rope = "config.json: key 'rope_scaling': ";
    c["rope_scaling"] = 2.0;
    expect_error(c, rope + "expected an object, found number");
    c["rope_scaling"] = {{"factor", 2.0}};
    expect_error(c, rope + "expected a string 'rope_type' (or 'type') naming the scaling");
    c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", "2"}};
    expect_error(c, rope + "key 'factor': expected a number");
    c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 4.0}, {"high_freq_factor", 1.0}};
    expect_error(c, rope + "llama3 needs factor > 0 and high_freq_factor > low_freq_factor > 0");
    c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"original_max_position_embeddings", 0.5}};
    expect_error(c, rope + "key 'original_max_position_embeddings': expected a positive integer");
    c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"mscale", 1.0}};
    expect_error(c, rope + "key 'mscale': DeepSeek's YaRN magnitude is not supported");
    c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"truncate", false}};
    expect_error(c, rope + "key 'truncate' = false: YaRN without truncated correction dims is not supported");
    expect_error(nlohmann::json::array(), "expected a JSON object");
    c = good;
    c["hidden_size"] = 128;  // the tensors no longer match
    expect_error(c, "does not match the hyper-parameters");
    std::filesystem::remove(dir.path() / "model.safetensors");
    expect_error(good, "neither model.safetensors nor model.safetensors.index.json");
    // A sharded directory's index.
    const auto index = dir.path() / "model.safetensors.index.json";
    test::write_json(index, {{"metadata", nlohmann::json::object()}});
    expect_error(good,
                 "model.safetensors.index.json: key 'weight_map': expected an object mapping tensor names to files");
    test::write_json(index, {{"weight_map", {{"lm_head.weight", 3}}}});
    expect_error(good, "model.safetensors.index.json: weight_map['lm_head.weight']: expected a file name");
    test::write_json(index, {{"weight_map", {{"lm_head.weight", "../model.safetensors"}}}});
    expect_error(good,
                 "weight_map['lm_head.weight'] = '../model.safetensors': expected a file name inside the directory");
    test::write_json(index, {{"weight_map", {{"lm_head.weight", "model-00001-of-00002.safetensors"}}}});
    expect_error(good, "model-00001-of-00002.safetensors");  // absent: an io_error naming the shard
}

}  // namespace
}  // namespace nexttok

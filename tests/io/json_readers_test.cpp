// Every JSON reader of the library (config.json and model.safetensors.index.json of a Hugging Face
// directory, tokenizer.json, tokenizer_config.json read for the tokenizer and for the chat template,
// GPT-2's encoder.json) refuses a file nested a million levels deep with a short format_error naming
// the file and the limit, and quotes at most a short prefix of the values it rejects.
#include <nexttok/chat/load_chat_template.hpp>
#include <nexttok/model/hf_loader.hpp>
#include <nexttok/tokenizer/detail/byte_level.hpp>
#include <nexttok/tokenizer/gpt2_tokenizer_files.hpp>
#include <nexttok/tokenizer/hf_tokenizer_file.hpp>
#include <nexttok/tokenizer/load_tokenizer_file.hpp>

#include "file_patch.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <string>

namespace nexttok {
namespace {

using json = nlohmann::json;

std::string nested_json_arrays(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// A config.json for a small Llama, with `rope_scaling` spliced in as raw text (about 2 MB for a
// million levels).
std::string llama_config(const std::string& rope_scaling) {
    return R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 172,
              "num_hidden_layers": 5, "num_attention_heads": 8, "num_key_value_heads": 4, "vocab_size": 512,
              "rope_scaling": )" +
           rope_scaling + "}";
}

// A small byte-level BPE tokenizer.json: 256 byte symbols, "ab", merge "a b"; `merges` as raw text.
std::string small_tokenizer_json(const std::string& merges = R"(["a b"])") {
    json vocab = json::object();
    for (unsigned b = 0; b < 256; ++b)
        vocab[std::string(detail::byte_level_table::get().symbol(static_cast<unsigned char>(b)))] = b;
    vocab["ab"] = 256;
    const json j = {{"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
                    {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", "MERGES"}}}};
    std::string text = j.dump();
    text.replace(text.find("\"MERGES\""), 8, merges);
    return text;
}

class json_readers : public ::testing::Test {
protected:
    std::filesystem::path write(const std::string& name, const std::string& text) const {
        const auto path = dir_.path() / name;
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }
    // The message of the nexttok::error `f` throws, checked to be short and to hold each needle.
    static std::string expect_short_error(const std::function<void()>& f, const std::vector<std::string>& needles) {
        std::string msg;
        try {
            f();
            ADD_FAILURE() << "no error";
        } catch (const error& e) {
            msg = e.what();
        }
        EXPECT_LT(msg.size(), 300u) << msg.substr(0, 400);
        for (const std::string& n : needles)
            EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg.substr(0, 400);
        return msg;
    }
    test::temp_dir dir_;
};

TEST_F(json_readers, config_json_with_rope_scaling_nested_a_million_levels) {
    const auto path = write("config.json", llama_config(nested_json_arrays(1'000'000)));
    EXPECT_GT(std::filesystem::file_size(path), 2'000'000u);
    expect_short_error([&] { (void)load_hf_model(dir_.path()); }, {"config.json", "deeper than 64 levels"});
    // Objects too: {"type": {"type": ...}}.
    std::string objects;
    for (int i = 0; i < 1'000'000; ++i) objects += "{\"type\":";
    objects += "1" + std::string(1'000'000, '}');
    write("config.json", llama_config(objects));
    expect_short_error([&] { (void)load_hf_model(dir_.path()); }, {"config.json", "deeper than 64 levels"});
}

// A syntax error names the file, the line and column (from 1) and the byte offset: here the '}' on
// line 3, column 8, 19 bytes into the file.
TEST_F(json_readers, syntax_errors_name_the_line_and_column) {
    const std::string broken = "{\n  \"a\": 1,\n  \"b\": }\n}";
    const std::string at = ": not valid JSON at line 3, column 8 (byte offset 0x13): syntax error while parsing value";
    write("config.json", broken);
    expect_short_error([&] { (void)load_hf_model(dir_.path()); }, {"config.json" + at});
    const auto tokenizer_json = write("tokenizer.json", broken);
    expect_short_error([&] { (void)load_hf_tokenizer(tokenizer_json); }, {"tokenizer.json" + at});
    write("tokenizer.json", small_tokenizer_json());
    const auto config = write("tokenizer_config.json", broken);
    expect_short_error([&] { (void)load_hf_tokenizer(tokenizer_json); }, {"tokenizer_config.json" + at});
    expect_short_error([&] { (void)load_chat_template_from_tokenizer_config(config); }, {"tokenizer_config.json" + at});
}

TEST_F(json_readers, config_json_quotes_long_values_short) {
    const std::string big(100'000, 'y');
    write("config.json", llama_config(R"({"type": ")" + big + R"(", "factor": 2.0})"));
    expect_short_error([&] { (void)load_hf_model(dir_.path()); },
                       {"config.json: key 'rope_scaling': RoPE scaling 'yyyy", "...'"});
    std::string config = llama_config("null");
    config.replace(config.find("LlamaForCausalLM"), 16, big);
    write("config.json", config);
    expect_short_error([&] { (void)load_hf_model(dir_.path()); }, {"config.json: architecture 'yyyy"});
    // A syntax error inside a long string literal (a raw newline in it).
    write("config.json", llama_config("\"" + big + "\n\""));
    expect_short_error([&] { (void)load_hf_model(dir_.path()); }, {"config.json: not valid JSON"});
}

TEST_F(json_readers, safetensors_index_nested_a_million_levels) {
    write("config.json", llama_config("null"));
    write("model.safetensors.index.json", "{\"weight_map\": " + nested_json_arrays(1'000'000) + "}");
    expect_short_error([&] { (void)load_hf_model(dir_.path()); },
                       {"model.safetensors.index.json", "deeper than 64 levels"});
    write("model.safetensors.index.json", "{\"weight_map\": {\"" + std::string(100'000, 't') + "\": 1}}");
    expect_short_error([&] { (void)load_hf_model(dir_.path()); }, {"model.safetensors.index.json: weight_map['tttt"});
}

TEST_F(json_readers, tokenizer_json_nested_a_million_levels) {
    const auto small = write("tokenizer.json", small_tokenizer_json());
    EXPECT_EQ(load_hf_tokenizer(small).encode("ab", false).size(), 1u);  // the file is good without the nesting
    const auto path = write("tokenizer.json", small_tokenizer_json(nested_json_arrays(1'000'000)));
    expect_short_error([&] { (void)load_hf_tokenizer(path); }, {"tokenizer.json", "deeper than 64 levels"});
    EXPECT_THROW((void)load_tokenizer_file(path), format_error);
}

TEST_F(json_readers, tokenizer_json_quotes_a_bad_merge_short) {
    // 60 levels are allowed, and the merge is quoted, not dumped whole.
    const auto deep = write("tokenizer.json", small_tokenizer_json("[" + nested_json_arrays(60) + "]"));
    expect_short_error([&] { (void)load_hf_tokenizer(deep); },
                       {"tokenizer.json: key 'model.merges[0]'", "[[[[[[[[[...]]]]]]]]]"});
    std::string ones = "1";
    for (int i = 0; i < 100'000; ++i) ones += ",1";
    const auto wide = write("tokenizer.json", small_tokenizer_json("[[" + ones + "]]"));
    expect_short_error([&] { (void)load_hf_tokenizer(wide); }, {"tokenizer.json: key 'model.merges[0]'", "found [1,1"});
    // A number of 200 000 digits overflows a double: nlohmann's out_of_range, reported as a format_error.
    const auto huge = write("tokenizer.json", small_tokenizer_json("[" + std::string(200'000, '1') + "]"));
    expect_short_error([&] { (void)load_hf_tokenizer(huge); }, {"tokenizer.json: not valid JSON", "number overflow"});
}

TEST_F(json_readers, tokenizer_config_json_nested_a_million_levels) {
    const auto tokenizer_json = write("tokenizer.json", small_tokenizer_json());
    const auto config = write("tokenizer_config.json", "{\"eos_token\": " + nested_json_arrays(1'000'000) + "}");
    // Read beside tokenizer.json for the special tokens...
    expect_short_error([&] { (void)load_hf_tokenizer(tokenizer_json); },
                       {"tokenizer_config.json", "deeper than 64 levels"});
    // ...and for the chat template.
    expect_short_error([&] { (void)load_chat_template_from_tokenizer_config(config); },
                       {"tokenizer_config.json", "deeper than 64 levels"});
    write("tokenizer_config.json", "{\"chat_template\": " + nested_json_arrays(1'000'000) + "}");
    expect_short_error([&] { (void)load_chat_template_from_tokenizer_config(config); },
                       {"tokenizer_config.json", "deeper than 64 levels"});
    // A long token name is quoted short.
    write("tokenizer_config.json", "{\"eos_token\": \"" + std::string(100'000, 'e') + "\"}");
    expect_short_error([&] { (void)load_hf_tokenizer(tokenizer_json); },
                       {"tokenizer_config.json: key 'eos_token': expected a token of the vocabulary, found 'eeee"});
    // A template that nests 64 levels is still read (the limit is a depth, not a size).
    write("tokenizer_config.json", "{\"x\": " + nested_json_arrays(63) + ", \"chat_template\": \"{{ 1 }}\"}");
    EXPECT_TRUE(load_chat_template_from_tokenizer_config(config).has_value());
}

TEST_F(json_readers, gpt2_encoder_json_nested_a_million_levels) {
    const auto encoder = write("encoder.json", "{\"a\": " + nested_json_arrays(1'000'000) + "}");
    const auto merges = write("vocab.bpe", "#version: 0.2\n");
    expect_short_error([&] { (void)load_gpt2_tokenizer(encoder, merges); }, {"encoder.json", "deeper than 64 levels"});
    write("encoder.json", "{\"" + std::string(100'000, 'k') + "\": -1}");
    expect_short_error([&] { (void)load_gpt2_tokenizer(encoder, merges); }, {"encoder.json: key 'kkkk", "found -1"});
}

}  // namespace
}  // namespace nexttok

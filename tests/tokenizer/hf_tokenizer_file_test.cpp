// Hugging Face tokenizer.json. The data folder has no tokenizer.json, so the tests write them, in
// the layouts the released GPT-2, Llama 3 and Qwen2 files use, from the reference vocabularies
// (encoder.json + vocab.bpe, the Qwen2 test model's GGUF); the oracles are then the same reference
// ids as for those files. Malformed and unsupported files must give clear errors.
#include <nexttok/io/gguf.hpp>
#include <nexttok/tokenizer.hpp>
#include <nexttok/tokenizer/detail/byte_level.hpp>

#include "file_patch.hpp"
#include "test_data.hpp"
#include "tokenizer_test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace nexttok {
namespace {

using json = nlohmann::json;
using ids = std::vector<token_id>;

json read_json(const std::filesystem::path& path) { return json::parse(std::ifstream(path)); }

void write_json(const std::filesystem::path& path, const json& j) { std::ofstream(path) << j.dump(); }

// vocab.bpe's merges, without the #version header.
std::vector<std::string> merge_lines(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && !(lines.empty() && line.starts_with("#version"))) lines.push_back(line);
    return lines;
}

json byte_level_pre_tokenizer() {
    return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
}
json split_then_byte_level(const std::string& regex) {
    return {
        {"type", "Sequence"},
        {"pretokenizers",
         json::array(
             {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}})}};
}
json added(token_id id, const std::string& content, bool special = true) {
    return {{"id", id},        {"content", content}, {"special", special},
            {"lstrip", false}, {"rstrip", false},    {"normalized", false}};
}

// GPT-2's layout: ByteLevel pre-tokenizer with its regex, merges as "a b" strings.
std::filesystem::path write_gpt2_json(const test::temp_dir& dir) {
    json merges = json::array();
    for (const std::string& m : merge_lines(test::data_path(test::gpt2_merges))) merges.push_back(m);
    const json j = {{"version", "1.0"},
                    {"added_tokens", json::array({added(50256, "<|endoftext|>")})},
                    {"normalizer", nullptr},
                    {"pre_tokenizer", byte_level_pre_tokenizer()},
                    {"post_processor", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}}},
                    {"decoder", {{"type", "ByteLevel"}}},
                    {"model",
                     {{"type", "BPE"},
                      {"dropout", nullptr},
                      {"unk_token", nullptr},
                      {"continuing_subword_prefix", ""},
                      {"end_of_word_suffix", ""},
                      {"fuse_unk", false},
                      {"byte_fallback", false},
                      {"vocab", read_json(test::data_path(test::gpt2_encoder))},
                      {"merges", merges}}}};
    const auto path = dir.path() / "gpt2-tokenizer.json";
    write_json(path, j);
    return path;
}

// Llama 3's layout: Split(regex) + ByteLevel, ignore_merges, merges as [a, b] pairs, BOS from the
// post-processor's template.
std::filesystem::path write_llama3_json(const test::temp_dir& dir) {
    json merges = json::array();
    for (const std::string& m : merge_lines(test::data_path(test::llama3_merges))) {
        const auto space = m.find(' ', 1);
        merges.push_back(json::array({m.substr(0, space), m.substr(space + 1)}));
    }
    const std::string regex = read_json(test::data_path("tokenizers/llama3/test_vectors.json"))["pretokenizer_regex"];
    const json bos_template = {
        {"type", "TemplateProcessing"},
        {"single", json::array({{{"SpecialToken", {{"id", "<|begin_of_text|>"}, {"type_id", 0}}}},
                                {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
        {"special_tokens", {{"<|begin_of_text|>", {{"id", "<|begin_of_text|>"}, {"ids", {128000}}}}}}};
    const json j = {
        {"added_tokens", json::array({added(128000, "<|begin_of_text|>"), added(128001, "<|end_of_text|>")})},
        {"normalizer", nullptr},
        {"pre_tokenizer", split_then_byte_level(regex)},
        {"post_processor",
         {{"type", "Sequence"}, {"processors", json::array({{{"type", "ByteLevel"}}, bos_template})}}},
        {"decoder", {{"type", "ByteLevel"}}},
        {"model",
         {{"type", "BPE"},
          {"ignore_merges", true},
          {"byte_fallback", false},
          {"vocab", read_json(test::data_path(test::llama3_encoder))},
          {"merges", merges}}}};
    const auto path = dir.path() / "llama3-tokenizer.json";
    write_json(path, j);
    return path;
}

class hf_tokenizer_file : public ::testing::Test {
protected:
    void expect_error_of(const std::string& file_name, const std::string& content,
                         const std::vector<std::string>& needles, bool unsupported = false) {
        const auto path = dir_.path() / file_name;
        std::ofstream(path) << content;
        try {
            (void)load_hf_tokenizer(path);
            ADD_FAILURE() << "no exception for " << content.substr(0, 200);
        } catch (const format_error& e) {
            EXPECT_FALSE(unsupported) << e.what();
            for (const std::string& n : needles)
                EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << "'" << n << "' not in: " << e.what();
        } catch (const unsupported_error& e) {
            EXPECT_TRUE(unsupported) << e.what();
            for (const std::string& n : needles)
                EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << "'" << n << "' not in: " << e.what();
        }
    }
    // 256 byte symbols, "ab" (256), "<|end|>" (257, added special); merge "a b".
    static json small(const std::function<void(json&)>& edit = {}) {
        json vocab = json::object();
        for (unsigned b = 0; b < 256; ++b)
            vocab[std::string(detail::byte_level_table::get().symbol(static_cast<unsigned char>(b)))] = b;
        vocab["ab"] = 256;
        json j = {{"added_tokens", json::array({added(257, "<|end|>")})},
                  {"pre_tokenizer", byte_level_pre_tokenizer()},
                  {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array({"a b"})}}}};
        if (edit) edit(j);
        return j;
    }
    test::temp_dir dir_;
};

TEST_F(hf_tokenizer_file, gpt2_layout_gives_the_reference_ids) {
    NEXTTOK_REQUIRE_DATA(test::gpt2_encoder);
    NEXTTOK_REQUIRE_DATA(test::gpt2_vocab);
    const tokenizer tok = load_hf_tokenizer(write_gpt2_json(dir_));
    EXPECT_EQ(tok.vocab_size(), 50257u);
    EXPECT_TRUE(tok.is_control(50256));
    EXPECT_EQ(tok.eos(), 50256);  // <|endoftext|>, GPT-2's convention
    EXPECT_FALSE(tok.default_add_bos());
    const auto cases = test::read_vocab_test_cases(test::data_path(test::gpt2_vocab));
    ASSERT_EQ(cases.size(), 46u);
    for (std::size_t i = 0; i < cases.size(); ++i) {
        EXPECT_EQ(tok.encode(cases[i].text, false), cases[i].expected) << "case " << i;
        EXPECT_EQ(tok.decode(cases[i].expected), cases[i].text) << "case " << i;
    }
}

TEST_F(hf_tokenizer_file, llama3_layout_gives_the_reference_ids) {
    NEXTTOK_REQUIRE_DATA(test::llama3_encoder);
    NEXTTOK_REQUIRE_DATA("tokenizers/llama3/test_vectors.json");
    const tokenizer tok = load_hf_tokenizer(write_llama3_json(dir_));
    ASSERT_NE(tok.bpe(), nullptr);
    EXPECT_EQ(tok.bpe()->pre().kind(), pre_tokenizer_kind::llama3);  // recognised from the pattern
    EXPECT_TRUE(tok.bpe()->options().ignore_merges);
    EXPECT_EQ(tok.bos(), 128000);
    EXPECT_TRUE(tok.default_add_bos());
    const auto cases = test::read_vocab_test_cases(test::data_path(test::llama_bpe_vectors));
    ASSERT_EQ(cases.size(), 46u);
    for (std::size_t i = 0; i < cases.size(); ++i) {
        EXPECT_EQ(tok.encode(cases[i].text, false), cases[i].expected) << "case " << i;
        EXPECT_EQ(tok.decode(cases[i].expected), cases[i].text) << "case " << i;
    }
    EXPECT_EQ(tok.encode("<|begin_of_text|>A<|end_of_text|>B!", false, true), (ids{128000, 32, 128001, 33, 0}));
}

// Qwen2's layout (NFC normalizer, Split with its own regex) over the Qwen2 test model's vocabulary,
// with a tokenizer_config.json beside it naming EOS.
TEST_F(hf_tokenizer_file, qwen2_layout_and_tokenizer_config) {
    NEXTTOK_REQUIRE_DATA(test::tiny_qwen2_gguf);
    const gguf_file gguf(test::data_path(test::tiny_qwen2_gguf));
    const auto tokens = gguf.get_string_array("tokenizer.ggml.tokens");
    json vocab = json::object();
    json added_tokens = json::array();
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (i >= 508)
            added_tokens.push_back(added(static_cast<token_id>(i), std::string(tokens[i])));
        else
            vocab[std::string(tokens[i])] = i;
    }
    json merges = json::array();
    for (const auto m : gguf.get_string_array("tokenizer.ggml.merges")) merges.push_back(std::string(m));
    const json j = {{"added_tokens", added_tokens},
                    {"normalizer", {{"type", "NFC"}}},
                    {"pre_tokenizer", split_then_byte_level(std::string(pre_tokenizer::qwen2_pattern))},
                    {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}};
    write_json(dir_.path() / "tokenizer.json", j);
    write_json(dir_.path() / "tokenizer_config.json",
               {{"bos_token", nullptr}, {"eos_token", {{"content", "<|im_end|>"}}}, {"add_bos_token", false}});

    const tokenizer tok = load_hf_tokenizer(dir_.path() / "tokenizer.json");
    EXPECT_EQ(tok.bpe()->pre().kind(), pre_tokenizer_kind::qwen2);
    EXPECT_EQ(tok.encode("Hello world, the model", false), (ids{72, 101, 260, 111, 326, 267, 370, 44, 314, 349}));
    EXPECT_EQ(tok.eos(), 510);  // <|im_end|>, from tokenizer_config.json
    EXPECT_EQ(tok.bos(), no_token);
}

// StarCoder's layout: Digits(individual_digits) then ByteLevel with GPT-2's expression, which is
// llama.cpp's "starcoder" list; Digits without individual_digits keeps number runs.
TEST_F(hf_tokenizer_file, digits_then_byte_level_is_star_coders_pre_tokenizer) {
    const auto digits_then_byte_level = [](bool individual) {
        return json{{"type", "Sequence"},
                    {"pretokenizers", json::array({{{"type", "Digits"}, {"individual_digits", individual}},
                                                   byte_level_pre_tokenizer()})}};
    };
    write_json(dir_.path() / "starcoder.json",
               small([&](json& j) { j["pre_tokenizer"] = digits_then_byte_level(true); }));
    const tokenizer tok = load_hf_tokenizer(dir_.path() / "starcoder.json");
    EXPECT_EQ(tok.bpe()->pre().kind(), pre_tokenizer_kind::starcoder);
    EXPECT_EQ(tok.bpe()->pre().split("abc 2024"), (std::vector<std::string_view>{"abc", " ", "2", "0", "2", "4"}));

    write_json(dir_.path() / "runs.json", small([&](json& j) { j["pre_tokenizer"] = digits_then_byte_level(false); }));
    const tokenizer runs = load_hf_tokenizer(dir_.path() / "runs.json");
    EXPECT_EQ(runs.bpe()->pre().kind(), pre_tokenizer_kind::custom);
    EXPECT_EQ(runs.bpe()->pre().split("abc 2024"), (std::vector<std::string_view>{"abc", " ", "2024"}));
}

TEST_F(hf_tokenizer_file, added_tokens_and_a_custom_expression) {
    write_json(dir_.path() / "custom.json", small([](json& j) {
                   j["pre_tokenizer"] = split_then_byte_level(R"(\p{L}|[^\p{L}]+)");  // one letter per piece
                   j["added_tokens"].push_back(added(258, "<user>", /*special=*/false));
               }));
    const tokenizer tok = load_hf_tokenizer(dir_.path() / "custom.json");
    EXPECT_EQ(tok.bpe()->pre().kind(), pre_tokenizer_kind::custom);
    EXPECT_EQ(tok.vocab_size(), 259u);
    EXPECT_EQ(tok.encode("ab", false), (ids{'a', 'b'}));  // never merged across pieces
    EXPECT_EQ(tok.encode("<user><|end|>", false),
              (ids{258, '<', '|', 'e', 'n', 'd', '|', '>'}));  // user-defined: always
    EXPECT_EQ(tok.encode("<user><|end|>", false, true), (ids{258, 257}));
    EXPECT_EQ(tok.decode(ids{258, 257}), "<user>");

    write_json(dir_.path() / "small.json", small());
    EXPECT_EQ(load_hf_tokenizer(dir_.path() / "small.json").encode("ab ab", false), (ids{256, ' ', 256}));
}

TEST_F(hf_tokenizer_file, malformed_files_are_format_errors) {
    expect_error_of("array.json", "[1, 2]", {"array.json", "JSON object", "array"});
    expect_error_of("no-model.json", R"({"version": "1.0", "added_tokens": []})", {"no-model.json", "'model'"});
    expect_error_of("truncated.json", R"({"model": {"type": "BPE", "vocab": {"a": )", {"truncated.json", "offset 0x"});
    expect_error_of("model-string.json", R"({"model": "BPE"})", {"'model'", "object"});
    expect_error_of("bad-merge.json", small([](json& j) { j["model"]["merges"].push_back("a zz"); }).dump(),
                    {"bad-merge.json", "model.merges[1]", "'zz'"});
    expect_error_of("merge-number.json", small([](json& j) { j["model"]["merges"].push_back(7); }).dump(),
                    {"model.merges[1]"});
    expect_error_of("negative-id.json", small([](json& j) { j["model"]["vocab"]["x"] = -3; }).dump(),
                    {"model.vocab.x"});
    expect_error_of("duplicate-id.json", small([](json& j) { j["model"]["vocab"]["x"] = 5; }).dump(), {"id 5 again"});
    expect_error_of("huge-id.json", small([](json& j) { j["model"]["vocab"]["x"] = 2000000000; }).dump(),
                    {"2000000000"});
    expect_error_of("bad-regex.json",
                    small([](json& j) { j["pre_tokenizer"] = split_then_byte_level("(\\p{L}"); }).dump(),
                    {"bad-regex.json", "pre_tokenizer", "does not compile"});
    EXPECT_THROW((void)load_hf_tokenizer(dir_.path() / "absent.json"), io_error);
}

// A special token that is not in the vocabulary is refused, naming the file and the field it came from.
TEST_F(hf_tokenizer_file, special_tokens_outside_the_vocabulary_name_their_source) {
    const json processor = {{"type", "TemplateProcessing"},
                            {"single", json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                                                    {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                                                    {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}}})}};
    expect_error_of(
        "processor.json", small([&](json& j) { j["post_processor"] = processor; }).dump(),
        {"processor.json: key 'post_processor.single[0].SpecialToken.id': expected a token of the vocabulary, "
         "found '<s>'"});
    expect_error_of("unk.json", small([](json& j) { j["model"]["unk_token"] = "<unk>"; }).dump(),
                    {"unk.json: key 'model.unk_token': expected a token of the vocabulary, found '<unk>'"});
    // tokenizer_config.json overrides the post-processor's tokens, and its own are checked as well.
    write_json(dir_.path() / "tokenizer_config.json",
               {{"bos_token", "<|end|>"}, {"eos_token", {{"content", "<|im_end|>"}}}});
    expect_error_of(
        "configured.json", small([&](json& j) { j["post_processor"] = processor; }).dump(),
        {"tokenizer_config.json: key 'eos_token.content': expected a token of the vocabulary, found '<|im_end|>'"});
    write_json(dir_.path() / "tokenizer_config.json", {{"bos_token", "<|end|>"}, {"eos_token", "<|end|>"}});
    const tokenizer tok = load_hf_tokenizer(dir_.path() / "configured.json");
    EXPECT_EQ(tok.bos(), 257);
    EXPECT_EQ(tok.eos(), 257);
    std::filesystem::remove(dir_.path() / "tokenizer_config.json");
}

TEST_F(hf_tokenizer_file, what_is_not_byte_level_bpe_is_unsupported) {
    expect_error_of("unigram.json", small([](json& j) { j["model"]["type"] = "Unigram"; }).dump(), {"'Unigram'"}, true);
    expect_error_of("fallback.json", small([](json& j) { j["model"]["byte_fallback"] = true; }).dump(),
                    {"byte_fallback"}, true);
    expect_error_of("metaspace.json", small([](json& j) {
                                          j["pre_tokenizer"] = {{"type", "Metaspace"}};
                                      }).dump(),
                    {"'Metaspace'"}, true);
    expect_error_of("prefix.json", small([](json& j) { j["pre_tokenizer"]["add_prefix_space"] = true; }).dump(),
                    {"add_prefix_space"}, true);
    expect_error_of("lowercase.json", small([](json& j) {
                                          j["normalizer"] = {{"type", "Lowercase"}};
                                      }).dump(),
                    {"'Lowercase'"}, true);
}

}  // namespace
}  // namespace nexttok

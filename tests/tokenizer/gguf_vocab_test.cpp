// The GGUF tokenizer loader on small GGUF files written here (metadata only, no tensors): the
// defaults llama.cpp applies when a key is absent, and a format_error naming the key and its offset
// for every inconsistent table.
#include <nexttok/io/gguf_writer.hpp>
#include <nexttok/tokenizer/gguf_vocab.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

namespace nexttok {
namespace {

// <unk> <s> </s> <0x00>..<0xFF> "▁" "a" "▁a" "b"
gguf_writer small_llama_vocab(
    const std::function<void(std::vector<std::string>&, std::vector<float>&, std::vector<std::int32_t>&)>& edit = {}) {
    std::vector<std::string> tokens{"<unk>", "<s>", "</s>"};
    std::vector<std::int32_t> types{2, 3, 3};
    for (int b = 0; b < 256; ++b) {
        char text[8];
        std::snprintf(text, sizeof text, "<0x%02X>", b);
        tokens.emplace_back(text);
        types.push_back(6);
    }
    for (const char* t : {"\xE2\x96\x81", "a",
                          "\xE2\x96\x81"
                          "a",
                          "b"}) {
        tokens.emplace_back(t);
        types.push_back(1);
    }
    std::vector<float> scores(tokens.size(), 0.0f);
    scores[259] = -1;
    scores[260] = -2;
    scores[261] = -3;
    scores[262] = -4;
    if (edit) edit(tokens, scores, types);
    gguf_writer w;
    w.add_string("tokenizer.ggml.model", "llama");
    w.add_strings("tokenizer.ggml.tokens", tokens);
    w.add_f32s("tokenizer.ggml.scores", scores);
    w.add_i32s("tokenizer.ggml.token_type", types);
    return w;
}

class gguf_vocab : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ =
            std::filesystem::temp_directory_path() / ("nexttok_gguf_vocab_" + std::to_string(::getpid()) + "_" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    tokenizer load(const gguf_writer& w) const {
        w.write(dir_ / "vocab.gguf");
        return load_tokenizer(gguf_file(dir_ / "vocab.gguf"));
    }
    // Expects load(w) to throw format_error naming the file, `key`, an offset and `needle`.
    void expect_format_error(const gguf_writer& w, const std::string& key, const std::string& needle) const {
        try {
            (void)load(w);
            ADD_FAILURE() << "no exception";
        } catch (const format_error& e) {
            const std::string what = e.what();
            for (const std::string& part : {std::string("vocab.gguf"), key, std::string("offset 0x"), needle})
                EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' not in: " << what;
        }
    }

    std::filesystem::path dir_;
};

// Absent keys take llama.cpp's SentencePiece defaults: bos 1, eos 2, unk 0, BOS added, dummy prefix.
TEST_F(gguf_vocab, absent_keys_take_llama_cpp_defaults) {
    const tokenizer tok = load(small_llama_vocab());
    EXPECT_EQ(tok.vocab_size(), 263u);
    EXPECT_EQ(tok.bos(), 1);
    EXPECT_EQ(tok.eos(), 2);
    EXPECT_EQ(tok.unk(), 0);
    EXPECT_TRUE(tok.default_add_bos());
    EXPECT_FALSE(tok.default_add_eos());
    EXPECT_EQ(tok.encode("a a", true), (std::vector<token_id>{1, 261, 261}));
}

TEST_F(gguf_vocab, reads_flags_and_special_ids) {
    gguf_writer w = small_llama_vocab();
    w.add_bool("tokenizer.ggml.add_space_prefix", false);
    w.add_bool("tokenizer.ggml.add_bos_token", false);
    w.add_bool("tokenizer.ggml.add_eos_token", true);
    w.add_u32("tokenizer.ggml.eos_token_id", 0xFFFFFFFF);  // "none"
    w.add_i32("tokenizer.ggml.bos_token_id", 2);
    const tokenizer tok = load(w);
    EXPECT_FALSE(tok.default_add_bos());
    EXPECT_TRUE(tok.default_add_eos());
    EXPECT_EQ(tok.eos(), no_token);
    EXPECT_EQ(tok.bos(), 2);
    EXPECT_EQ(tok.encode("a a", false), (std::vector<token_id>{260, 261}));  // no dummy prefix
    EXPECT_EQ(tok.decode(std::vector<token_id>{261, 261}), " a a");          // and none to drop
}

TEST_F(gguf_vocab, scores_of_another_length_are_a_format_error) {
    expect_format_error(small_llama_vocab([](auto&, auto& scores, auto&) { scores.pop_back(); }),
                        "tokenizer.ggml.scores", "263 scores");
}

TEST_F(gguf_vocab, an_unknown_token_type_is_a_format_error) {
    expect_format_error(small_llama_vocab([](auto&, auto&, auto& types) { types[260] = 9; }),
                        "tokenizer.ggml.token_type", "token 260 has type 9");
}

TEST_F(gguf_vocab, a_byte_token_without_a_byte_text_is_a_format_error) {
    expect_format_error(small_llama_vocab([](auto& tokens, auto&, auto&) { tokens[10] = "<0xZZ>"; }),
                        "tokenizer.ggml.tokens", "byte token 10");
}

TEST_F(gguf_vocab, a_special_id_out_of_range_is_a_format_error) {
    gguf_writer w = small_llama_vocab();
    w.add_u32("tokenizer.ggml.bos_token_id", 263);
    expect_format_error(w, "tokenizer.ggml.bos_token_id", "263");
}

// "gpt2" (byte-level BPE) is tested in bpe_gguf_test.cpp.
TEST_F(gguf_vocab, other_tokenizer_models_are_unsupported) {
    gguf_writer w;
    w.add_string("tokenizer.ggml.model", "bert");
    w.add_strings("tokenizer.ggml.tokens", {"a"});
    try {
        (void)load(w);
        ADD_FAILURE() << "no exception";
    } catch (const unsupported_error& e) {
        EXPECT_NE(std::string(e.what()).find("'bert'"), std::string::npos) << e.what();
    }
}

TEST_F(gguf_vocab, a_missing_model_key_is_a_format_error) {
    gguf_writer w;
    w.add_strings("tokenizer.ggml.tokens", {"a"});
    EXPECT_THROW((void)load(w), format_error);
}

}  // namespace
}  // namespace nexttok

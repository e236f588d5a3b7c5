// Byte-level BPE from GGUF (tokenizer.ggml.model = "gpt2"): the vocabulary inside the random Qwen2
// and GPT-2 test models, and small vocabularies written here whose merges have a closed-form result
// (rank order, leftmost ties, ignore_merges), plus a clear error for every inconsistent file.
#include <nexttok/io/gguf.hpp>
#include <nexttok/io/gguf_writer.hpp>
#include <nexttok/tokenizer.hpp>
#include <nexttok/tokenizer/detail/byte_level.hpp>

#include "test_data.hpp"
#include "tokenizer_test_util.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <unistd.h>

namespace nexttok {
namespace {

using ids = std::vector<token_id>;

TEST(bpe_gguf, the_tiny_qwen2_models_vocabulary) {
    NEXTTOK_REQUIRE_DATA(test::tiny_qwen2_gguf);
    const tokenizer tok = load_tokenizer(gguf_file(test::data_path(test::tiny_qwen2_gguf)));
    ASSERT_NE(tok.bpe(), nullptr);
    EXPECT_EQ(tok.bpe()->pre().kind(), pre_tokenizer_kind::qwen2);
    EXPECT_EQ(tok.vocab_size(), 512u);
    EXPECT_EQ(tok.bpe()->n_merges(), 252u);
    EXPECT_FALSE(tok.default_add_bos());
    EXPECT_EQ(tok.eos(), 508);

    const ids expected{72, 101, 260, 111, 326, 267, 370, 44, 314, 349};
    EXPECT_EQ(tok.encode("Hello world, the model", /*add_bos=*/false), expected);
    EXPECT_EQ(tok.decode(expected), "Hello world, the model");
    EXPECT_EQ(tok.token_to_piece(326), " w");  // "Ġw": the byte-level space
    EXPECT_EQ(tok.token_to_piece(314), " the");

    // The chat markers are control tokens: parsed only when asked.
    EXPECT_EQ(tok.encode("<|im_start|>Hello", false, /*parse_special=*/true).front(), 509);
    EXPECT_EQ(tok.decode(tok.encode("<|im_start|>Hello", false)), "<|im_start|>Hello");
    EXPECT_EQ(tok.decode(ids{509, 72}), "H");  // control tokens decode to nothing
}

// The GPT-2 test model carries the same vocabulary with the GPT-2 expression; on this text both
// expressions cut the same pieces.
TEST(bpe_gguf, the_tiny_gpt2_models_vocabulary) {
    NEXTTOK_REQUIRE_DATA("models/random/tiny-gpt2-f32.gguf");
    const tokenizer tok = load_tokenizer(gguf_file(test::data_path("models/random/tiny-gpt2-f32.gguf")));
    EXPECT_EQ(tok.bpe()->pre().kind(), pre_tokenizer_kind::gpt2);
    EXPECT_EQ(tok.encode("Hello world, the model", false), (ids{72, 101, 260, 111, 326, 267, 370, 44, 314, 349}));
}

// The 256 byte-level symbols, then `extra` texts.
std::vector<std::string> byte_level_tokens(const std::vector<std::string>& extra) {
    std::vector<std::string> tokens;
    for (unsigned b = 0; b < 256; ++b)
        tokens.emplace_back(detail::byte_level_table::get().symbol(static_cast<unsigned char>(b)));
    tokens.insert(tokens.end(), extra.begin(), extra.end());
    return tokens;
}

class bpe_gguf_file : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ =
            std::filesystem::temp_directory_path() / ("nexttok_bpe_gguf_" + std::to_string(::getpid()) + "_" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // ids 256.. are a, b, c, ab, bc, abc
    static gguf_writer vocab(const std::vector<std::string>& merges, const char* pre = "gpt-2") {
        gguf_writer w;
        w.add_string("tokenizer.ggml.model", "gpt2");
        if (pre != nullptr) w.add_string("tokenizer.ggml.pre", pre);
        w.add_strings("tokenizer.ggml.tokens", byte_level_tokens({"ab", "bc", "abc", "<|end|>"}));
        w.add_strings("tokenizer.ggml.merges", merges);
        return w;
    }
    tokenizer load(const gguf_writer& w) const {
        w.write(dir_ / "bpe.gguf");
        return load_tokenizer(gguf_file(dir_ / "bpe.gguf"));
    }
    template <class Error>
    void expect_error(const gguf_writer& w, const std::vector<std::string>& needles) const {
        try {
            (void)load(w);
            ADD_FAILURE() << "no exception";
        } catch (const Error& e) {
            for (const std::string& n : needles)
                EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << "'" << n << "' not in: " << e.what();
        }
    }

    static constexpr token_id a = 'a', b = 'b', c = 'c', ab = 256, bc = 257, abc = 258;
    std::filesystem::path dir_;
};

// Lower rank merges first: with "b c" ranked before "a b", "abc" is a + bc; the other way round, ab + c.
TEST_F(bpe_gguf_file, the_lower_rank_merges_first) {
    EXPECT_EQ(load(vocab({"b c", "a b"})).encode("abc", false), (ids{a, bc}));
    EXPECT_EQ(load(vocab({"a b", "b c"})).encode("abc", false), (ids{ab, c}));
    EXPECT_EQ(load(vocab({"a b", "b c", "ab c"})).encode("abc", false), (ids{abc}));
}

// Equal ranks (the same rule at two places): the leftmost pair merges first.
TEST_F(bpe_gguf_file, ties_merge_the_leftmost_pair) {
    gguf_writer w;
    w.add_string("tokenizer.ggml.model", "gpt2");
    w.add_strings("tokenizer.ggml.tokens", byte_level_tokens({"aa"}));
    w.add_strings("tokenizer.ggml.merges", {"a a"});
    EXPECT_EQ(load(w).encode("aaa", false), (ids{256, 'a'}));
    EXPECT_EQ(load(w).encode("aaaa", false), (ids{256, 256}));
}

// Llama 3's rule: a pre-token that is a whole token is that token, with or without a merge path.
TEST_F(bpe_gguf_file, ignore_merges_emits_a_whole_pre_token_that_is_a_token) {
    const tokenizer plain = load(vocab({"a b"}, "gpt-2"));
    EXPECT_EQ(plain.encode("abc", false), (ids{ab, c}));
    const tokenizer llama3 = load(vocab({"a b"}, "llama-bpe"));
    EXPECT_EQ(llama3.encode("abc", false), (ids{abc}));
    EXPECT_TRUE(llama3.bpe()->options().ignore_merges);
    EXPECT_EQ(llama3.decode(ids{abc}), "abc");
}

// As llama.cpp: an absent pre is "default", llama.cpp's fallback list (not GPT-2's expression).
TEST_F(bpe_gguf_file, an_absent_pre_is_llama_cpps_default) {
    const tokenizer tok = load(vocab({"a b"}, nullptr));
    EXPECT_EQ(tok.bpe()->pre().kind(), pre_tokenizer_kind::llama_cpp_default);
    EXPECT_EQ(tok.bos(), no_token);  // BPE has no default special ids
    EXPECT_EQ(tok.eos(), no_token);
    EXPECT_THROW((void)tok.encode("a", /*add_bos=*/true), invalid_argument_error);
}

TEST_F(bpe_gguf_file, special_ids_and_flags_from_the_file) {
    gguf_writer w = vocab({"a b"}, "llama-bpe");
    w.add_u32("tokenizer.ggml.bos_token_id", 259);
    w.add_i32s("tokenizer.ggml.token_type", [] {
        std::vector<std::int32_t> t(260, 1);
        t[259] = 3;
        return t;
    }());
    const tokenizer tok = load(w);
    EXPECT_TRUE(tok.default_add_bos());  // Llama 3's default
    EXPECT_EQ(tok.encode("ab<|end|>", true), (ids{259, ab, '<', '|', 'e', 'n', 'd', '|', '>'}));
    EXPECT_EQ(tok.encode("ab<|end|>", true, /*parse_special=*/true), (ids{259, ab, 259}));
}

TEST_F(bpe_gguf_file, an_unknown_pre_tokenizer_is_unsupported_and_named) {
    // The message names the file, the key, the name and lists the known names.
    expect_error<unsupported_error>(vocab({"a b"}, "gemma4"),
                                    {"bpe.gguf", "tokenizer.ggml.pre", "'gemma4'", "supported: 'default'",
                                     "'deepseek-llm'", "'starcoder'", "'tekken'", "'mellum2'"});
}

TEST_F(bpe_gguf_file, missing_merges_are_a_format_error) {
    gguf_writer w;
    w.add_string("tokenizer.ggml.model", "gpt2");
    w.add_strings("tokenizer.ggml.tokens", byte_level_tokens({}));
    expect_error<format_error>(w, {"bpe.gguf", "tokenizer.ggml.merges", "missing"});
}

TEST_F(bpe_gguf_file, a_merge_naming_an_unknown_token_is_a_format_error) {
    expect_error<format_error>(vocab({"a b", "a xyz"}),
                               {"bpe.gguf", "tokenizer.ggml.merges", "offset 0x", "merge 1", "'xyz'"});
    expect_error<format_error>(vocab({"a c"}), {"merge 0", "merged text 'ac'"});
    expect_error<format_error>(vocab({"ab"}), {"merge 0", "'<left> <right>'"});
}

TEST_F(bpe_gguf_file, add_bos_without_a_bos_id_is_a_format_error) {
    gguf_writer w = vocab({"a b"});
    w.add_bool("tokenizer.ggml.add_bos_token", true);
    expect_error<format_error>(w, {"tokenizer.ggml.add_bos_token", "bos_token_id"});
}

}  // namespace
}  // namespace nexttok

// Properties of byte-level BPE that hold for any input, checked on random inputs with the GPT-2
// and Llama 3 vocabularies: decode(encode(bytes)) == bytes for any byte string (invalid UTF-8
// included), and the streaming detokenizer never shows half a character and equals decode()
// whenever decode() is valid UTF-8.
#include <nexttok/detail/utf8.hpp>
#include <nexttok/tokenizer.hpp>

#include "test_data.hpp"
#include "tokenizer_test_util.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace nexttok {
namespace {

class bpe_round_trip : public ::testing::Test {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(test::data_path(test::gpt2_vocab)) ||
            !std::filesystem::exists(test::data_path(test::llama3_merges)))
            GTEST_SKIP() << "shared test data not found: " << test::data_path("tokenizers");
    }
    std::vector<const tokenizer*> tokenizers() const {
        return {&test::gpt2_gguf_tokenizer(), &test::llama3_files_tokenizer()};
    }
};

// Random texts drawn from ASCII, spaces and newlines, multi-byte characters and raw bytes.
std::string random_text(std::mt19937& rng) {
    static const std::vector<std::string> alphabet{"a",
                                                   "b",
                                                   "Z",
                                                   "7",
                                                   "0",
                                                   " ",
                                                   " ",
                                                   "  ",
                                                   "\n",
                                                   "\t",
                                                   "'s",
                                                   "!",
                                                   ".",
                                                   "<|",
                                                   "|>",
                                                   "\xC3\xA9",
                                                   "\xE6\x97\xA5",
                                                   "\xF0\x9F\xA6\x99",
                                                   "\xE1\x9E\x80",
                                                   "\xD0\xBF",
                                                   "\xFF",
                                                   "\x80",
                                                   "\xC3",
                                                   "\xE2\x82"};
    std::string s;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
    return s;
}

TEST_F(bpe_round_trip, any_byte_string_encodes_and_decodes_back) {
    std::mt19937 rng(42);
    for (const tokenizer* tok : tokenizers()) {
        for (int trial = 0; trial < 1500; ++trial) {
            const std::string text = random_text(rng);
            const auto ids = tok->encode(text, false);
            ASSERT_EQ(tok->decode(ids), text) << test::format_ids(ids);
            for (const token_id id : ids) ASSERT_FALSE(tok->is_control(id)) << "a control token from plain text";
        }
        std::string all;
        for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
        EXPECT_EQ(tok->decode(tok->encode(all, false)), all);
    }
}

// A long word without spaces: merging stays fast (O(n log n)) and exact.
TEST_F(bpe_round_trip, long_words_and_long_whitespace) {
    for (const tokenizer* tok : tokenizers()) {
        std::string word;
        for (int i = 0; i < 20000; ++i) word += "abcdefghij"[i % 10];
        EXPECT_EQ(tok->decode(tok->encode(word, false)), word);
        const std::string spaces = std::string(50000, ' ') + "end";
        EXPECT_EQ(tok->decode(tok->encode(spaces, false)), spaces);
    }
}

TEST_F(bpe_round_trip, the_stream_matches_decode_on_random_token_sequences) {
    for (const tokenizer* tok : tokenizers()) {
        std::mt19937 rng(1234);
        std::uniform_int_distribution<token_id> any(0, static_cast<token_id>(tok->vocab_size()) - 1);
        std::uniform_int_distribution<token_id> bytes(0, 255);  // both vocabularies: the byte symbols first
        std::size_t n_valid = 0, n_held = 0;
        for (int trial = 0; trial < 2000; ++trial) {
            std::vector<token_id> ids(1 + trial % 12);
            for (token_id& id : ids) id = rng() % 2 ? any(rng) : bytes(rng);
            detokenizer stream(*tok);
            std::string streamed;
            for (const token_id id : ids) {
                const std::string piece = stream.push(id);
                ASSERT_TRUE(detail::is_valid_utf8(piece)) << test::format_ids(ids);
                n_held += piece.size() < tok->token_to_piece(id).size();
                streamed += piece;
            }
            const std::string tail = stream.flush();
            ASSERT_TRUE(detail::is_valid_utf8(tail));
            streamed += tail;
            const std::string whole = tok->decode(ids);
            if (detail::is_valid_utf8(whole)) {
                ++n_valid;
                ASSERT_EQ(streamed, whole) << test::format_ids(ids);
            }
        }
        EXPECT_GT(n_valid, 200u);  // the comparison above did run
        EXPECT_GT(n_held, 200u);   // and bytes were held back
    }
}

// GPT-2 spells "👋" (F0 9F 91 8B) with two tokens; the first is held back whole.
TEST_F(bpe_round_trip, an_emoji_split_across_tokens_is_shown_once_complete) {
    const tokenizer& tok = test::gpt2_gguf_tokenizer();
    const auto ids = tok.encode(" \xF0\x9F\x91\x8B", false);
    ASSERT_EQ(ids, (std::vector<token_id>{50169, 233}));  // from gpt2/test_vectors.json ("hello 👋 world 🌍")
    detokenizer stream(tok);
    EXPECT_EQ(stream.push(ids[0]), " ");
    EXPECT_EQ(stream.push(ids[1]), "\xF0\x9F\x91\x8B");
    EXPECT_EQ(stream.flush(), "");
}

}  // namespace
}  // namespace nexttok

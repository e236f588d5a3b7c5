// The encode/decode vectors of two other reference implementations:
//   gpt2/test_vectors.json    GPT-3-Encoder's tests (the original GPT-2 BPE in JavaScript) and
//                             tiktoken's documented "hello world"
//   llama3/test_vectors.json  ollama's Llama 3 tests: encode cases (digits in groups of three),
//                             special tokens (parsed here with parse_special), pre-tokenizer
//                             splits, and texts that must survive a round trip
// GPT-2 runs both from encoder.json + vocab.bpe and from llama.cpp's GGUF of the same vocabulary.
#include <nexttok/detail/utf8.hpp>
#include <nexttok/tokenizer.hpp>

#include "test_data.hpp"
#include "tokenizer_test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace nexttok {
namespace {

using json = nlohmann::json;

json read_json(const char* relative) { return json::parse(std::ifstream(test::data_path(relative))); }

std::vector<token_id> ids_of(const json& j) { return j.get<std::vector<token_id>>(); }

// Every push() is valid UTF-8 and the stream is the text.
void expect_streams_back(const tokenizer& tok, const std::vector<token_id>& ids, const std::string& text) {
    detokenizer stream(tok);
    std::string streamed;
    for (const token_id id : ids) {
        const std::string piece = stream.push(id);
        EXPECT_TRUE(detail::is_valid_utf8(piece)) << "'" << text << "': push(" << id << ")";
        streamed += piece;
    }
    streamed += stream.flush();
    EXPECT_EQ(streamed, text);
}

TEST(gpt2_json_vectors, encode_and_decode_from_the_original_files_and_from_gguf) {
    NEXTTOK_REQUIRE_DATA("tokenizers/gpt2/test_vectors.json");
    NEXTTOK_REQUIRE_DATA(test::gpt2_encoder);
    NEXTTOK_REQUIRE_DATA(test::gpt2_vocab);
    const json vectors = read_json("tokenizers/gpt2/test_vectors.json");
    const tokenizer files =
        load_gpt2_tokenizer(test::data_path(test::gpt2_encoder), test::data_path(test::gpt2_merges));
    ASSERT_EQ(vectors["cases"].size(), 9u);
    std::size_t passed = 0;
    for (const json& c : vectors["cases"]) {
        const std::string text = c["text"];
        const std::vector<token_id> expected = ids_of(c["ids"]);
        for (const tokenizer* tok : {&files, &test::gpt2_gguf_tokenizer()}) {
            const auto ids = tok->encode(text, /*add_bos=*/false);
            EXPECT_EQ(test::format_ids(ids), test::format_ids(expected)) << "'" << text << "'";
            passed += ids == expected;
            EXPECT_EQ(tok->decode(expected), text);
            expect_streams_back(*tok, expected, text);
        }
    }
    std::printf("gpt2 test_vectors.json: %zu of %zu encodings (2 tokenizers) give the reference ids\n", passed,
                2 * vectors["cases"].size());
}

class llama3_json_vectors : public ::testing::Test {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(test::data_path("tokenizers/llama3/test_vectors.json")) ||
            !std::filesystem::exists(test::data_path(test::llama3_merges)))
            GTEST_SKIP() << "shared test data not found: " << test::data_path("tokenizers/llama3");
        vectors_ = read_json("tokenizers/llama3/test_vectors.json");
    }
    const tokenizer& tok() const { return test::llama3_files_tokenizer(); }
    json vectors_;
};

TEST_F(llama3_json_vectors, encode_cases) {
    ASSERT_EQ(vectors_["encode_cases"].size(), 18u);
    for (const json& c : vectors_["encode_cases"]) {
        const std::string text = c["text"];
        const std::vector<token_id> expected = ids_of(c["ids"]);
        EXPECT_EQ(test::format_ids(tok().encode(text, false)), test::format_ids(expected)) << "'" << text << "'";
        EXPECT_EQ(tok().decode(expected), text);
    }
}

// The special texts are tokens only when asked for (parse_special); otherwise they are plain text
// that decodes back to itself and contains no special id.
TEST_F(llama3_json_vectors, special_cases_with_parse_special) {
    ASSERT_EQ(vectors_["special_cases"].size(), 5u);
    for (const json& c : vectors_["special_cases"]) {
        const std::string text = c["text"];
        const std::vector<token_id> expected = ids_of(c["ids"]);
        EXPECT_EQ(test::format_ids(tok().encode(text, false, /*parse_special=*/true)), test::format_ids(expected))
            << "'" << text << "'";

        const auto plain = tok().encode(text, false, /*parse_special=*/false);
        for (const token_id id : plain) EXPECT_LT(id, 128000) << "'" << text << "': a special id from plain text";
        EXPECT_EQ(tok().decode(plain), text);
    }
}

TEST_F(llama3_json_vectors, pre_tokenizer_split_cases) {
    ASSERT_NE(tok().bpe(), nullptr);
    const pre_tokenizer& pre = tok().bpe()->pre();
    EXPECT_EQ(pre.pattern(), vectors_["pretokenizer_regex"].get<std::string>());  // the same expression
    ASSERT_EQ(vectors_["pretokenizer_split_cases"].size(), 7u);
    for (const json& c : vectors_["pretokenizer_split_cases"]) {
        const std::string text = c["text"];
        const auto pieces = pre.split(text);
        EXPECT_EQ(std::vector<std::string>(pieces.begin(), pieces.end()), c["pieces"].get<std::vector<std::string>>())
            << "'" << text << "'";
    }
}

TEST_F(llama3_json_vectors, round_trip_cases) {
    ASSERT_EQ(vectors_["roundtrip_only"].size(), 8u);
    for (const json& c : vectors_["roundtrip_only"]) {
        const std::string text = c;
        const auto ids = tok().encode(text, /*add_bos=*/true);
        EXPECT_EQ(ids.front(), 128000);
        EXPECT_EQ(tok().decode(ids), text);
        expect_streams_back(tok(), ids, text);
    }
}

}  // namespace
}  // namespace nexttok

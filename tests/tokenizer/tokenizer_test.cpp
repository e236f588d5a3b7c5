// The tokenizer interface on the Llama 2 vocabulary: special tokens, the start-of-text rule,
// invalid input. Oracles: llama.cpp's behaviour (parse_special, is_prev_special), SentencePiece's
// decoder (which space it drops, " ⁇ " for <unk>), and the input text for round trips.
#include <nexttok/tokenizer.hpp>

#include "test_data.hpp"
#include "tokenizer_test_util.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace nexttok {
namespace {

using ids = std::vector<token_id>;

// Ids in the Llama 2 vocabulary.
constexpr token_id hello = 15043;       // "▁Hello"
constexpr token_id lone_space = 29871;  // "▁"
constexpr token_id newline = 13;        // "<0x0A>"

class llama_tokenizer : public ::testing::Test {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(test::data_path(test::llama_spm_vocab)))
            GTEST_SKIP() << "shared test data not found: " << test::data_path(test::llama_spm_vocab);
    }
    const tokenizer& tok() const { return test::llama_spm_tokenizer(); }
};

TEST_F(llama_tokenizer, reads_the_special_ids_and_defaults_from_the_file) {
    EXPECT_EQ(tok().vocab_size(), 32000u);
    EXPECT_EQ(tok().bos(), 1);
    EXPECT_EQ(tok().eos(), 2);
    EXPECT_EQ(tok().unk(), 0);
    EXPECT_TRUE(tok().default_add_bos());
    EXPECT_FALSE(tok().default_add_eos());
    EXPECT_TRUE(tok().is_control(1));
    EXPECT_TRUE(tok().is_control(2));
    EXPECT_FALSE(tok().is_control(0));  // <unk> is of type unknown
    EXPECT_FALSE(tok().is_control(hello));
    EXPECT_TRUE(tok().vocab().has_byte_fallback());
}

// SentencePiece and llama.cpp: "" gives no token (no dummy prefix either); with BOS just BOS.
TEST_F(llama_tokenizer, empty_text_gives_nothing_or_just_bos) {
    EXPECT_EQ(tok().encode("", false), ids{});
    EXPECT_EQ(tok().encode("", true), ids{1});
    EXPECT_EQ(tok().decode(ids{}), "");
    EXPECT_EQ(tok().decode(ids{1}), "");
}

TEST_F(llama_tokenizer, token_to_piece_gives_the_raw_bytes) {
    EXPECT_EQ(tok().token_to_piece(hello), " Hello");
    EXPECT_EQ(tok().token_to_piece(newline), "\n");
    EXPECT_EQ(tok().token_to_piece(3 + 0xE6), "\xE6");
    EXPECT_EQ(tok().token_to_piece(1), "");
    EXPECT_EQ(tok().token_to_piece(2), "");
    EXPECT_EQ(tok().token_to_piece(0), " \xE2\x81\x87 ");  // SentencePiece's surface of <unk>
}

// SentencePiece's decoder drops the "▁" of the first piece that produces text, and only that one:
// a lone "▁" at the start (from a text that began with a space) takes the drop, so " Hello" survives.
TEST_F(llama_tokenizer, decode_drops_only_the_dummy_prefix_space) {
    EXPECT_EQ(tok().decode(ids{hello}), "Hello");
    EXPECT_EQ(tok().decode(ids{1, hello}), "Hello");
    EXPECT_EQ(tok().decode(ids{hello, hello}), "Hello Hello");
    EXPECT_EQ(tok().decode(ids{lone_space, hello}), " Hello");
    EXPECT_EQ(tok().decode(ids{newline, hello}), "\n Hello");  // a byte piece starts the text
    EXPECT_EQ(tok().encode(" Hello", false), (ids{lone_space, hello}));
}

// llama.cpp (tokenizer_st_partition): with parse_special the texts of control tokens become those
// tokens, and the text after one gets the dummy prefix again (is_prev_special).
TEST_F(llama_tokenizer, parse_special_matches_control_texts) {
    EXPECT_EQ(tok().encode("<s>Hello</s>", false, true), (ids{1, hello, 2}));
    EXPECT_EQ(tok().encode("Hello</s>Hello", true, true), (ids{1, hello, 2, hello}));
    EXPECT_EQ(tok().encode("<unk>", false, true), ids{0});
    EXPECT_EQ(tok().decode(ids{1, hello, 2}), "Hello");

    const auto plain = tok().encode("<s>Hello</s>", false, false);
    for (const token_id id : plain) EXPECT_FALSE(id == 1 || id == 2 || id == 0) << test::format_ids(plain);
    EXPECT_EQ(tok().decode(plain), "<s>Hello</s>");
}

TEST_F(llama_tokenizer, out_of_range_ids_are_invalid_arguments) {
    for (const token_id bad : {-1, 32000, INT32_MAX}) {
        try {
            (void)tok().decode(ids{hello, bad});
            ADD_FAILURE() << "no exception for " << bad;
        } catch (const invalid_argument_error& e) {
            EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
        }
        EXPECT_THROW((void)tok().token_to_piece(bad), invalid_argument_error);
        EXPECT_THROW((void)tok().is_control(bad), invalid_argument_error);
    }
}

// Stray bytes are symbols of their own and fall back to their byte tokens: " " + FF -> "▁" <0xFF>.
TEST_F(llama_tokenizer, invalid_utf8_encodes_through_byte_tokens) {
    EXPECT_EQ(tok().encode("\xFF", false), (ids{lone_space, 3 + 0xFF}));
    // A truncated 3-byte sequence before ASCII: the two bytes stay separate symbols, "a" is untouched.
    const auto t = tok().encode(
        "\xE6\x97"
        "a",
        false);
    EXPECT_EQ(t, (ids{lone_space, 3 + 0xE6, 3 + 0x97, tok().vocab().find("a")}));
    EXPECT_EQ(tok().decode(t),
              "\xE6\x97"
              "a");
}

// Any byte string survives encode + decode when it holds no "▁" of its own (which decodes as ' ').
TEST_F(llama_tokenizer, random_byte_strings_round_trip) {
    std::mt19937 rng(42);
    const std::string alphabet = std::string("ab cd\n\t.,'") + "\xC3\xA9\xE6\x97\xA5\xF0\x9F\xA6\x99\x80\xFF\xC2";
    for (int trial = 0; trial < 500; ++trial) {
        std::string text;
        for (int i = 0, n = static_cast<int>(rng() % 40); i < n; ++i) text += alphabet[rng() % alphabet.size()];
        if (text.find("\xE2\x96\x81") != std::string::npos) continue;
        ASSERT_EQ(tok().decode(tok().encode(text, trial % 2 == 0)), text) << testing::PrintToString(text);
    }
}

TEST_F(llama_tokenizer, encodes_a_long_text_in_reasonable_time) {
    std::string text;
    for (int i = 0; i < 20000; ++i) text += "Hello world, this is a test. ";
    const auto t = tok().encode(text, false);
    EXPECT_EQ(tok().decode(t), text);
    EXPECT_LT(t.size(), text.size() / 3);
}

// A vocabulary with neither byte tokens nor <unk> cannot encode an unknown character: an error,
// not a crash. With <unk> and no byte tokens, a run of unknown characters is one <unk>
// (SentencePiece merges consecutive unknowns).
TEST(spm_tokenizer, without_byte_fallback_unknown_characters_become_one_unk) {
    std::vector<token_data> t{{"<unk>", 0, token_type::unknown},
                              {"<s>", 0, token_type::control},
                              {"</s>", 0, token_type::control},
                              {"\xE2\x96\x81", -1, token_type::normal},
                              {"a", -2, token_type::normal},
                              {"\xE2\x96\x81"
                               "a",
                               -3, token_type::normal}};
    const spm_tokenizer with_unk(vocabulary(t, {.bos = 1, .eos = 2, .unk = 0}), spm_options{});
    EXPECT_EQ(with_unk.encode("a\xC3\xA9\xC3\xA9z a", false), (ids{5, 0, 5}));
    EXPECT_EQ(with_unk.decode(ids{5, 0, 5}), "a \xE2\x81\x87  a");

    const spm_tokenizer without_unk(vocabulary(t, {.bos = 1, .eos = 2, .unk = no_token}), spm_options{});
    EXPECT_EQ(without_unk.encode("a a", false), (ids{5, 5}));
    EXPECT_THROW((void)without_unk.encode("a z", false), invalid_argument_error);
}

// Merges follow the score of the merged piece, ties to the leftmost pair; a piece only reachable
// through an unused piece is split back into the pieces it was made of.
TEST(spm_tokenizer, merges_by_score_leftmost_first_and_splits_unused_pieces) {
    std::vector<token_data> t{{"<unk>", 0, token_type::unknown}, {"\xE2\x96\x81", -1, token_type::normal},
                              {"a", -1, token_type::normal},     {"b", -1, token_type::normal},
                              {"ab", -5, token_type::normal},    {"ba", -5, token_type::normal},
                              {"bb", -2, token_type::unused}};
    spm_options no_prefix;
    no_prefix.add_space_prefix = false;
    const spm_tokenizer tok(vocabulary(t, {.unk = 0}), no_prefix);
    EXPECT_EQ(tok.encode("aba", false), (ids{4, 2}));  // "ab" and "ba" tie: the leftmost pair merges
    EXPECT_EQ(tok.encode("bab", false), (ids{5, 3}));
    EXPECT_EQ(tok.encode("bb", false), (ids{3, 3}));  // "bb" is unused: never emitted
    EXPECT_EQ(tok.decode(ids{4, 2}), "aba");          // no dummy prefix, nothing to drop
}

// Control and byte tokens never take part in merges (SentencePiece keeps them out of its piece
// table), so plain text can not become "<s>" even when the pieces leading to it exist.
TEST(spm_tokenizer, plain_text_never_merges_into_a_control_token) {
    std::vector<token_data> t{{"<unk>", 0, token_type::unknown}, {"<s>", 0, token_type::control},
                              {"</s>", 0, token_type::control},  {"<", -1, token_type::normal},
                              {"s", -1, token_type::normal},     {">", -1, token_type::normal},
                              {"<s", -2, token_type::normal}};
    spm_options no_prefix;
    no_prefix.add_space_prefix = false;
    const spm_tokenizer tok(vocabulary(t, {.bos = 1, .eos = 2, .unk = 0}), no_prefix);
    EXPECT_EQ(tok.encode("<s>", false), (ids{6, 5}));
    EXPECT_EQ(tok.encode("<s>", false, /*parse_special=*/true), ids{1});
}

// llama.cpp's partition: the longest special text first; user-defined texts are always matched,
// control texts only with parse_special.
TEST(spm_tokenizer, longer_special_texts_match_first_and_user_defined_always) {
    std::vector<token_data> t{{"<unk>", 0, token_type::unknown}, {"<a>", 0, token_type::control},
                              {"<a>b", 0, token_type::control},  {"xy", 0, token_type::user_defined},
                              {"<", -1, token_type::normal},     {"a", -1, token_type::normal},
                              {">", -1, token_type::normal},     {"b", -1, token_type::normal},
                              {"x", -1, token_type::normal},     {"y", -1, token_type::normal}};
    spm_options no_prefix;
    no_prefix.add_space_prefix = false;
    const spm_tokenizer tok(vocabulary(t, {.unk = 0}), no_prefix);
    EXPECT_EQ(tok.encode("<a>b<a>", false, true), (ids{2, 1}));
    EXPECT_EQ(tok.encode("bxyb", false, false), (ids{7, 3, 7}));
    EXPECT_EQ(tok.encode("<a>", false, false), (ids{4, 5, 6}));
}

}  // namespace
}  // namespace nexttok

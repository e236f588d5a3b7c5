// The stories260K tokenizer, read two ways: llama2.c's tok512.bin and the vocabulary that
// llama.cpp's llama2c converter embedded in stories260K.gguf from that same file. Oracles: llama2.c's
// own encoding of its documented prompt, and the converter's output (the GGUF) for the table itself.
#include <nexttok/tokenizer.hpp>

#include "test_data.hpp"
#include "tokenizer_test_util.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nexttok {
namespace {

#define NEXTTOK_REQUIRE_STORIES260K()                 \
    do {                                              \
        NEXTTOK_REQUIRE_DATA(test::tok512_bin);       \
        NEXTTOK_REQUIRE_DATA(test::stories260k_gguf); \
    } while (0)

// llama2.c `run stories260K.bin -z tok512.bin -i "Once upon a time"` feeds BOS then these pieces:
// " Once" " upon" " a" " time".
const std::vector<token_id> once_upon_a_time{1, 403, 407, 261, 378};

TEST(stories260k, once_upon_a_time_from_tok512_bin) {
    NEXTTOK_REQUIRE_DATA(test::tok512_bin);
    EXPECT_EQ(test::tok512_tokenizer().encode("Once upon a time", true), once_upon_a_time);
    EXPECT_EQ(test::tok512_tokenizer().decode(once_upon_a_time), "Once upon a time");
}

TEST(stories260k, once_upon_a_time_from_the_gguf_vocabulary) {
    NEXTTOK_REQUIRE_DATA(test::stories260k_gguf);
    EXPECT_EQ(test::stories260k_gguf_tokenizer().encode("Once upon a time", true), once_upon_a_time);
    EXPECT_EQ(test::stories260k_gguf_tokenizer().decode(once_upon_a_time), "Once upon a time");
}

// The types we derive for tok512.bin (which has none) are the ones the converter wrote, and the
// texts (with ' ' back to "▁", BOS/EOS renamed) and scores are identical.
TEST(stories260k, tok512_bin_gives_the_table_the_converter_wrote) {
    NEXTTOK_REQUIRE_STORIES260K();
    const vocabulary& bin = test::tok512_tokenizer().vocab();
    const vocabulary& gguf = test::stories260k_gguf_tokenizer().vocab();
    ASSERT_EQ(bin.size(), 512u);
    ASSERT_EQ(gguf.size(), 512u);
    for (token_id id = 0; id < 512; ++id) {
        EXPECT_EQ(bin[id].text, gguf[id].text) << "token " << id;
        EXPECT_EQ(bin[id].score, gguf[id].score) << "token " << id;
        EXPECT_EQ(bin[id].type, gguf[id].type) << "token " << id;
    }
    EXPECT_EQ(bin[0].type, token_type::unknown);
    EXPECT_EQ(bin[1].type, token_type::control);
    EXPECT_EQ(bin[2].type, token_type::control);
    EXPECT_EQ(bin[3].type, token_type::byte);    // <0x00>
    EXPECT_EQ(bin[258].type, token_type::byte);  // <0xFF>
    EXPECT_EQ(bin[259].text, "\xE2\x96\x81t");   // " t" in the .bin
    EXPECT_TRUE(bin.has_byte_fallback());
    EXPECT_EQ(bin.special().bos, gguf.special().bos);
    EXPECT_EQ(bin.special().eos, gguf.special().eos);
    EXPECT_EQ(bin.special().unk, gguf.special().unk);
}

TEST(stories260k, both_vocabularies_encode_and_decode_varied_texts_identically) {
    NEXTTOK_REQUIRE_STORIES260K();
    const tokenizer& bin = test::tok512_tokenizer();
    const tokenizer& gguf = test::stories260k_gguf_tokenizer();
    const std::vector<std::string> texts{
        "",
        " ",
        "   ",
        "\n",
        "Hello world",
        " Lily and Tom went to the park.\nThey saw a big, red ball!",
        "Once upon a time, there was a little girl named Lily. She loved to play outside.",
        "numbers 0123456789 and symbols #$%&*()[]{}<>@^_|~",
        "caf\xC3\xA9 na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\xA6\x99 "
        "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD",
        "<s> and </s> and <unk> as plain text",
        "\t\ttabs\tand  double  spaces  ",
        std::string("nul\0byte", 8),
        "invalid \xFF\xFE utf-8 \xC3 \xE2\x82 \x80",
    };
    for (const std::string& text : texts) {
        for (const bool add_bos : {false, true}) {
            for (const bool parse_special : {false, true}) {
                const auto ids = bin.encode(text, add_bos, parse_special);
                EXPECT_EQ(ids, gguf.encode(text, add_bos, parse_special))
                    << "'" << text << "' add_bos=" << add_bos << " parse_special=" << parse_special;
                EXPECT_EQ(bin.decode(ids), gguf.decode(ids)) << "'" << text << "'";
                if (!parse_special) {
                    EXPECT_EQ(bin.decode(ids), text);
                }
            }
        }
    }
}

// Characters that are no piece of the 512-token vocabulary are spelled with their UTF-8 bytes, as
// llama2.c does: "日" = E6 97 A5 = <0xE6> <0x97> <0xA5> = ids 3 + 0xE6, 3 + 0x97, 3 + 0xA5 (the
// byte tokens start at id 3). "é" is a piece of its own (485).
TEST(stories260k, unknown_characters_fall_back_to_their_bytes) {
    NEXTTOK_REQUIRE_DATA(test::tok512_bin);
    const tokenizer& tok = test::tok512_tokenizer();
    const token_id space = tok.vocab().find("\xE2\x96\x81");  // the dummy prefix alone, "▁"
    ASSERT_NE(space, no_token);
    EXPECT_EQ(tok.encode("\xE6\x97\xA5", false), (std::vector<token_id>{space, 3 + 0xE6, 3 + 0x97, 3 + 0xA5}));
    EXPECT_EQ(tok.encode("\xC3\xA9", false), (std::vector<token_id>{space, tok.vocab().find("\xC3\xA9")}));
}

}  // namespace
}  // namespace nexttok

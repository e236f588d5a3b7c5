// The streaming detokenizer: every push() result is whole UTF-8 characters, and push()s + flush()
// concatenate to decode() of the same tokens. Oracles: the strict UTF-8 validator, decode(), and the
// input text itself (stories260K spells "日", "本" and emoji with byte-fallback tokens).
#include <nexttok/detail/utf8.hpp>
#include <nexttok/tokenizer.hpp>

#include "test_data.hpp"
#include "tokenizer_test_util.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace nexttok {
namespace {

std::size_t count_byte_tokens(const tokenizer& tok, const std::vector<token_id>& ids) {
    std::size_t n = 0;
    for (const token_id id : ids) n += tok.vocab()[id].type == token_type::byte;
    return n;
}

TEST(detokenizer, never_splits_a_character_spelled_with_byte_tokens) {
    NEXTTOK_REQUIRE_DATA(test::tok512_bin);
    const tokenizer& tok = test::tok512_tokenizer();
    const std::vector<std::string> texts{
        "\xC3\xA9",                  // é (a piece of its own here)
        "\xE6\x97\xA5\xE6\x9C\xAC",  // 日本: 3 byte tokens each
        "\xF0\x9F\xA6\x99",          // 🦙: 4 byte tokens
        "Lily said \xE2\x80\x9C\xE6\x97\xA5\xE6\x9C\xAC\xE2\x80\x9D and \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD!",
        "\xCE\xB1\xCE\xB2\xCE\xB3 \xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82",  // αβγ привет
    };
    for (const std::string& text : texts) {
        const auto ids = tok.encode(text, /*add_bos=*/true);
        if (text.size() > 2) {
            EXPECT_GE(count_byte_tokens(tok, ids), 3u) << "'" << text << "' uses no byte fallback";
        }
        detokenizer stream(tok);
        std::string streamed;
        for (const token_id id : ids) {
            const std::string piece = stream.push(id);
            EXPECT_TRUE(detail::is_valid_utf8(piece)) << "'" << text << "': push(" << id << ") gave half a character";
            streamed += piece;
        }
        streamed += stream.flush();
        EXPECT_EQ(streamed, tok.decode(ids));
        EXPECT_EQ(streamed, text);
    }
}

TEST(detokenizer, holds_back_the_bytes_of_an_incomplete_character) {
    NEXTTOK_REQUIRE_DATA(test::tok512_bin);
    const tokenizer& tok = test::tok512_tokenizer();
    const auto byte = [&](unsigned char b) {
        return tok.vocab().byte_token(b);
    };
    detokenizer stream(tok);
    EXPECT_EQ(stream.push(tok.bos()), "");
    EXPECT_EQ(stream.push(byte(0xE2)), "");  // € = E2 82 AC
    EXPECT_EQ(stream.push(byte(0x82)), "");
    EXPECT_EQ(stream.push(byte(0xAC)), "\xE2\x82\xAC");
    EXPECT_EQ(stream.push(byte(0xF0)), "");  // 🦙 = F0 9F A6 99
    EXPECT_EQ(stream.push(byte(0x9F)), "");
    EXPECT_EQ(stream.push(byte(0xA6)), "");
    EXPECT_EQ(stream.push(byte(0x99)), "\xF0\x9F\xA6\x99");
    EXPECT_EQ(stream.flush(), "");
}

TEST(detokenizer, replaces_bytes_that_can_never_form_a_character) {
    NEXTTOK_REQUIRE_DATA(test::tok512_bin);
    const tokenizer& tok = test::tok512_tokenizer();
    const auto byte = [&](unsigned char b) {
        return tok.vocab().byte_token(b);
    };
    const std::string fffd = "\xEF\xBF\xBD";
    detokenizer stream(tok);
    EXPECT_EQ(stream.push(byte(0xE2)), "");
    EXPECT_EQ(stream.push(byte(0x82)), "");
    // "a" cannot continue E2 82: the two bytes are one ill-formed subpart, one U+FFFD.
    EXPECT_EQ(stream.push(tok.vocab().find("a")), fffd + "a");
    EXPECT_EQ(stream.push(byte(0xFF)), fffd);  // never valid in UTF-8
    EXPECT_EQ(stream.push(byte(0xF0)), "");
    EXPECT_EQ(stream.push(byte(0x9F)), "");
    EXPECT_EQ(stream.flush(), fffd);  // the text ended inside a character
}

// SentencePiece's start rule applies once, to the first piece with text (after BOS).
TEST(detokenizer, drops_the_dummy_prefix_space_only_at_the_start) {
    NEXTTOK_REQUIRE_DATA(test::tok512_bin);
    const tokenizer& tok = test::tok512_tokenizer();
    const std::vector<token_id> ids{1, 403, 407, 261, 378};  // <s> " Once" " upon" " a" " time"
    detokenizer stream(tok);
    EXPECT_EQ(stream.push(ids[0]), "");
    EXPECT_EQ(stream.push(ids[1]), "Once");
    EXPECT_EQ(stream.push(ids[2]), " upon");

    // A stream primed with the prompt continues it: " a" keeps its space.
    detokenizer continuation(tok);
    continuation.prime(std::span(ids).first(3));
    EXPECT_EQ(continuation.push(ids[3]), " a");
    EXPECT_EQ(continuation.push(ids[4]), " time");

    continuation.reset();
    EXPECT_EQ(continuation.push(ids[3]), "a");
}

TEST(detokenizer, rejects_an_id_outside_the_vocabulary_and_stays_usable) {
    NEXTTOK_REQUIRE_DATA(test::tok512_bin);
    const tokenizer& tok = test::tok512_tokenizer();
    detokenizer stream(tok);
    EXPECT_EQ(stream.push(tok.vocab().byte_token(0xC3)), "");
    try {
        (void)stream.push(512);
        FAIL() << "no exception for id 512";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("512"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)stream.push(-1), invalid_argument_error);
    EXPECT_EQ(stream.push(tok.vocab().byte_token(0xA9)), "\xC3\xA9");
}

// Random token sequences over the whole vocabulary (byte tokens included): every push() is valid
// UTF-8, and the stream equals decode() whenever decode() is valid UTF-8.
TEST(detokenizer, matches_decode_on_random_token_sequences) {
    NEXTTOK_REQUIRE_DATA(test::llama_spm_vocab);
    NEXTTOK_REQUIRE_DATA(test::tok512_bin);
    for (const tokenizer* tok : {&test::tok512_tokenizer(), &test::llama_spm_tokenizer()}) {
        std::mt19937 rng(1234);
        std::uniform_int_distribution<token_id> any(0, static_cast<token_id>(tok->vocab_size()) - 1);
        std::uniform_int_distribution<token_id> bytes(3, 258);  // both vocabularies: <0x00>..<0xFF>
        std::size_t n_valid = 0;
        for (int trial = 0; trial < 2000; ++trial) {
            std::vector<token_id> ids(1 + trial % 12);
            for (token_id& id : ids) id = rng() % 2 ? any(rng) : bytes(rng);
            detokenizer stream(*tok);
            std::string streamed;
            for (const token_id id : ids) {
                const std::string piece = stream.push(id);
                ASSERT_TRUE(detail::is_valid_utf8(piece)) << test::format_ids(ids);
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
    }
}

}  // namespace
}  // namespace nexttok

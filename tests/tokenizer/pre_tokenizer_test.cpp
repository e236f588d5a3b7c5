// The byte-level table and the pre-tokenizer expressions. Oracles: GPT-2's encoder.json, whose ids
// 0..255 are the 256 byte symbols in bytes_to_unicode() order (printable bytes first, then the 68
// others as U+0100..U+0143); the splits that the expressions define for small inputs; and, for any
// input, that the pieces concatenate back to it.
#include <nexttok/tokenizer.hpp>
#include <nexttok/tokenizer/detail/byte_level.hpp>

#include "test_data.hpp"
#include "tokenizer_test_util.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nexttok {
namespace {

using pieces = std::vector<std::string>;

pieces split(const pre_tokenizer& pre, std::string_view text) {
    const auto views = pre.split(text);
    return pieces(views.begin(), views.end());
}

std::string utf8(char32_t cp) {
    std::string s;
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else {
        s += static_cast<char>(0xC0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
}

TEST(byte_level, the_table_is_gpt2s_first256_tokens) {
    NEXTTOK_REQUIRE_DATA(test::gpt2_vocab);
    const auto& table = detail::byte_level_table::get();
    const vocabulary& v = test::gpt2_gguf_tokenizer().vocab();
    std::vector<int> printable, other;
    for (int b = 0; b < 256; ++b)
        ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE ? printable : other).push_back(b);
    ASSERT_EQ(printable.size(), 188u);
    ASSERT_EQ(other.size(), 68u);
    for (std::size_t i = 0; i < 188; ++i) {
        EXPECT_EQ(v[static_cast<token_id>(i)].text, utf8(static_cast<char32_t>(printable[i])));
        EXPECT_EQ(table.symbol(static_cast<unsigned char>(printable[i])), v[static_cast<token_id>(i)].text);
    }
    for (std::size_t n = 0; n < 68; ++n) {
        const auto id = static_cast<token_id>(188 + n);
        EXPECT_EQ(v[id].text, utf8(0x100 + static_cast<char32_t>(n)));
        EXPECT_EQ(table.symbol(static_cast<unsigned char>(other[n])), v[id].text);
        EXPECT_EQ(test::gpt2_gguf_tokenizer().token_to_piece(id), std::string(1, static_cast<char>(other[n])));
    }
    EXPECT_EQ(table.symbol(' '), "\xC4\xA0");   // Ġ
    EXPECT_EQ(table.symbol('\n'), "\xC4\x8A");  // Ċ
}

TEST(byte_level, every_byte_string_round_trips) {
    const auto& table = detail::byte_level_table::get();
    std::string all;
    for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
    std::string spelled;
    table.append_encoded(all, spelled);
    EXPECT_EQ(spelled.size(), 94u + 2 * 162u);
    EXPECT_EQ(table.decode(spelled), all);
    // Characters outside the table, and stray bytes, are kept as they are.
    EXPECT_EQ(table.decode("\xE2\x82\xAC"
                           "a"
                           "\xC5\x84"
                           "\xFF"),
              "\xE2\x82\xAC"
              "a"
              "\xC5\x84"
              "\xFF");  // €, ń (U+0144)
}

TEST(pre_tokenizer, gpt2_expression) {
    const pre_tokenizer pre(pre_tokenizer_kind::gpt2);
    EXPECT_EQ(split(pre, "Hello world"), (pieces{"Hello", " world"}));
    EXPECT_EQ(split(pre, "I'm here, they'll see"), (pieces{"I", "'m", " here", ",", " they", "'ll", " see"}));
    EXPECT_EQ(split(pre, "I'M"), (pieces{"I", "'", "M"}));    // GPT-2's contractions are lowercase only
    EXPECT_EQ(split(pre, "a  b"), (pieces{"a", " ", " b"}));  // \s+(?!\S) leaves the last space to the word
    EXPECT_EQ(split(pre, "a   "), (pieces{"a", "   "}));
    EXPECT_EQ(split(pre, "12345 x"), (pieces{"12345", " x"}));
    EXPECT_EQ(split(pre, "\tb"), (pieces{"\t", "b"}));
    EXPECT_EQ(split(pre, "na\xC3\xAFve caf\xC3\xA9"), (pieces{"na\xC3\xAFve", " caf\xC3\xA9"}));  // \p{L} is Unicode
    EXPECT_EQ(split(pre, ""), pieces{});
}

TEST(pre_tokenizer, llama3_and_qwen2_expressions) {
    const pre_tokenizer llama3(pre_tokenizer_kind::llama3);
    const pre_tokenizer qwen2(pre_tokenizer_kind::qwen2);
    EXPECT_EQ(split(llama3, "1234567"), (pieces{"123", "456", "7"}));
    EXPECT_EQ(split(qwen2, "1234"), (pieces{"1", "2", "3", "4"}));
    EXPECT_EQ(split(llama3, "I'M"), (pieces{"I", "'M"}));  // case-insensitive contractions
    EXPECT_EQ(split(llama3, "x\n\n  y"), (pieces{"x", "\n\n", " ", " y"}));
    EXPECT_EQ(split(llama3, "(hello"), (pieces{"(hello"}));  // one leading non-letter joins the word
    EXPECT_EQ(split(qwen2, "ok!!\n"), (pieces{"ok", "!!\n"}));
}

TEST(pre_tokenizer, kinds_from_gguf_names_and_patterns) {
    EXPECT_EQ(pre_tokenizer_kind_from_gguf("gpt-2"), pre_tokenizer_kind::gpt2);
    EXPECT_EQ(pre_tokenizer_kind_from_gguf("default"), pre_tokenizer_kind::llama_cpp_default);
    EXPECT_EQ(pre_tokenizer_kind_from_gguf("llama-bpe"), pre_tokenizer_kind::llama3);
    EXPECT_EQ(pre_tokenizer_kind_from_gguf("qwen2"), pre_tokenizer_kind::qwen2);
    EXPECT_EQ(pre_tokenizer_kind_from_gguf("falcon"), pre_tokenizer_kind::falcon);
    EXPECT_EQ(pre_tokenizer_kind_from_gguf("no-such-model"), std::nullopt);
    EXPECT_EQ(pre_tokenizer::from_pattern(std::string(pre_tokenizer::qwen2_pattern)).kind(), pre_tokenizer_kind::qwen2);
    EXPECT_EQ(pre_tokenizer::from_pattern("\\S+").kind(), pre_tokenizer_kind::custom);
    EXPECT_THROW((void)pre_tokenizer::from_pattern("[unclosed"), invalid_argument_error);
    EXPECT_THROW((void)pre_tokenizer(pre_tokenizer_kind::custom), invalid_argument_error);
}

// Invalid UTF-8 is matched by nothing: each ill-formed byte stays between the pieces around it.
TEST(pre_tokenizer, invalid_utf8_is_kept) {
    const pre_tokenizer pre(pre_tokenizer_kind::llama3);
    EXPECT_EQ(split(pre,
                    "ab\xFF"
                    "cd \xC3"),
              (pieces{"ab", "\xFF", "cd", " ", "\xC3"}));
    const std::string text = "x\x80\x80 y\xE2\x82 \xF0\x9F\xA6";
    std::string joined;
    for (const auto& p : split(pre, text)) joined += p;
    EXPECT_EQ(joined, text);
}

// A run long enough to exhaust PCRE2's default JIT stack for \s+(?!\S) falls back to the
// interpreter instead of failing.
TEST(pre_tokenizer, very_long_runs_split_correctly) {
    const pre_tokenizer pre(pre_tokenizer_kind::gpt2);
    const std::string spaces(200000, ' ');
    EXPECT_EQ(split(pre, spaces + "x"), (pieces{std::string(199999, ' '), " x"}));
    const std::string letters(200000, 'a');
    EXPECT_EQ(split(pre, letters + "!"), (pieces{letters, "!"}));
}

}  // namespace
}  // namespace nexttok

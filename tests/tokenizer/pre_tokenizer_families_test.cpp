// The pre-tokenizer families of llama.cpp beyond GPT-2, Llama 3 and Qwen2. Oracles: splits derived
// by hand from each family's expressions (worked out in the comments; not our output), the flags
// llama.cpp's llama_vocab::impl::load sets per name, and, for every name, that the expressions
// compile and cut a mixed text into non-empty pieces that concatenate back to it.
#include <nexttok/tokenizer.hpp>

#include "test_data.hpp"
#include "tokenizer_test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace nexttok {
namespace {

using pieces = std::vector<std::string>;

pieces split(pre_tokenizer_kind kind, std::string_view text) {
    const auto views = pre_tokenizer(kind).split(text);
    return pieces(views.begin(), views.end());
}

pieces split_gguf(std::string_view name, std::string_view text) {
    const gguf_pre_tokenizer* p = find_gguf_pre_tokenizer(name);
    if (p == nullptr) {
        ADD_FAILURE() << "unknown name " << name;
        return {};
    }
    return split(p->kind, text);
}

// Falcon: [\p{P}$+<=>^~|`]+ first isolates punctuation (so contractions come apart and no space
// joins an operator), then GPT-2, then [0-9]{3} cuts number runs in threes from the left.
TEST(pre_tokenizer_families, falcon) {
    EXPECT_EQ(split_gguf("falcon", "Hello, world!"), (pieces{"Hello", ",", " world", "!"}));
    // "x ", "=", " 1234567" -> GPT-2: "x" " " | "=" | " 1234567" -> threes: " " "123" "456" "7"
    EXPECT_EQ(split_gguf("falcon", "x = 1234567"), (pieces{"x", " ", "=", " ", "123", "456", "7"}));
    EXPECT_EQ(split_gguf("falcon", "don't"), (pieces{"don", "'", "t"}));
}

// StarCoder and its aliases: \p{N} isolates every digit, then GPT-2 cuts the rest.
TEST(pre_tokenizer_families, star_coder_digits) {
    // "x = " | 1 | 2 | 3 | ";" -> GPT-2 on "x = ": "x", " =", and the final " " by \s+(?!\S)
    EXPECT_EQ(split_gguf("starcoder", "x = 123;"), (pieces{"x", " =", " ", "1", "2", "3", ";"}));
    EXPECT_EQ(split_gguf("starcoder", "abc 2024"), (pieces{"abc", " ", "2", "0", "2", "4"}));
    for (const char* alias : {"refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"})
        EXPECT_EQ(pre_tokenizer_kind_from_gguf(alias), pre_tokenizer_kind::starcoder) << alias;
    // GPT-2 alone keeps the number together with its space.
    EXPECT_EQ(split_gguf("gpt-2", "abc 2024"), (pieces{"abc", " 2024"}));
}

// ChatGLM (glm4, chatglm-bpe): Llama 3's expression, without Llama 3's ignore_merges and BOS.
TEST(pre_tokenizer_families, chat_glm_is_llama3s_expression) {
    // 'S is a contraction (case-insensitive); " " before a digit is \s+ alone; digits by three;
    // "\n\n" is \s*[\r\n]+.
    EXPECT_EQ(split_gguf("chatglm-bpe", "HELLO'S 12345\n\nok"),
              (pieces{"HELLO", "'S", " ", "123", "45", "\n\n", "ok"}));
    const gguf_pre_tokenizer* glm = find_gguf_pre_tokenizer("chatglm-bpe");
    ASSERT_NE(glm, nullptr);
    EXPECT_EQ(glm->kind, pre_tokenizer_kind::llama3);
    EXPECT_FALSE(glm->ignore_merges);
    EXPECT_FALSE(glm->add_bos);
}

// Tekken (Mistral Nemo): a word is upper-case letters then lower-case ones (or upper-case only), so
// camelCase splits; digits one by one; no contractions, so "'m" is a leading non-letter + word.
TEST(pre_tokenizer_families, tekken) {
    EXPECT_EQ(split_gguf("tekken", "HelloWorld"), (pieces{"Hello", "World"}));
    // " JSONParser": the optional leading space, [Lu]* takes "JSONP", [Ll]+ takes "arser".
    EXPECT_EQ(split_gguf("tekken", "camelCase JSONParser"), (pieces{"camel", "Case", " JSONParser"}));
    EXPECT_EQ(split_gguf("tekken", "I'm 42"), (pieces{"I", "'m", " ", "4", "2"}));
    const gguf_pre_tokenizer* t = find_gguf_pre_tokenizer("tekken");
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(t->ignore_merges);
    EXPECT_TRUE(t->add_bos);
}

// DeepSeek LLM: newlines alone; words of cased letters with one leading whitespace (a CJK word is
// not one, so its space stays apart); trailing whitespace; CJK runs; number runs.
TEST(pre_tokenizer_families, deep_seek_llm) {
    EXPECT_EQ(split_gguf("deepseek-llm", "Hello \xE4\xB8\x96\xE7\x95\x8C 123\n"),  // "Hello 世界 123\n"
              (pieces{"Hello", " ", "\xE4\xB8\x96\xE7\x95\x8C", " ", "123", "\n"}));
    EXPECT_EQ(split_gguf("deepseek-llm", "Hi!! ok"), (pieces{"Hi", "!!", " ok"}));
}

// DeepSeek V3: digits by three first, CJK and kana runs, then one ASCII punctuation mark may lead
// an ASCII word.
TEST(pre_tokenizer_families, deep_seek_v3) {
    EXPECT_EQ(split_gguf("deepseek-v3", "x1234"), (pieces{"x", "123", "4"}));
    EXPECT_EQ(split_gguf("deepseek-v3", "(hello"), (pieces{"(hello"}));
    // 日本語です: CJK ideographs and hiragana form one run.
    EXPECT_EQ(split_gguf("deepseek-v3", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xA7\xE3\x81\x99!"),
              (pieces{"\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xA7\xE3\x81\x99", "!"}));
}

// BLOOM: one optional space and a run of anything but whitespace and .,!?… (and the literal
// parentheses and '|' inside the class); the rest is text between matches, kept as one piece.
TEST(pre_tokenizer_families, bloom_and_viking) {
    EXPECT_EQ(split_gguf("bloom", "Hello, world. (x)"), (pieces{"Hello", ",", " world", ". (", "x", ")"}));
    EXPECT_EQ(split_gguf("viking", "abc123"), (pieces{"abc", "1", "2", "3"}));  // then every digit alone
}

// SuperBPE: (?=(\d{3})+(?!\d)) matches only empty strings; each is a cut.
TEST(pre_tokenizer_families, super_bpe_cuts_at_empty_matches) {
    EXPECT_EQ(split_gguf("superbpe", "1234567 x"), (pieces{"1", "234", "567", " x"}));
    EXPECT_EQ(split_gguf("superbpe", "123456"), (pieces{"123", "456"}));
}

// Digits in threes from the right: AFMoE (llama.cpp's custom splitter), Tiny Aya (\d{1,3}(?=(?:\d{3})*\b)).
TEST(pre_tokenizer_families, digits_in_threes_from_the_right) {
    EXPECT_EQ(split_gguf("afmoe", "1234567"), (pieces{"1", "234", "567"}));
    // "12" has no letter after it for the word rule, so it stays the piece the digit rule made.
    EXPECT_EQ(split_gguf("afmoe", "x12345y"), (pieces{"x", "12", "345", "y"}));
    EXPECT_EQ(split_gguf("tiny_aya", "1234567"), (pieces{"1", "234", "567"}));
    EXPECT_EQ(split_gguf("llama3", "1234567"), (pieces{"123", "456", "7"}));  // from the left
}

// GPT-4o and Kimi K2: camel case splits, contractions stay with their word; Kimi cuts Han runs apart.
TEST(pre_tokenizer_families, gpt4o_and_kimi_k2) {
    EXPECT_EQ(split_gguf("gpt-4o", "HelloWorld's 12345"), (pieces{"Hello", "World's", " ", "123", "45"}));
    EXPECT_EQ(split_gguf("llama4", "HelloWorld's 12345"), (pieces{"Hello", "World's", " ", "123", "45"}));
    EXPECT_EQ(split_gguf("kimi-k2", "abc\xE4\xBD\xA0\xE5\xA5\xBDWorld"),  // "abc你好World"
              (pieces{"abc", "\xE4\xBD\xA0\xE5\xA5\xBD", "World"}));
}

// Jais 2: whitespace runs in power-of-two lengths (4, then 2), Llama 3 keeps 6 together.
TEST(pre_tokenizer_families, jais2_whitespace_runs) {
    EXPECT_EQ(split_gguf("jais-2", "a       b"), (pieces{"a", "    ", "  ", " b"}));
    EXPECT_EQ(split_gguf("llama-bpe", "a       b"), (pieces{"a", "      ", " b"}));
}

// llama.cpp's fallback for "default" and an absent key: punctuation runs, GPT-2, number runs, threes.
TEST(pre_tokenizer_families, llama_cpp_default) {
    EXPECT_EQ(split_gguf("default", "a , b 12345"), (pieces{"a", " ", ",", " b", " ", "123", "45"}));
}

// The flags of a few names, as llama.cpp's load() sets them.
TEST(pre_tokenizer_families, flags_of_names) {
    struct expected {
        const char* name;
        pre_tokenizer_kind kind;
        bool ignore_merges, add_bos, clean_spaces;
    };
    for (const expected& e : {expected{"llama-bpe", pre_tokenizer_kind::llama3, true, true, true},
                              expected{"falcon3", pre_tokenizer_kind::llama3, true, true, true},
                              expected{"dbrx", pre_tokenizer_kind::llama3, false, false, true},
                              expected{"deepseek-llm", pre_tokenizer_kind::deepseek_llm, false, false, false},
                              expected{"qwen2", pre_tokenizer_kind::qwen2, false, false, false},
                              expected{"megrez", pre_tokenizer_kind::qwen2, false, false, true},
                              expected{"chameleon", pre_tokenizer_kind::chameleon, false, true, false},
                              expected{"minicpm5", pre_tokenizer_kind::minicpm5, true, false, true},
                              expected{"hunyuan-dense", pre_tokenizer_kind::deepseek_v3, false, false, false},
                              expected{"mpt", pre_tokenizer_kind::gpt2, false, false, true}}) {
        const gguf_pre_tokenizer* p = find_gguf_pre_tokenizer(e.name);
        ASSERT_NE(p, nullptr) << e.name;
        EXPECT_EQ(p->kind, e.kind) << e.name;
        EXPECT_EQ(p->ignore_merges, e.ignore_merges) << e.name;
        EXPECT_EQ(p->add_bos, e.add_bos) << e.name;
        EXPECT_EQ(p->clean_spaces, e.clean_spaces) << e.name;
    }
    // Not byte-level BPE, or a SEP-appending encoder: left out on purpose.
    for (const char* name : {"gemma4", "sarvam-moe", "roberta-bpe", "whitespace", ""})
        EXPECT_EQ(find_gguf_pre_tokenizer(name), nullptr) << name;
}

const std::string mixed_text =
    "Hello, World! I'm DON'T 12345 tokens\n\n  \xC3\xBC"
    "ber na\xC3\xAFve e\xCC\x81t\xC3\xA9 "  // über naïve e+U+0301 té
    "\xCE\x95\xCE\xBB\xCE\xBB\xCE\xB7\xCE\xBD\xCE\xB9\xCE\xBA\xCE\xAC \xD0\xA0\xD1\x83\xD1\x81 "  // Ελληνικά Рус
    "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xA7\xE3\x81\x99\xE3\x80\x82 \xED\x95\x9C\xEA\xB5\xAD "  // 日本語です。 한국
    "\xF0\x9F\x91\x8B\xF0\x9F\x8F\xBD x=y+1; path/to\tfile\r\n<sentinel:3>IMGIMGABZ  \xE3\x80\x80 "  // 👋🏽, U+3000
    "\xD9\xA3\xD9\xA4 \xE2\x85\xA7 camelCaseJSON 3.14159 \xFF\xC3 end   ";  // ٣٤ Ⅷ, bad bytes

// Every name compiles its expressions and cuts text into non-empty pieces that give the text back.
TEST(pre_tokenizer_families, every_name_splits_losslessly) {
    std::set<std::string_view> names;
    for (const gguf_pre_tokenizer& p : gguf_pre_tokenizers()) {
        EXPECT_TRUE(names.insert(p.name).second) << "duplicate name " << p.name;
        const pre_tokenizer pre(p.kind);
        EXPECT_EQ(pre.kind(), p.kind);
        EXPECT_EQ(pre.n_patterns(), pre_tokenizer_patterns(p.kind).size()) << p.name;
        const auto pieces = pre.split(mixed_text);
        std::string joined;
        for (const auto piece : pieces) {
            EXPECT_FALSE(piece.empty()) << p.name;
            joined += piece;
        }
        EXPECT_EQ(joined, mixed_text) << p.name;
        // SuperBPE cuts only numbers (its tokens cross spaces); every other list cuts words.
        EXPECT_GT(pieces.size(), p.kind == pre_tokenizer_kind::superbpe ? 5u : 30u) << p.name;
    }
    EXPECT_GE(names.size(), 80u);
    // Every kind is reachable from some name.
    for (const auto& row : built_in_pre_tokenizers()) {
        bool used = false;
        for (const gguf_pre_tokenizer& p : gguf_pre_tokenizers()) used |= p.kind == row.kind;
        EXPECT_TRUE(used) << row.name;
        EXPECT_EQ(to_string(row.kind), row.name);
    }
}

// A list of expressions that is a built-in kind's is recognised as that kind.
TEST(pre_tokenizer_families, pattern_lists_are_recognised) {
    for (const auto& row : built_in_pre_tokenizers()) {
        std::vector<std::string> list(row.patterns.begin(), row.patterns.end());
        EXPECT_EQ(pre_tokenizer::from_patterns(list).kind(), row.kind) << row.name;
    }
    EXPECT_EQ(pre_tokenizer::from_patterns({"\\p{N}", "\\S+"}).kind(), pre_tokenizer_kind::custom);
    EXPECT_THROW((void)pre_tokenizer::from_patterns({}), invalid_argument_error);
}

// llama.cpp spells GPT-2's expression without its final |\s+; with the text between matches kept
// as pieces, both cut the same pieces. Checked on llama.cpp's vector texts and the mixed text.
TEST(pre_tokenizer_families, gpt2_without_the_final_whitespace_rule_cuts_the_same) {
    const pre_tokenizer full = pre_tokenizer::from_pattern(std::string(pre_tokenizer::gpt2_pattern));
    const pre_tokenizer short_form = pre_tokenizer::from_pattern(std::string(detail::pre_patterns::gpt2_llama_cpp));
    ASSERT_EQ(full.kind(), pre_tokenizer_kind::gpt2);
    std::vector<std::string> texts{mixed_text, "\tb", "a\t\tb", "x \n y", "\n\nz", " \t ", "a\t"};
    if (std::filesystem::exists(test::data_path(std::string(test::gpt2_vocab) + ".inp")))
        for (auto& c : test::read_vocab_test_cases(test::data_path(test::gpt2_vocab))) texts.push_back(c.text);
    for (const std::string& t : texts) EXPECT_EQ(full.split(t), short_form.split(t)) << "'" << t << "'";
}

}  // namespace
}  // namespace nexttok

// GPT-2's encoder.json + vocab.bpe. Oracles: llama.cpp's GGUF of the same vocabulary (its converter
// read these merges), the merge count the README documents (50000, of which 8 begin with '#'), and
// small files written here.
#include <nexttok/tokenizer.hpp>
#include <nexttok/tokenizer/detail/byte_level.hpp>

#include "file_patch.hpp"
#include "test_data.hpp"
#include "tokenizer_test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

namespace nexttok {
namespace {

using ids = std::vector<token_id>;

TEST(gpt2_files, the_original_files_match_llama_cpps_gguf) {
    NEXTTOK_REQUIRE_DATA(test::gpt2_encoder);
    NEXTTOK_REQUIRE_DATA(test::gpt2_vocab);
    const tokenizer files =
        load_gpt2_tokenizer(test::data_path(test::gpt2_encoder), test::data_path(test::gpt2_merges));
    const tokenizer& gguf = test::gpt2_gguf_tokenizer();
    // The "#version" header is skipped, the 8 merges that begin with '#' are kept.
    EXPECT_EQ(files.bpe()->n_merges(), 50000u);
    EXPECT_EQ(files.vocab_size(), 50257u);
    EXPECT_EQ(files.bos(), 50256);
    EXPECT_EQ(files.eos(), 50256);
    EXPECT_TRUE(files.is_control(50256));
    for (token_id id = 0; id < 50257; ++id) ASSERT_EQ(files.vocab()[id].text, gguf.vocab()[id].text) << "token " << id;

    for (const auto& c : test::read_vocab_test_cases(test::data_path(test::gpt2_vocab)))
        EXPECT_EQ(files.encode(c.text, false), c.expected) << "'" << c.text << "'";
    // Texts whose merges begin with '#' ("# #", "## ##", "#### ####", ...).
    for (const std::string text :
         {"#", "##", "###", "####", "########", "################", "## # #$ #$", "#include <x>"}) {
        const auto ids = files.encode(text, false);
        EXPECT_EQ(ids, gguf.encode(text, false)) << "'" << text << "'";
        EXPECT_EQ(files.decode(ids), text);
    }
    EXPECT_EQ(files.encode("################", false).size(), 1u);  // one token, made by the '#' merges
    EXPECT_EQ(files.encode("<|endoftext|>", false, true), (ids{50256}));
}

class gpt2_small_files : public ::testing::Test {
protected:
    // encoder.json: the 256 byte symbols, then "##" (256), "ab" (257).
    std::filesystem::path encoder(const std::vector<std::string>& extra = {"##", "ab"}) {
        nlohmann::json j = nlohmann::json::object();
        for (unsigned b = 0; b < 256; ++b)
            j[std::string(detail::byte_level_table::get().symbol(static_cast<unsigned char>(b)))] = b;
        for (std::size_t i = 0; i < extra.size(); ++i) j[extra[i]] = 256 + i;
        const auto path = dir_.path() / "encoder.json";
        std::ofstream(path) << j.dump();
        return path;
    }
    std::filesystem::path write(const std::string& name, const std::string& content) {
        const auto path = dir_.path() / name;
        std::ofstream(path, std::ios::binary) << content;
        return path;
    }
    template <class Error>
    void expect_error(const std::filesystem::path& enc, const std::filesystem::path& bpe,
                      const std::vector<std::string>& needles) {
        try {
            (void)load_gpt2_tokenizer(enc, bpe);
            ADD_FAILURE() << "no exception";
        } catch (const Error& e) {
            for (const std::string& n : needles)
                EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << "'" << n << "' not in: " << e.what();
        }
    }
    test::temp_dir dir_;
};

TEST_F(gpt2_small_files, only_a_first_line_version_header_is_skipped) {
    const tokenizer tok = load_gpt2_tokenizer(encoder(), write("vocab.bpe", "#version: 0.2\n# #\na b\n"));
    EXPECT_EQ(tok.bpe()->n_merges(), 2u);
    EXPECT_EQ(tok.encode("##", false), (ids{256}));
    EXPECT_EQ(tok.encode("ab", false), (ids{257}));
    // No header: "# #" on the first line is a merge.
    EXPECT_EQ(load_gpt2_tokenizer(encoder(), write("nohdr.bpe", "# #\r\na b")).encode("## ab", false),
              (ids{256, ' ', 257}));
    // A "#version" line after the first is a merge like any other, here of unknown tokens.
    expect_error<format_error>(encoder(), write("late.bpe", "a b\n#version: 0.2\n"),
                               {"late.bpe", "line 2", "'#version:'"});
}

TEST_F(gpt2_small_files, a_merge_naming_an_unknown_token_is_a_format_error) {
    expect_error<format_error>(encoder(), write("unknown.bpe", "#version: 0.2\na b\nĠ xyz\n"),
                               {"unknown.bpe", "line 3", "offset 0x12", "'xyz' is not a token"});
    expect_error<format_error>(encoder(), write("result.bpe", "b a\n"), {"result.bpe", "line 1", "merged text 'ba'"});
    expect_error<format_error>(encoder(), write("nospace.bpe", "ab\n"), {"nospace.bpe", "line 1", "'<left> <right>'"});
}

TEST_F(gpt2_small_files, a_malformed_encoder_is_a_format_error) {
    const auto bpe = write("vocab.bpe", "a b\n");
    expect_error<format_error>(write("list.json", "[\"a\"]"), bpe, {"list.json", "object"});
    expect_error<format_error>(write("dup.json", R"({"a": 0, "b": 0})"), bpe, {"dup.json", "'b'", "found 0 again"});
    expect_error<format_error>(write("gap.json", R"({"a": 0, "b": 5})"), bpe, {"gap.json", "'b'", "found 5"});
    expect_error<format_error>(write("text.json", R"({"a": "zero"})"), bpe, {"text.json", "'a'", "token id"});
    expect_error<format_error>(write("cut.json", R"({"a": 0, )"), bpe, {"cut.json", "offset 0x"});
    EXPECT_THROW((void)load_gpt2_tokenizer(dir_.path() / "absent.json", bpe), io_error);
}

TEST_F(gpt2_small_files, control_tokens_and_special_ids_from_the_options) {
    gpt2_files_options o = gpt2_files_defaults(pre_tokenizer_kind::llama3);
    o.control_tokens.push_back("##");  // an existing entry becomes control
    const tokenizer tok = load_gpt2_tokenizer(encoder(), write("vocab.bpe", "# #\na b\n"), o);
    EXPECT_EQ(tok.vocab_size(), 260u);  // <|begin_of_text|> 258, <|end_of_text|> 259 appended
    EXPECT_EQ(tok.bos(), 258);
    EXPECT_EQ(tok.eos(), 259);
    EXPECT_TRUE(tok.is_control(256));
    EXPECT_EQ(tok.encode("##", true), (ids{258, '#', '#'}));  // a control token is not made by merges
    EXPECT_EQ(tok.encode("##", true, true), (ids{258, 256}));

    o.bos = "<|nothing|>";
    EXPECT_THROW((void)load_gpt2_tokenizer(encoder(), write("vocab2.bpe", "a b\n"), o), invalid_argument_error);
}

}  // namespace
}  // namespace nexttok

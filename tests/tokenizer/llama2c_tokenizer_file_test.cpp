// Malformed llama2.c tokenizer.bin files, made by truncating and patching the real tok512.bin: each
// must be a format_error that names the file, the byte offset and the token, never a crash or a
// huge allocation.
#include <nexttok/tokenizer/llama2c_tokenizer_file.hpp>

#include "test_data.hpp"
#include "tokenizer_test_util.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <unistd.h>

namespace nexttok {
namespace {

class llama2c_tokenizer_file : public ::testing::Test {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(test::data_path(test::tok512_bin)))
            GTEST_SKIP() << "shared test data not found: " << test::data_path(test::tok512_bin);
        original_ = test::read_file_bytes(test::data_path(test::tok512_bin));
        dir_ =
            std::filesystem::temp_directory_path() / ("nexttok_tok_" + std::to_string(::getpid()) + "_" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override {
        if (!dir_.empty()) std::filesystem::remove_all(dir_);
    }

    std::filesystem::path write(const std::string& name, const std::string& bytes) const {
        const auto path = dir_ / name;
        std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return path;
    }

    // Byte offset of token `index`'s record (float score, int32 length, text) in the original file.
    std::size_t record_offset(std::size_t index) const {
        std::size_t offset = 4;  // max_token_length
        for (std::size_t i = 0; i < index; ++i) offset += 8 + static_cast<std::size_t>(length_at(offset + 4));
        return offset;
    }
    std::int32_t length_at(std::size_t offset) const {
        std::int32_t v;
        std::memcpy(&v, original_.data() + offset, 4);
        return v;
    }
    std::string with_length(std::size_t index, std::int32_t length) const {
        std::string bytes = original_;
        std::memcpy(bytes.data() + record_offset(index) + 4, &length, 4);
        return bytes;
    }

    // Loads `path` expecting a format_error whose message names the file, an offset and `needle`.
    static void expect_format_error(const std::filesystem::path& path, const std::string& needle,
                                    std::optional<std::size_t> vocab_size = std::nullopt) {
        try {
            (void)load_llama2c_tokenizer(path, vocab_size);
            ADD_FAILURE() << path << ": no exception";
        } catch (const format_error& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(path.filename().string()), std::string::npos) << what;
            EXPECT_NE(what.find("offset 0x"), std::string::npos) << what;
            EXPECT_NE(what.find(needle), std::string::npos) << what;
        }
    }

    std::string original_;
    std::filesystem::path dir_;
};

TEST_F(llama2c_tokenizer_file, the_intact_file_loads) {
    const tokenizer tok = load_llama2c_tokenizer(write("intact.bin", original_));
    EXPECT_EQ(tok.vocab_size(), 512u);
    EXPECT_EQ(record_offset(512), original_.size());
    // With an explicit vocab_size, exactly that many tokens are read.
    EXPECT_EQ(load_llama2c_vocabulary(write("intact2.bin", original_), 300).size(), 300u);
    // More tokens than the file holds: the end of the file, not an allocation of 2^31 tokens.
    expect_format_error(write("short.bin", original_), "token 512 score", INT32_MAX);
}

TEST_F(llama2c_tokenizer_file, truncated_in_the_middle_of_a_token_text) {
    const std::size_t text_begin = record_offset(300) + 8;  // token 300's text
    ASSERT_GT(length_at(record_offset(300) + 4), 1);
    expect_format_error(write("cut_text.bin", original_.substr(0, text_begin + 1)), "token 300 text");
}

TEST_F(llama2c_tokenizer_file, truncated_in_the_middle_of_a_length_field) {
    expect_format_error(write("cut_length.bin", original_.substr(0, record_offset(100) + 6)), "token 100 length");
}

TEST_F(llama2c_tokenizer_file, negative_length) {
    expect_format_error(write("negative.bin", with_length(42, -1)), "token 42 length");
}

TEST_F(llama2c_tokenizer_file, length_of_two_to_the31_minus_one) {
    expect_format_error(write("huge.bin", with_length(7, INT32_MAX)), "token 7 length");
}

// A length that fits max_token_length but not the file (the last token claims more bytes than remain).
TEST_F(llama2c_tokenizer_file, last_token_runs_past_the_end) {
    const auto path = write("past_end.bin", with_length(511, length_at(record_offset(511) + 4) + 1));
    expect_format_error(path, "token 511 text");
}

TEST_F(llama2c_tokenizer_file, absurd_max_token_length) {
    std::string bytes = original_;
    const std::int32_t absurd = -5;
    std::memcpy(bytes.data(), &absurd, 4);
    expect_format_error(write("max_length.bin", bytes), "max_token_length");
}

TEST_F(llama2c_tokenizer_file, empty_file) { expect_format_error(write("empty.bin", ""), "max_token_length"); }

TEST_F(llama2c_tokenizer_file, missing_file_is_an_io_error) {
    EXPECT_THROW((void)load_llama2c_tokenizer(dir_ / "does_not_exist.bin"), io_error);
}

}  // namespace
}  // namespace nexttok

// Malformed llama2.c checkpoints, made from the shared stories260K.bin.
#include <nexttok/model/load_model.hpp>

#include <file_patch.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

namespace nexttok {
namespace {

const char* const source = "models/stories260K/stories260K.bin";

std::string load_error(const test::temp_dir& dir, const test::bytes& b) {
    const auto path = dir.write("bad.bin", b);
    try {
        load_model(path);
    } catch (const format_error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("bad.bin"), std::string::npos) << msg;
        return msg;
    }
    ADD_FAILURE() << "malformed checkpoint loaded without error";
    return {};
}

TEST(llama2c_loader, reads_the_header) {
    NEXTTOK_REQUIRE_DATA(source);
    auto m = load_model(test::data_path(source));
    const model_config& c = m->config();
    EXPECT_EQ(c.dim, 64);
    EXPECT_EQ(c.hidden_dim, 172);
    EXPECT_EQ(c.n_layers, 5);
    EXPECT_EQ(c.n_heads, 8);
    EXPECT_EQ(c.n_kv_heads, 4);
    EXPECT_EQ(c.vocab_size, 512);
    EXPECT_EQ(c.max_seq_len, 512);
    EXPECT_EQ(c.head_dim, 8);
    EXPECT_TRUE(c.tied_output);
    EXPECT_EQ(m->weights().output.data, m->weights().token_embd.data);
}

TEST(llama2c_loader, truncated_files) {
    NEXTTOK_REQUIRE_DATA(source);
    const auto original = test::read_bytes(test::data_path(source));
    test::temp_dir dir;
    const auto tiny = load_error(dir, test::bytes(original.begin(), original.begin() + 10));
    EXPECT_NE(tiny.find("header field"), std::string::npos) << tiny;
    const auto half = load_error(dir, test::bytes(original.begin(), original.begin() + original.size() / 2));
    EXPECT_NE(half.find("run past the end of the file"), std::string::npos) << half;
    EXPECT_NE(half.find("at offset 0x"), std::string::npos) << half;
}

TEST(llama2c_loader, bad_header_fields) {
    NEXTTOK_REQUIRE_DATA(source);
    const auto original = test::read_bytes(test::data_path(source));
    test::temp_dir dir;
    auto b = original;
    test::put<std::int32_t>(b, 12, -8);  // n_heads
    EXPECT_NE(load_error(dir, b).find("header field n_heads at offset 0xc"), std::string::npos);
    b = original;
    test::put<std::int32_t>(b, 16, 3);  // n_kv_heads does not divide n_heads
    EXPECT_NE(load_error(dir, b).find("not a multiple of n_kv_heads"), std::string::npos);
    b = original;
    test::put<std::int32_t>(b, 0, 1 << 30);  // dim: absurd, rejected before any size arithmetic
    EXPECT_NE(load_error(dir, b).find("dim = 1073741824"), std::string::npos);
    b = original;
    test::put<std::int32_t>(b, 20, -512);  // untied classifier claimed, but the file has none
    EXPECT_NE(load_error(dir, b).find("tensor 'wcls'"), std::string::npos);
    b = original;
    b.push_back(0);
    EXPECT_NE(load_error(dir, b).find("unexpected trailing bytes"), std::string::npos);
}

}  // namespace
}  // namespace nexttok

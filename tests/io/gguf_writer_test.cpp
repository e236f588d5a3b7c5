// gguf_writer against the GGUF reader (itself tested against llama.cpp's files): metadata and
// tensors round-trip byte for byte, tensor data lands at aligned offsets, and a tensor whose byte
// count does not match its shape is rejected.
#include <nexttok/error.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/io/gguf_writer.hpp>

#include "file_patch.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <vector>

namespace nexttok {
namespace {

TEST(gguf_writer, round_trips_metadata_and_tensors) {
    std::vector<std::byte> a(4 * 3 * 4), b(34 * 2 * 2);  // f32 [4, 3]; q8_0 [64, 2]
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::byte>(i * 7);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::byte>(255 - i);
    gguf_writer w;
    w.add_string("general.architecture", "llama");
    w.add_u32("llama.block_count", 22);
    w.add_f32("llama.rope.freq_base", 10000.0f);
    w.add_tensor("a", tensor_type::f32, {4, 3}, a);
    w.add_tensor("b", tensor_type::q8_0, {64, 2}, b);
    const test::temp_dir dir;  // per process: no other run or test writes there
    const auto path = dir.path() / "written.gguf";
    w.write(path);
    {
        const gguf_file g(path);
        EXPECT_EQ(g.get_string("general.architecture"), "llama");
        EXPECT_EQ(g.get_uint("llama.block_count"), 22u);
        EXPECT_EQ(g.get_float("llama.rope.freq_base"), 10000.0);
        const tensor_view* ta = g.find_tensor("a");
        const tensor_view* tb = g.find_tensor("b");
        ASSERT_NE(ta, nullptr);
        ASSERT_NE(tb, nullptr);
        EXPECT_EQ(ta->type, tensor_type::f32);
        EXPECT_EQ(ta->cols(), 4u);
        EXPECT_EQ(ta->rows(), 3u);
        EXPECT_EQ(tb->type, tensor_type::q8_0);
        EXPECT_EQ(tb->cols(), 64u);
        ASSERT_EQ(ta->n_bytes, a.size());
        ASSERT_EQ(tb->n_bytes, b.size());
        EXPECT_EQ(std::memcmp(ta->data, a.data(), a.size()), 0);
        EXPECT_EQ(std::memcmp(tb->data, b.data(), b.size()), 0);
        EXPECT_EQ(ta->file_offset % gguf_writer::alignment, 0u);
        EXPECT_EQ(tb->file_offset % gguf_writer::alignment, 0u);
    }
}

TEST(gguf_writer, rejects_a_size_that_does_not_match_the_shape) {
    std::vector<std::byte> bytes(33);
    gguf_writer w;
    EXPECT_THROW(w.add_tensor("t", tensor_type::q8_0, {32, 1}, bytes), invalid_argument_error);
    EXPECT_THROW(w.add_tensor("t", tensor_type::q8_0, {48, 1}, std::vector<std::byte>(51)), invalid_argument_error);
}

}  // namespace
}  // namespace nexttok

// gguf_writer against the GGUF reader (itself tested against llama.cpp's files): metadata and
// tensors round-trip byte for byte, tensor data lands at aligned offsets, and a tensor whose byte
// count does not match its shape is rejected. An existing file is replaced whole: a mapping of it
// keeps the old bytes, its permissions and a symbolic link to it stay, and a failed write leaves it
// as it was, with no temporary file behind.
#include <nexttok/error.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/io/gguf_writer.hpp>

#include "file_patch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/resource.h>

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

// The names in `dir`, sorted.
std::vector<std::string> entries(const std::filesystem::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// The bytes of `floats` f32 values i * 0.5.
std::vector<std::byte> tensor_bytes(std::size_t floats) {
    std::vector<float> v(floats);
    for (std::size_t i = 0; i < floats; ++i) v[i] = static_cast<float>(i) * 0.5f;
    std::vector<std::byte> b(floats * sizeof(float));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}
// A file of one string key `k` and one f32 tensor `a` of those bytes; expect_file checks both.
void write_file(const std::filesystem::path& path, const std::string& k, const std::vector<std::byte>& a) {
    gguf_writer w;
    w.add_string("k", k);
    w.add_tensor("a", tensor_type::f32, {a.size() / sizeof(float)}, a);
    w.write(path);
}
void expect_file(const gguf_file& g, const std::string& k, const std::vector<std::byte>& a) {
    EXPECT_EQ(g.get_string("k"), k);
    const tensor_view* t = g.find_tensor("a");
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(t->n_bytes, a.size());
    EXPECT_EQ(std::memcmp(t->data, a.data(), a.size()), 0);
}

// A copy of a mapped file written over it, tensors straight from the mapping (add_chat_template
// IN.gguf IN.gguf): truncated in place, the file had died under its own mapping (SIGBUS).
TEST(gguf_writer, writes_a_copy_of_a_mapped_file_over_it) {
    const test::temp_dir dir;
    const auto path = dir.path() / "model.gguf";
    const std::vector<std::byte> a = tensor_bytes(3000);  // 12000 bytes: pages past the first
    write_file(path, "first", a);
    const gguf_file old(path);
    gguf_writer w;
    w.add_string("k", "second");
    for (const tensor_view& t : old.tensors()) w.add_tensor(t);
    w.write(path);
    expect_file(old, "first", a);  // the mapping still reads the file it mapped
    expect_file(gguf_file(path), "second", a);
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"model.gguf"});
}

TEST(gguf_writer, keeps_the_permissions_and_a_symbolic_link) {
    namespace fs = std::filesystem;
    const test::temp_dir dir;
    const auto real = dir.path() / "real.gguf", link = dir.path() / "link.gguf";
    const std::vector<std::byte> a = tensor_bytes(16), b = tensor_bytes(40);
    write_file(real, "first", a);
    const fs::perms mode = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read;
    fs::permissions(real, mode);
    fs::create_symlink("real.gguf", link);
    write_file(link, "second", b);
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
    EXPECT_EQ(fs::read_symlink(link), fs::path("real.gguf"));
    EXPECT_EQ(fs::status(real).permissions() & fs::perms::all, mode);
    expect_file(gguf_file(real), "second", b);
    EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"link.gguf", "real.gguf"}));
}

// A write that fails halfway (the file size limit, RLIMIT_FSIZE, with SIGXFSZ ignored so that
// write() reports EFBIG) throws io_error naming the path, and the old file stays whole.
TEST(gguf_writer, a_failed_write_leaves_the_old_file) {
    const test::temp_dir dir;
    const auto path = dir.path() / "model.gguf";
    const std::vector<std::byte> a = tensor_bytes(16);
    write_file(path, "first", a);
    rlimit before{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
    rlimit small = before;
    small.rlim_cur = 4096;
    const auto previous = std::signal(SIGXFSZ, SIG_IGN);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    std::string message;
    try {
        write_file(path, "second", tensor_bytes(4096));  // 16 KiB of tensor
    } catch (const io_error& e) {
        message = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &before);
    std::signal(SIGXFSZ, previous);
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("File too large"), std::string::npos) << message;
    expect_file(gguf_file(path), "first", a);
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"model.gguf"});
}

TEST(gguf_writer, names_the_path_it_cannot_write) {
    const test::temp_dir dir;
    std::filesystem::create_directory(dir.path() / "a_directory");
    for (const auto& path : {dir.path() / "a_directory", dir.path() / "missing" / "model.gguf"}) {
        try {
            write_file(path, "k", tensor_bytes(4));
            ADD_FAILURE() << "no error for " << path;
        } catch (const io_error& e) {
            EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"a_directory"});
    EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "a_directory"));
}

}  // namespace
}  // namespace nexttok

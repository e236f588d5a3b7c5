// Inputs that the fuzz targets (tests/fuzz) found to reach undefined behaviour in the readers of
// this folder; each must now be a format_error naming the file, the place and the rule.
#include <nexttok/io/safetensors.hpp>

#include <file_patch.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace nexttok {
namespace {

// A safetensors file: the 8-byte header length, the header, then `data_bytes` bytes of data.
test::bytes safetensors(const std::string& header, std::size_t data_bytes) {
    test::bytes b(8 + header.size() + data_bytes, '\0');
    const std::uint64_t n = header.size();
    std::memcpy(b.data(), &n, 8);
    std::memcpy(b.data() + 8, header.data(), header.size());
    return b;
}

// Found by tests/fuzz/safetensors_hf: a header whose length is not padded to a multiple of 8 put an
// F32 tensor at an odd address, and the kernels read its floats in place (a misaligned load).
TEST(safetensors_fuzz_regressions, misaligned_tensor_data_is_a_format_error) {
    const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";  // 54 bytes: data at 62
    ASSERT_NE((8 + header.size()) % 4, 0u);
    const test::temp_dir dir;
    const auto path = dir.write("model.safetensors", safetensors(header, 8));
    try {
        safetensors_file f(path);
        FAIL() << "a misaligned F32 tensor was accepted";
    } catch (const format_error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("model.safetensors"), std::string::npos) << msg;
        EXPECT_NE(msg.find("tensor 'w'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("at offset 0x3e"), std::string::npos) << msg;
        EXPECT_NE(msg.find("not aligned to its 4-byte elements"), std::string::npos) << msg;
    }
}

// The same tensor behind a header padded as the reference writer pads it loads, and an F16 tensor
// needs only 2-byte alignment.
TEST(safetensors_fuzz_regressions, aligned_tensor_data_loads) {
    std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    header.append((8 - (8 + header.size()) % 8) % 8, ' ');
    const test::temp_dir dir;
    const safetensors_file f(dir.write("model.safetensors", safetensors(header, 8)));
    ASSERT_NE(f.find_tensor("w"), nullptr);
    EXPECT_EQ(f.find_tensor("w")->file_offset, 8 + header.size());

    const std::string half = R"({"h":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}  )";  // 56 bytes: data at 64
    const safetensors_file g(dir.write("half.safetensors", safetensors(half, 2)));
    EXPECT_NE(g.find_tensor("h"), nullptr);
}

}  // namespace
}  // namespace nexttok

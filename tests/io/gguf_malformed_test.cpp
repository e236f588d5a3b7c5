// Malformed GGUF files, made by truncating or patching the shared stories260K.gguf, must give a
// format_error (or unsupported_error) whose message names the file, the place and the field,
// never a crash or a huge allocation.
#include <nexttok/io/gguf.hpp>
#include <nexttok/model/detail/weight_checks.hpp>
#include <nexttok/model/load_model.hpp>

#include <file_patch.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#include <cstring>

namespace nexttok {
namespace {

const char* const source = "models/stories260K/stories260K.gguf";

class gguf_malformed : public ::testing::Test {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(test::data_path(source)))
            GTEST_SKIP() << "shared test data not found: " << test::data_path(source);
        original_ = test::read_bytes(test::data_path(source));
    }

    // Loads the patched bytes as a model and returns the error message; fails if it loads.
    template <class Error = format_error>
    std::string load_error(const test::bytes& b, const std::string& name = "bad.gguf") {
        const auto path = dir_.write(name, b);
        try {
            load_model(path);
        } catch (const Error& e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find(name), std::string::npos) << "message does not name the file: " << msg;
            return msg;
        } catch (const std::exception& e) {
            ADD_FAILURE() << "wrong exception type: " << e.what();
            return {};
        }
        ADD_FAILURE() << "malformed file loaded without error";
        return {};
    }

    // Offset of the tensor-directory entry of `name` (its name-length field).
    std::size_t tensor_entry(const std::string& name) const { return test::find(original_, name) - 8; }

    test::bytes original_;
    test::temp_dir dir_;
};

TEST_F(gguf_malformed, bad_magic) {
    auto b = original_;
    b[0] = 'X';
    const auto msg = load_error(b);  // not GGUF, so read as a llama2.c checkpoint and rejected there
    EXPECT_NE(msg.find("read as a llama2.c checkpoint"), std::string::npos) << msg;
    test::bytes gguf_like = original_;
    gguf_like[3] = 'G';
    const auto path = dir_.write("magic.gguf", gguf_like);
    try {
        gguf_file g(path);
        FAIL();
    } catch (const format_error& e) {
        EXPECT_NE(std::string(e.what()).find("magic at offset 0x0"), std::string::npos) << e.what();
    }
}

TEST_F(gguf_malformed, unknown_versions) {
    for (std::uint32_t v : {1u, 4u, 0xffffffffu}) {
        auto b = original_;
        test::put<std::uint32_t>(b, 4, v);
        const auto msg = load_error(b);
        EXPECT_NE(msg.find("version at offset 0x4"), std::string::npos) << msg;
        EXPECT_NE(msg.find("expected 2 or 3"), std::string::npos) << msg;
    }
}

TEST_F(gguf_malformed, truncated_anywhere) {
    // Cut in the header, the metadata, the tensor directory and the tensor data.
    for (std::size_t size : {std::size_t{3}, std::size_t{20}, std::size_t{100}, std::size_t{5000}, std::size_t{14000},
                             std::size_t{14100}, original_.size() / 2, original_.size() - 1}) {
        test::bytes b(original_.begin(), original_.begin() + static_cast<std::ptrdiff_t>(size));
        const auto msg = load_error(b);
        EXPECT_NE(msg.find("offset 0x"), std::string::npos) << "size " << size << ": " << msg;
    }
}

TEST_F(gguf_malformed, absurd_string_length_is_rejected_before_allocating) {
    auto b = original_;
    test::put<std::uint64_t>(b, 24, std::uint64_t{1} << 60);  // length of the first key
    const auto msg = load_error(b);
    EXPECT_NE(msg.find("metadata key #0 (string of 1152921504606846976 bytes) at offset 0x20"), std::string::npos)
        << msg;
}

TEST_F(gguf_malformed, absurd_array_count) {
    auto b = original_;
    const std::size_t key = test::find(b, "tokenizer.ggml.tokens");
    // key bytes, then u32 type (array), u32 element type, u64 count.
    const std::size_t count = key + std::string("tokenizer.ggml.tokens").size() + 8;
    test::put<std::uint64_t>(b, count, std::uint64_t{1} << 60);
    const auto msg = load_error(b);
    EXPECT_NE(msg.find("array of metadata key 'tokenizer.ggml.tokens'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cannot fit"), std::string::npos) << msg;
}

TEST_F(gguf_malformed, absurd_counts_in_header) {
    auto b = original_;
    test::put<std::uint64_t>(b, 8, std::uint64_t{1} << 60);
    EXPECT_NE(load_error(b).find("tensor count"), std::string::npos);
    b = original_;
    test::put<std::uint64_t>(b, 16, std::uint64_t{1} << 60);
    EXPECT_NE(load_error(b).find("metadata key/value count"), std::string::npos);
}

TEST_F(gguf_malformed, unknown_value_type) {
    auto b = original_;
    const std::size_t key = test::find(b, "general.architecture");
    test::put<std::uint32_t>(b, key + std::string("general.architecture").size(), 99);
    const auto msg = load_error(b);
    EXPECT_NE(msg.find("type of metadata key 'general.architecture'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("unknown value type 99"), std::string::npos) << msg;
}

TEST_F(gguf_malformed, unknown_tensor_type) {
    auto b = original_;
    const std::size_t entry = tensor_entry("output_norm.weight");
    const std::size_t type = entry + 8 + std::string("output_norm.weight").size() + 4 + 8;  // 1 dimension
    ASSERT_EQ(test::get<std::uint32_t>(b, type), 0u);
    test::put<std::uint32_t>(b, type, 99);
    const auto msg = load_error(b);
    EXPECT_NE(msg.find("tensor 'output_norm.weight' at offset"), std::string::npos) << msg;
    EXPECT_NE(msg.find("unknown tensor type 99"), std::string::npos) << msg;
}

TEST_F(gguf_malformed, tensor_data_out_of_bounds) {
    auto b = original_;
    const std::size_t entry = tensor_entry("output_norm.weight");
    const std::size_t offset = entry + 8 + std::string("output_norm.weight").size() + 4 + 8 + 4;
    test::put<std::uint64_t>(b, offset, std::uint64_t{1} << 40);
    const auto msg = load_error(b);
    EXPECT_NE(msg.find("tensor 'output_norm.weight'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("past the end of the file"), std::string::npos) << msg;
    // An offset that wraps around when the size is added.
    test::put<std::uint64_t>(b, offset, ~std::uint64_t{0} - 31);
    EXPECT_NE(load_error(b).find("past the end of the file"), std::string::npos);
}

TEST_F(gguf_malformed, overlapping_tensors) {
    auto b = original_;
    const std::size_t embd = tensor_entry("token_embd.weight");
    const std::size_t embd_offset = embd + 8 + std::string("token_embd.weight").size() + 4 + 16 + 4;
    const std::size_t norm = tensor_entry("output_norm.weight");
    const std::size_t norm_offset = norm + 8 + std::string("output_norm.weight").size() + 4 + 8 + 4;
    test::put<std::uint64_t>(b, norm_offset, test::get<std::uint64_t>(b, embd_offset) + 64);
    const auto msg = load_error(b);
    EXPECT_NE(msg.find("overlaps the data of tensor"), std::string::npos) << msg;
}

TEST_F(gguf_malformed, shape_does_not_match_hyper_parameters) {
    auto b = original_;
    const std::size_t entry = tensor_entry("blk.2.attn_k.weight");
    const std::size_t dim1 = entry + 8 + std::string("blk.2.attn_k.weight").size() + 4 + 8;
    ASSERT_EQ(test::get<std::uint64_t>(b, dim1), 32u);
    test::put<std::uint64_t>(b, dim1, 16);  // fewer rows: still in bounds, wrong for n_kv_heads * head_dim
    const auto msg = load_error(b);
    EXPECT_NE(msg.find("tensor 'blk.2.attn_k.weight' at offset 0x"), std::string::npos) << msg;
    EXPECT_NE(msg.find("shape [64, 16] does not match the hyper-parameters (expected [64, 32])"), std::string::npos)
        << msg;
}

TEST_F(gguf_malformed, missing_tensor) {
    auto b = original_;
    b[test::find(b, "output_norm.weight")] = 'X';
    const auto msg = load_error(b);
    EXPECT_NE(msg.find("tensor 'output_norm.weight' is missing"), std::string::npos) << msg;
}

TEST_F(gguf_malformed, missing_hyper_parameter) {
    auto b = original_;
    b[test::find(b, "llama.block_count")] = 'X';
    const auto msg = load_error(b);
    EXPECT_NE(msg.find("metadata key 'llama.block_count' is missing"), std::string::npos) << msg;
}

TEST_F(gguf_malformed, unsupported_tensor_type_names_itself) {
    // token_embd [64, 512] f32 relabelled q8_1 (36 bytes per 32 elements): a well-formed file whose
    // smaller tensor still lies inside its old bytes, in a type the kernels do not compute with.
    ASSERT_FALSE(detail::is_supported_weight_type(tensor_type::q8_1)) << "pick a type that is still unsupported";
    const std::uint64_t offset = gguf_file(test::data_path(source)).find_tensor("token_embd.weight")->file_offset;
    auto b = original_;
    const std::size_t entry = tensor_entry("token_embd.weight");
    const std::size_t type = entry + 8 + std::string("token_embd.weight").size() + 4 + 16;  // 2 dimensions
    ASSERT_EQ(test::get<std::uint32_t>(b, type), 0u);
    test::put<std::uint32_t>(b, type, static_cast<std::uint32_t>(tensor_type::q8_1));
    const auto msg = load_error<unsupported_error>(b, "unsupported.gguf");
    EXPECT_NE(msg.find("unsupported.gguf: tensor 'token_embd.weight' at offset " + detail::hex_offset(offset) +
                       ": type q8_1 is not supported"),
              std::string::npos)
        << msg;
}

// Values and tensor entries patched in place: each error names the file, the key or tensor, its
// offset and what was expected.
TEST_F(gguf_malformed, tensor_entries_out_of_their_domain) {
    const std::string name = "output_norm.weight";  // [64] f32
    const std::size_t entry = tensor_entry(name);
    const std::size_t n_dims = entry + 8 + name.size();
    const std::size_t dim0 = n_dims + 4, type = dim0 + 8, offset = type + 4;
    const std::string at = "tensor '" + name + "' at offset " + detail::hex_offset(entry) + ": ";
    const auto with = [&](std::size_t where, auto value) {
        auto b = original_;
        test::put(b, where, value);
        return load_error(b);
    };
    EXPECT_NE(with(n_dims, std::uint32_t{5}).find(at + "5 dimensions (expected 1 to 4)"), std::string::npos);
    EXPECT_NE(with(n_dims, std::uint32_t{0}).find(at + "0 dimensions (expected 1 to 4)"), std::string::npos);
    EXPECT_NE(with(dim0, std::uint64_t{0}).find(at + "absurd shape: dimension 0 is 0"), std::string::npos);
    EXPECT_NE(with(dim0, std::uint64_t{1} << 41).find(at + "absurd shape: dimension 0 is 2199023255552"),
              std::string::npos);
    // q8_0 holds blocks of 32 values: a row of 64 fits, one of 48 does not.
    auto b = original_;
    test::put<std::uint64_t>(b, dim0, 48);
    test::put<std::uint32_t>(b, type, static_cast<std::uint32_t>(tensor_type::q8_0));
    EXPECT_NE(load_error(b).find(at + "first dimension 48 is not a multiple of the q8_0 block size 32"),
              std::string::npos);
    const std::uint64_t data = test::get<std::uint64_t>(original_, offset);
    EXPECT_NE(with(offset, data + 4)
                  .find(at + "data offset " + detail::hex_offset(data + 4) + " is not a multiple of the alignment 32"),
              std::string::npos);
    // blk.0.attn_k.weight renamed blk.0.attn_q.weight: two entries of one name.
    b = original_;
    b[test::find(b, "blk.0.attn_k.weight") + 11] = 'q';
    const std::string msg = load_error(b);
    EXPECT_NE(msg.find("tensor 'blk.0.attn_q.weight' at offset 0x"), std::string::npos) << msg;
    EXPECT_NE(msg.find("duplicate tensor name"), std::string::npos) << msg;
}

// Hyper-parameters the loader refuses, naming the key: an unknown architecture, no heads, a width
// that does not split into the heads.
TEST_F(gguf_malformed, hyper_parameters_out_of_their_domain) {
    auto b = original_;
    const std::string arch_key = "general.architecture";
    const std::size_t arch = test::find(b, arch_key) + arch_key.size() + 4 + 8;  // type, then the string's length
    ASSERT_EQ(std::string(b.data() + arch, 5), "llama");
    std::memcpy(b.data() + arch, "mamba", 5);
    const auto msg = load_error<unsupported_error>(b);
    EXPECT_NE(msg.find("general.architecture 'mamba' is not supported (expected one of"), std::string::npos) << msg;
    const std::string heads_key = "llama.attention.head_count";
    // The key followed by its type, u32 (4): not head_count_kv.
    const std::size_t heads = test::find(original_, heads_key + std::string(1, '\x04')) + heads_key.size() + 4;
    b = original_;
    test::put<std::uint32_t>(b, heads, 0);
    EXPECT_NE(load_error(b).find("metadata key '" + heads_key + "' must be positive"), std::string::npos);
    b = original_;
    test::put<std::uint32_t>(b, heads, 7);
    EXPECT_NE(load_error(b).find("dim = 64 is not a multiple of n_heads = 7"), std::string::npos);
}

// Files built byte by byte, for layouts no writer makes: arrays nested too deep, a key twice, an
// alignment that is not a power of two.
class raw_gguf {
public:
    explicit raw_gguf(std::uint64_t n_kv) {
        bytes_ = {'G', 'G', 'U', 'F'};
        put<std::uint32_t>(3);
        put<std::uint64_t>(0);  // tensors
        put<std::uint64_t>(n_kv);
    }
    template <class T>
    raw_gguf& put(T v) {
        const auto* p = reinterpret_cast<const char*>(&v);
        bytes_.insert(bytes_.end(), p, p + sizeof(T));
        return *this;
    }
    raw_gguf& key(const std::string& k) {
        put<std::uint64_t>(k.size());
        bytes_.insert(bytes_.end(), k.begin(), k.end());
        return *this;
    }
    const test::bytes& bytes() const { return bytes_; }

private:
    test::bytes bytes_;
};

std::string gguf_error(const test::bytes& b) {
    test::temp_dir dir;
    try {
        gguf_file g(dir.write("raw.gguf", b));
    } catch (const format_error& e) {
        return e.what();
    }
    ADD_FAILURE() << "no error";
    return {};
}

TEST(gguf_raw, arrays_nested_too_deep) {
    constexpr std::uint32_t array = 9, u8 = 0;
    const auto nested = [&](int levels) {
        raw_gguf g(1);
        g.key("deep").put(array);
        for (int i = 1; i < levels; ++i) g.put(array).put<std::uint64_t>(1);  // an array holding one array
        g.put(u8).put<std::uint64_t>(1).put<std::uint8_t>(7);
        return g.bytes();
    };
    EXPECT_NO_THROW((void)gguf_file(test::temp_dir().write("ok.gguf", nested(4))));
    const std::string msg = gguf_error(nested(5));
    EXPECT_NE(msg.find("raw.gguf: array of metadata key 'deep' at offset 0x"), std::string::npos) << msg;
    EXPECT_NE(msg.find("arrays nested deeper than 4 levels"), std::string::npos) << msg;
    EXPECT_NE(gguf_error(nested(1'000)).find("arrays nested deeper than 4 levels"), std::string::npos);
}

TEST(gguf_raw, bools_out_of_domain_a_key_twice_and_a_bad_alignment) {
    constexpr std::uint32_t array = 9, boolean = 7, u32 = 4;
    raw_gguf flag(1);
    flag.key("flag").put(boolean).put<std::uint8_t>(2);
    std::string msg = gguf_error(flag.bytes());
    EXPECT_NE(msg.find("raw.gguf: value of metadata key 'flag' at offset 0x28: a bool must be 0 or 1, got 2"),
              std::string::npos)
        << msg;

    raw_gguf bools(1);
    bools.key("flags")
        .put(array)
        .put(boolean)
        .put<std::uint64_t>(3)
        .put<std::uint8_t>(1)
        .put<std::uint8_t>(0)
        .put<std::uint8_t>(5);
    msg = gguf_error(bools.bytes());
    EXPECT_NE(msg.find("raw.gguf: array of metadata key 'flags' at offset 0x"), std::string::npos) << msg;
    EXPECT_NE(msg.find("a bool element must be 0 or 1"), std::string::npos) << msg;

    raw_gguf twice(2);
    twice.key("k").put(u32).put<std::uint32_t>(1).key("k").put(u32).put<std::uint32_t>(2);
    msg = gguf_error(twice.bytes());
    EXPECT_NE(msg.find("raw.gguf: metadata key 'k' at offset 0x29: duplicate key"), std::string::npos) << msg;

    raw_gguf align(1);
    align.key("general.alignment").put(u32).put<std::uint32_t>(48);
    msg = gguf_error(align.bytes());
    EXPECT_NE(msg.find("raw.gguf: metadata key 'general.alignment' at offset 0x"), std::string::npos) << msg;
    EXPECT_NE(msg.find("expected a power of two, got 48"), std::string::npos) << msg;
}

TEST(gguf_file, reads_metadata_of_every_kind) {
    NEXTTOK_REQUIRE_DATA(source);
    gguf_file g(test::data_path(source));
    EXPECT_EQ(g.version(), 3u);
    EXPECT_EQ(g.alignment(), 32u);
    EXPECT_EQ(g.data_offset() % 32, 0u);
    EXPECT_EQ(g.get_string("general.architecture"), "llama");
    EXPECT_EQ(g.get_uint("llama.embedding_length"), 64u);
    EXPECT_FLOAT_EQ(static_cast<float>(g.get_float("llama.attention.layer_norm_rms_epsilon")), 1e-5f);
    const auto tokens = g.get_string_array("tokenizer.ggml.tokens");
    ASSERT_EQ(tokens.size(), 512u);
    EXPECT_EQ(tokens[1], "<s>");
    EXPECT_EQ(tokens[3], "<0x00>");
    EXPECT_EQ(g.get_f32_array("tokenizer.ggml.scores").size(), 512u);
    EXPECT_EQ(g.get_i32_array("tokenizer.ggml.token_type")[1], 3);  // control
    EXPECT_FALSE(g.find_uint("no.such.key").has_value());
    EXPECT_THROW(g.find_string("llama.block_count"), format_error);  // wrong type is an error, not a default
    EXPECT_THROW(g.get_string("no.such.key"), format_error);
    ASSERT_NE(g.find_tensor("blk.4.ffn_down.weight"), nullptr);
    EXPECT_EQ(g.find_tensor("blk.4.ffn_down.weight")->ne[0], 172u);
    EXPECT_EQ(g.tensors().size(), 3u + 5u * 9u);
}

}  // namespace
}  // namespace nexttok

namespace nexttok {
namespace {

// Llama 3.1's rope_freqs.weight must be rope_dim / 2 f32 values; any other shape is a format error
// naming the tensor and what was expected, never a silently unscaled model.
// (token_embd.weight and rope_freqs.weight have the same length, so renaming keeps the layout.)
TEST(gguf_rope_freqs, a_tensor_of_the_wrong_shape_is_refused) {
    NEXTTOK_REQUIRE_DATA("models/stories260K/stories260K.gguf");
    auto b = test::read_bytes(test::data_path("models/stories260K/stories260K.gguf"));
    std::memcpy(b.data() + test::find(b, "token_embd.weight"), "rope_freqs.weight", 17);
    test::temp_dir dir;
    try {
        load_model(dir.write("scaled.gguf", b));
        FAIL() << "a 2-D rope_freqs.weight must be refused";
    } catch (const format_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("scaled.gguf: tensor 'rope_freqs.weight'"), std::string::npos) << what;
        EXPECT_NE(what.find("expected a vector of rope_dim / 2 = 4"), std::string::npos) << what;
    }
}

}  // namespace
}  // namespace nexttok

// The load-time scan of weight values (tensor_check.hpp, load_options::check_tensors): copies of
// the shared GGUF models with one value made NaN or infinite (a float element, or a block's
// scale) are refused with the tensor, its offset, the element or block and the value named;
// tensor_check::never loads them; the clean files load under tensor_check::always.
#include "../support/file_patch.hpp"
#include "../support/test_data.hpp"

#include <nexttok/io/gguf.hpp>
#include <nexttok/io/gguf_writer.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/model/tensor_check.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace nexttok {
namespace {

constexpr load_options always{.check_tensors = tensor_check::always};
constexpr load_options never{.check_tensors = tensor_check::never};

struct patch {
    std::string file;  // under models/random/
    std::string tensor;
    std::uint64_t at;    // byte offset inside the tensor's data
    std::uint32_t bits;  // written little-endian, `width` bytes
    int width;
    std::string expected;  // the end of the message
};

// A copy of the file with p applied; *place receives "tensor '<name>' at offset 0x...".
std::filesystem::path patched(const test::temp_dir& dir, const patch& p, std::string* place) {
    const auto source = test::data_path("models/random/" + p.file);
    std::uint64_t offset = 0;
    {
        gguf_file g(source);
        const tensor_view* t = g.find_tensor(p.tensor);
        EXPECT_NE(t, nullptr) << p.tensor;
        if (t == nullptr) return {};
        offset = t->file_offset;
        *place = "tensor '" + p.tensor + "' at offset " + detail::hex_offset(offset);
    }
    test::bytes b = test::read_bytes(source);
    if (p.width == 4)
        test::put<std::uint32_t>(b, offset + p.at, p.bits);
    else
        test::put<std::uint16_t>(b, offset + p.at, static_cast<std::uint16_t>(p.bits));
    return dir.write(p.file, b);
}

void expect_refused(const std::filesystem::path& path, const std::string& place, const std::string& expected,
                    const load_options& o) {
    try {
        (void)load_model(path, o);
        ADD_FAILURE() << path << ": loaded";
    } catch (const format_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find(path.filename().string() + ": " + place + ": " + expected), std::string::npos) << m;
        EXPECT_EQ(m.substr(m.size() - expected.size()), expected) << m;
    }
}

const std::vector<patch> patches = {
    // f32: element 12 of row 3 (rows of 128) a quiet NaN.
    {"tiny-f32.gguf", "blk.0.attn_q.weight", (3 * 128 + 12) * 4, 0x7fc00000u, 4, "element 12 of row 3 is NaN"},
    // f32 vector: element 7 of the output norm -inf.
    {"tiny-f32.gguf", "output_norm.weight", 7 * 4, 0xff800000u, 4, "element 7 is -inf"},
    // f16: element 5 of row 7 +inf.
    {"tiny-f16.gguf", "blk.0.ffn_up.weight", (7 * 128 + 5) * 2, 0x7c00u, 2, "element 5 of row 7 is inf"},
    // q8_0 (34-byte blocks, 4 a row): block 2 of row 3, d = inf.
    {"tiny-q8_0.gguf", "token_embd.weight", (3 * 4 + 2) * 34, 0x7c00u, 2, "block 2 of row 3 has scale d = inf"},
    // q4_0 (18-byte blocks, 4 a row): block 1 of row 0, d = NaN.
    {"tiny-q4_0.gguf", "blk.0.attn_v.weight", 1 * 18, 0x7e00u, 2, "block 1 of row 0 has scale d = NaN"},
    // q4_k (144-byte blocks, 1 a row of 256): dmin of row 5's block, -inf.
    {"small-q4_k_m.gguf", "token_embd.weight", 5 * 144 + 2, 0xfc00u, 2, "block 0 of row 5 has scale dmin = -inf"},
};

TEST(tensor_check, non_finite_values_and_scales_are_refused_with_their_place) {
    NEXTTOK_REQUIRE_DATA("models/random/tiny-f32.gguf");
    test::temp_dir dir;
    for (const patch& p : patches) {
        SCOPED_TRACE(p.file + " " + p.tensor);
        std::string place;
        const auto path = patched(dir, p, &place);
        expect_refused(path, place, p.expected, always);
        expect_refused(path, place, p.expected, load_options{});  // automatic: these files are far below 2 GiB
        EXPECT_NO_THROW((void)load_model(path, never));
        // automatic skips models over its size bound.
        EXPECT_NO_THROW((void)load_model(path, load_options{.check_tensors_max_bytes = 1024}));
    }
}

TEST(tensor_check, clean_files_load_under_always) {
    NEXTTOK_REQUIRE_DATA("models/random/tiny-f32.gguf");
    for (const char* f : {"tiny-f32.gguf", "tiny-f16.gguf", "tiny-q8_0.gguf", "tiny-q4_0.gguf", "small-q4_k_m.gguf",
                          "mixed-dim384-q2_k.gguf", "mixed-dim384-q3_k_m.gguf", "mixed-dim384-q5_1.gguf",
                          "mixed-dim384-iq4_xs.gguf", "mixed-dim384-iq4_nl.gguf", "small-q6_k.gguf"})
        EXPECT_NO_THROW((void)load_model(test::data_path(std::string("models/random/") + f), always)) << f;
    NEXTTOK_REQUIRE_DATA("models/stories260K/stories260K.bin");
    EXPECT_NO_THROW((void)load_model(test::data_path("models/stories260K/stories260K.bin"), always));
}

// bf16: tiny-f32 rewritten with blk.0.attn_k.weight in bf16 (the top half of each f32).
TEST(tensor_check, bf16_infinity_is_refused) {
    NEXTTOK_REQUIRE_DATA("models/random/tiny-f32.gguf");
    test::temp_dir dir;
    gguf_file g(test::data_path("models/random/tiny-f32.gguf"));
    gguf_writer w;
    for (const auto& [key, value] : g.metadata()) w.add_value(key, value);
    std::vector<std::uint16_t> bf16;
    const tensor_view* k = g.find_tensor("blk.0.attn_k.weight");
    ASSERT_NE(k, nullptr);
    for (std::uint64_t i = 0; i < k->n_elements(); ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, k->data + 4 * i, 4);
        bf16.push_back(static_cast<std::uint16_t>(bits >> 16));
    }
    for (const tensor_view& t : g.tensors())
        if (t.name != k->name)
            w.add_tensor(t);
        else
            w.add_tensor(t.name, tensor_type::bf16, {t.ne[0], t.ne[1]}, std::as_bytes(std::span(bf16)));
    const auto clean = dir.path() / "clean-bf16.gguf";
    w.write(clean);
    EXPECT_NO_THROW((void)load_model(clean, always));

    bf16[2 * k->ne[0] + 9] = 0xff80u;  // element 9 of row 2: -inf
    gguf_writer bad;
    for (const auto& [key, value] : g.metadata()) bad.add_value(key, value);
    for (const tensor_view& t : g.tensors())
        if (t.name != k->name)
            bad.add_tensor(t);
        else
            bad.add_tensor(t.name, tensor_type::bf16, {t.ne[0], t.ne[1]}, std::as_bytes(std::span(bf16)));
    const auto path = dir.path() / "bad-bf16.gguf";
    bad.write(path);
    const std::string place = "tensor 'blk.0.attn_k.weight' at offset " +
                              detail::hex_offset(gguf_file(path).find_tensor("blk.0.attn_k.weight")->file_offset);
    expect_refused(path, place, "element 9 of row 2 is -inf", always);
    EXPECT_NO_THROW((void)load_model(path, never));
}

// Each scale field of every block type, alone made inf in the second row's block, is refused by
// name; the same bits two bytes away (quants or integer sub-block scales) are not a float and pass.
TEST(tensor_check, every_block_type_checks_each_of_its_scale_fields) {
    for (tensor_type t : {tensor_type::q8_0, tensor_type::q4_0, tensor_type::q4_1, tensor_type::q5_0, tensor_type::q5_1,
                          tensor_type::iq4_nl, tensor_type::q2_k, tensor_type::q3_k, tensor_type::q4_k,
                          tensor_type::q5_k, tensor_type::q6_k, tensor_type::iq4_xs}) {
        const auto traits = *find_tensor_type_traits(static_cast<std::uint32_t>(t));
        const auto fields = detail::block_scale_fields(t);
        ASSERT_FALSE(fields.empty()) << to_string(t);
        for (const auto& f : fields) {
            std::vector<std::byte> block(2 * traits.block_bytes, std::byte{0});  // 2 rows of one block
            const std::uint16_t inf = 0x7c00;
            std::memcpy(block.data() + traits.block_bytes + f.offset, &inf, 2);
            tensor_view v;
            v.name = "w";
            v.type = t;
            v.n_dims = 2;
            v.ne = {traits.block_size, 2, 1, 1};
            v.data = block.data();
            v.n_bytes = block.size();
            try {
                check_tensor_values("m.gguf", v);
                ADD_FAILURE() << to_string(t) << " " << f.name << ": accepted";
            } catch (const format_error& e) {
                EXPECT_NE(std::string(e.what()).find(std::string("block 0 of row 1 has scale ") + f.name + " = inf"),
                          std::string::npos)
                    << e.what();
            }
            // The same inf placed in the quants (the field's neighbour bytes) is not a scale: accepted.
            std::fill(block.begin(), block.end(), std::byte{0});
            const std::uint32_t quant_at =
                f.offset + 2 < traits.block_bytes && f.offset + 4 <= traits.block_bytes ? f.offset + 2 : f.offset - 2;
            bool other_field = false;
            for (const auto& g : fields) other_field = other_field || g.offset == quant_at;
            if (other_field) continue;
            std::memcpy(block.data() + quant_at, &inf, 2);
            EXPECT_NO_THROW(check_tensor_values("m.gguf", v)) << to_string(t) << " bytes " << quant_at;
        }
    }
}

}  // namespace
}  // namespace nexttok

// A model repacks its q8_0 and q4_0 matrices when it is built (model.hpp, tensor/repacked_blocks.hpp):
// which views change type, that every repacked row reads back bitwise as the file's row, and that
// the repacked model meets llama.cpp's logits (the oracle) as the file's layout does, the two
// differing only by the float order of the sums (far below the 8-bit tolerance).
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/kernels/dequantize.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/model/random_model.hpp>

#include <reference_logits.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace nexttok {
namespace {

std::vector<const tensor_view*> matrices(const model& m) {
    std::vector<const tensor_view*> v{&m.weights().output};
    for (const layer_weights& l : m.weights().layers)
        for (const tensor_view* t :
             {&l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_gate, &l.ffn_up, &l.ffn_down})
            v.push_back(t);
    return v;
}

void expect_rows_bitwise(const tensor_view& a, const tensor_view& b) {
    std::vector<float> x(a.cols()), y(b.cols());
    for (std::uint64_t r = 0; r < a.rows(); ++r) {
        read_row(a, static_cast<std::int64_t>(r), x.data());
        read_row(b, static_cast<std::int64_t>(r), y.data());
        for (std::size_t e = 0; e < x.size(); ++e)
            ASSERT_EQ(std::bit_cast<std::uint32_t>(x[e]), std::bit_cast<std::uint32_t>(y[e]))
                << a.name << " row " << r << " element " << e;
    }
}

std::vector<float> prompt_logits(const std::shared_ptr<const model>& m, const std::vector<token_id>& prompt) {
    decoder<float> dec(m);
    kv_cache<float> cache(m->config(), static_cast<std::int64_t>(prompt.size()));
    std::vector<float> logits(prompt.size() * static_cast<std::size_t>(m->config().vocab_size));
    dec.forward(prompt, 0, cache, logits, logits_for::all);
    return logits;
}

// A one-layer Llama shape for random models: rows of 2 and 5 blocks, one partial group each.
model_config small_config(std::int64_t n_heads, std::int64_t n_kv_heads, bool tied) {
    model_config c;
    c.dim = 64;
    c.hidden_dim = 160;
    c.n_layers = 1;
    c.n_heads = n_heads;
    c.n_kv_heads = n_kv_heads;
    c.vocab_size = 96;
    c.max_seq_len = 64;
    c.tied_output = tied;
    return c;
}

class model_repack_test : public ::testing::TestWithParam<const char*> {};

TEST_P(model_repack_test, matrices_are_repacked_read_back_as_the_file_and_meet_the_reference) {
    const std::string name = GetParam();
    NEXTTOK_REQUIRE_DATA("models/random/" + name + ".gguf");
    const auto path = test::data_path("models/random/" + name + ".gguf");
    load_options plain_options;
    plain_options.repack_weights = false;
    const auto repacked = load_model(path), plain = load_model(path, plain_options);
    const auto a = matrices(*repacked), b = matrices(*plain);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_TRUE(b[i]->type == tensor_type::q8_0 || b[i]->type == tensor_type::q4_0) << b[i]->name;
        EXPECT_EQ(a[i]->type, repacked_type(b[i]->type)) << a[i]->name;
        EXPECT_EQ(a[i]->n_bytes, b[i]->n_bytes) << a[i]->name;
        EXPECT_NE(a[i]->data, b[i]->data) << a[i]->name;
        expect_rows_bitwise(*a[i], *b[i]);
    }
    // The embedding (not the classifier in these files) stays on the file's bytes.
    EXPECT_EQ(repacked->weights().token_embd.type, plain->weights().token_embd.type);

    const auto ref = test::read_reference_logits(test::data_path("reference/" + name + ".logits.txt").string());
    std::vector<float> expected;
    for (const auto& row : ref.logits) expected.insert(expected.end(), row.begin(), row.end());
    const std::vector<float> ours = prompt_logits(repacked, ref.prompt), file = prompt_logits(plain, ref.prompt);
    EXPECT_LT(test::relative_rms_error(ours, expected), 3e-2);  // data/README.md's 8-bit tolerance
    EXPECT_LT(test::relative_rms_error(file, expected), 3e-2);
    // Same integer sums, other float order: rounding of the 16-lane sums only (seen: about 1e-7).
    EXPECT_LT(test::relative_rms_error(ours, file), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(files, model_repack_test, ::testing::Values("tiny-q8_0", "tiny-q4_0"),
                         [](const auto& info) { return std::string(info.param).substr(5); });

// A model built in memory (its weights in a buffer it owns) is repacked in place, its classifier
// tied to the embedding included: the same weights as the model built without repacking (row by
// row, bitwise), the embedding still the classifier's view, and the same logits but for the
// float order of the sums.
TEST(model_repack, a_model_in_memory_is_repacked_in_place_with_its_tied_embedding) {
    const model_config c = small_config(4, 2, true);
    for (tensor_type type : {tensor_type::q8_0, tensor_type::q4_0}) {
        const auto m = make_random_model(c, 5, type), plain = make_random_model(c, 5, type, false);
        EXPECT_EQ(m->weights().output.type, repacked_type(type));
        EXPECT_EQ(m->weights().token_embd.type, repacked_type(type));
        EXPECT_EQ(m->weights().token_embd.data, m->weights().output.data);
        EXPECT_EQ(plain->weights().output.type, type);
        const auto a = matrices(*m), b = matrices(*plain);
        for (std::size_t i = 0; i < a.size(); ++i) {
            EXPECT_EQ(a[i]->type, repacked_type(b[i]->type)) << a[i]->name;
            expect_rows_bitwise(*a[i], *b[i]);
        }
        expect_rows_bitwise(m->weights().token_embd, plain->weights().token_embd);
        const std::vector<token_id> prompt{1, 7, 30, 2, 95, 11};
        EXPECT_LT(test::relative_rms_error(prompt_logits(m, prompt), prompt_logits(plain, prompt)), 1e-5);
    }
}

// Two views of the same bytes in a buffer the model owns (a model built by hand) are repacked once:
// both read back as the original rows. The model's other views, in another buffer, are copied.
TEST(model_repack, views_of_the_same_bytes_are_repacked_once) {
    const model_config c = small_config(2, 2, false);  // attn_k of attn_q's shape
    const auto plain = make_random_model(c, 9, tensor_type::q8_0, false);
    model_weights w = plain->weights();
    const tensor_view& q = plain->weights().layers[0].attn_q;
    model::memory_buffer buf = model::memory_buffer::allocate(q.n_bytes, "<shared q and k>");
    std::memcpy(buf.bytes.get(), q.data, q.n_bytes);
    w.layers[0].attn_q.data = buf.bytes.get();
    w.layers[0].attn_k = w.layers[0].attn_q;
    const model m(plain->config(), w, model::source(std::move(buf)));
    const layer_weights& l = m.weights().layers[0];
    EXPECT_EQ(l.attn_q.type, tensor_type::q8_0_r16);
    EXPECT_EQ(l.attn_k.data, l.attn_q.data);
    expect_rows_bitwise(l.attn_q, q);
    expect_rows_bitwise(l.attn_k, q);
    expect_rows_bitwise(l.ffn_down, plain->weights().layers[0].ffn_down);
}

}  // namespace
}  // namespace nexttok

// RoPE scaling: the per-pair frequencies and magnitude against the closed forms of ggml's rope
// (linear, YaRN's ramp between its correction dims), Llama 3.1's frequency factors computed from
// config.json against the rope_freqs.weight that llama.cpp's converter wrote into the shared GGUF,
// what the GGUF loader reads from the shared rope-* files, and clear errors for what we refuse.
// The end-to-end oracle (llama.cpp's logits for the rope-* files) is in reference_logits_test.cpp
// and, for Hugging Face directories, hf_loader_test.cpp.
#include <nexttok/io/gguf.hpp>
#include <nexttok/kernels/ops.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/model/rope_scaling.hpp>

#include <file_patch.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace nexttok {
namespace {

TEST(rope_scaling, none_and_linear_frequencies) {
    rope_scaling_config s;
    const std::vector<double> none = rope_pair_frequencies(s, 32, 10000.0f);
    ASSERT_EQ(none.size(), 16u);
    for (std::int64_t i = 0; i < 16; ++i)
        EXPECT_EQ(none[static_cast<std::size_t>(i)], std::pow(10000.0, -2.0 * i / 32.0));
    EXPECT_EQ(rope_magnitude(s), 1.0);
    s.type = rope_scaling_type::linear;
    s.factor = 4.0f;
    const std::vector<double> linear = rope_pair_frequencies(s, 32, 10000.0f);
    for (std::size_t i = 0; i < 16; ++i) EXPECT_DOUBLE_EQ(linear[i], none[i] / 4.0);  // position p acts as p / 4
    EXPECT_EQ(rope_magnitude(s), 1.0);
}

// rope-yarn-qwen2's numbers: rope_dim 32, theta 1e6, factor 4, original context 64, beta 32 / 1.
// Correction dims: 32 ln(64 / (2 pi 32)) / (2 ln 1e6) = -1.33 -> floor, clamp: 0; 32 ln(64 / (2 pi))
// / (2 ln 1e6) = 2.69 -> ceil: 3. So the ramp is 1, 2/3, 1/3 on pairs 0..2 and 0 from pair 3 on.
TEST(rope_scaling, yarn_ramp_and_magnitude_follow_ggml) {
    rope_scaling_config s;
    s.type = rope_scaling_type::yarn;
    s.factor = 4.0f;
    s.original_max_seq_len = 64;
    const std::vector<double> omega = rope_pair_frequencies(s, 32, 1e6f);
    ASSERT_EQ(omega.size(), 16u);
    const double ramp[4] = {1.0, 2.0 / 3.0, 1.0 / 3.0, 0.0};
    for (std::int64_t i = 0; i < 16; ++i) {
        const double f = std::pow(1e6, -2.0 * i / 32.0), r = ramp[std::min<std::int64_t>(i, 3)];
        EXPECT_NEAR(omega[static_cast<std::size_t>(i)], f * ((1.0 - r) / 4.0 + r), 1e-15 * f) << "pair " << i;
    }
    EXPECT_DOUBLE_EQ(rope_magnitude(s), 1.0 + 0.1 * std::log(4.0));
    s.attn_factor = 0.5f;
    EXPECT_DOUBLE_EQ(rope_magnitude(s), 0.5 * (1.0 + 0.1 * std::log(4.0)));
    // ext_factor 0: plain interpolation, no magnitude beyond attn_factor (ggml's rope_yarn).
    s.ext_factor = 0.0f;
    const std::vector<double> interp = rope_pair_frequencies(s, 32, 1e6f);
    for (std::int64_t i = 0; i < 16; ++i)
        EXPECT_DOUBLE_EQ(interp[static_cast<std::size_t>(i)], std::pow(1e6, -2.0 * i / 32.0) / 4.0);
    EXPECT_DOUBLE_EQ(rope_magnitude(s), 0.5);
}

// The table multiplies cos and sin by the magnitude; angles are pos * omega.
TEST(rope_scaling, table_of_frequencies_and_magnitude) {
    const double omega[3] = {1.0, 0.25, 1e-3};
    float cs[6];
    rope_table(7, omega, 3, 1.5, cs);
    for (int i = 0; i < 3; ++i) {
        EXPECT_FLOAT_EQ(cs[2 * i], static_cast<float>(1.5 * std::cos(7 * omega[i])));
        EXPECT_FLOAT_EQ(cs[2 * i + 1], static_cast<float>(1.5 * std::sin(7 * omega[i])));
    }
    // With unscaled frequencies and magnitude 1 it is the plain table, bitwise.
    std::vector<double> f(16);
    for (std::int64_t i = 0; i < 16; ++i) f[static_cast<std::size_t>(i)] = rope_frequency(i, 32, 10000.0f);
    float a[32], b[32];
    rope_table(45, f.data(), 16, 1.0, a);
    rope_table(45, 32, 10000.0f, b);
    EXPECT_EQ(std::memcmp(a, b, sizeof a), 0);
}

// rope-llama3-f32.gguf's rope_freqs.weight was computed by llama.cpp's converter from
// {factor 8, low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings 64}, theta 5e5.
TEST(rope_scaling, llama3_factors_match_the_converters_rope_freqs) {
    NEXTTOK_REQUIRE_DATA("models/random/rope-llama3-f32.gguf");
    gguf_file g(test::data_path("models/random/rope-llama3-f32.gguf"));
    const tensor_view* t = g.find_tensor("rope_freqs.weight");
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(t->n_elements(), 16u);
    std::vector<float> file(16);
    std::memcpy(file.data(), t->data, 16 * sizeof(float));
    const std::vector<float> ours = llama3_frequency_factors(32, 500000.0f, 8.0f, 1.0f, 4.0f, 64);
    ASSERT_EQ(ours.size(), 16u);
    bool some_smooth = false;
    for (std::size_t i = 0; i < 16; ++i) {
        EXPECT_NEAR(ours[i], file[i], 1e-6f * file[i]) << "pair " << i;
        some_smooth = some_smooth || (file[i] > 1.0f && file[i] < 8.0f);
    }
    EXPECT_EQ(file.front(), 1.0f);  // high frequencies untouched
    EXPECT_EQ(file.back(), 8.0f);   // low frequencies divided by factor
    EXPECT_TRUE(some_smooth) << "no pair in the smooth band: the test would not check that formula";
}

TEST(rope_scaling, gguf_loader_reads_the_shared_files) {
    NEXTTOK_REQUIRE_DATA("models/random/rope-yarn-qwen2-f32.gguf");
    auto none = load_model(test::data_path("models/random/rope-none-f32.gguf"));
    EXPECT_EQ(none->config().rope_scaling.type, rope_scaling_type::none);
    auto linear = load_model(test::data_path("models/random/rope-linear-f32.gguf"));
    EXPECT_EQ(linear->config().rope_scaling.type, rope_scaling_type::linear);
    EXPECT_EQ(linear->config().rope_scaling.factor, 4.0f);
    auto llama3 = load_model(test::data_path("models/random/rope-llama3-f32.gguf"));
    EXPECT_EQ(llama3->config().rope_scaling.type, rope_scaling_type::llama3);
    EXPECT_EQ(llama3->config().rope_scaling.freq_factors.size(), 16u);
    auto yarn = load_model(test::data_path("models/random/rope-yarn-qwen2-f32.gguf"));
    const rope_scaling_config& y = yarn->config().rope_scaling;
    EXPECT_EQ(y.type, rope_scaling_type::yarn);
    EXPECT_EQ(y.factor, 4.0f);
    EXPECT_EQ(y.original_max_seq_len, 64);
    EXPECT_EQ(y.beta_fast, 32.0f);
    EXPECT_EQ(y.beta_slow, 1.0f);
    EXPECT_EQ(y.ext_factor, 1.0f);
    EXPECT_EQ(y.attn_factor, 1.0f);
}

// Errors name the file, the key or tensor, and what was expected.
TEST(rope_scaling, gguf_errors) {
    NEXTTOK_REQUIRE_DATA("models/random/rope-llama3-f32.gguf");
    test::temp_dir dir;
    auto expect_error = [&](const test::bytes& b, const std::string& needle) {
        try {
            load_model(dir.write("patched.gguf", b));
            ADD_FAILURE() << "loaded a file that should fail with: " << needle;
        } catch (const error& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    test::bytes linear = test::read_bytes(test::data_path("models/random/rope-linear-f32.gguf"));
    const std::size_t value = test::find(linear, "linear", test::find(linear, "llama.rope.scaling.type"));
    std::memcpy(linear.data() + value, "bogus!", 6);
    expect_error(linear, "metadata key 'llama.rope.scaling.type' = 'bogus!': RoPE scaling 'bogus!' is not supported");
    try {
        load_model(dir.write("patched.gguf", linear));
    } catch (const unsupported_error&) {
    } catch (...) {
        ADD_FAILURE() << "an unknown scaling type is an unsupported_error";
    }

    // rope_freqs.weight with 8 values instead of head_dim / 2 = 16 (tensor info: name, n_dims, ne[0]).
    test::bytes llama3 = test::read_bytes(test::data_path("models/random/rope-llama3-f32.gguf"));
    const std::size_t info = test::find(llama3, "rope_freqs.weight") + std::strlen("rope_freqs.weight");
    ASSERT_EQ(test::get<std::uint32_t>(llama3, info), 1u);
    ASSERT_EQ(test::get<std::uint64_t>(llama3, info + 4), 16u);
    test::put<std::uint64_t>(llama3, info + 4, 8);
    expect_error(llama3, "tensor 'rope_freqs.weight' at offset");
    expect_error(llama3, "expected a vector of rope_dim / 2 = 16");
}

}  // namespace
}  // namespace nexttok

// The decoder against llama.cpp's logits for the same files and prompts (the oracle), within the
// tolerances that data/README.md states for each weight type, and the 32 greedy tokens.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/q8_0_kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/model/load_model.hpp>

#include <reference_logits.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <string>

namespace nexttok {
namespace {

struct reference_case {
    const char* model;      // under models/
    const char* reference;  // under reference/
    double max_relative_rms;
    bool check_greedy;  // the 32 greedy tokens (F32 files)
};

void PrintTo(const reference_case& c, std::ostream* os) { *os << c.model; }

// The test name of a case: its reference file's stem, made an identifier.
std::string case_name(const ::testing::TestParamInfo<reference_case>& info) {
    std::string name = info.param.reference;
    name = name.substr(0, name.find('.'));
    for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
}

// The logits of every prompt position against the reference: relative RMS error below the case's
// tolerance (recorded as relative_rms_error) and the same argmax at each position.
void expect_prompt_logits(const std::vector<float>& logits, const test::reference_logits& ref, std::int64_t V,
                          const reference_case& rc) {
    std::vector<float> expected;
    for (const auto& row : ref.logits) expected.insert(expected.end(), row.begin(), row.end());
    const double err = test::relative_rms_error(logits, expected);
    ::testing::Test::RecordProperty("relative_rms_error", std::to_string(err));
    EXPECT_LT(err, rc.max_relative_rms) << rc.model;
    for (std::size_t p = 0; p < ref.prompt.size(); ++p)
        EXPECT_EQ(test::argmax(logits.data() + p * V, V), test::argmax(ref.logits[p].data(), V)) << "position " << p;
}

class reference_logits_test : public ::testing::TestWithParam<reference_case> {};

TEST_P(reference_logits_test, matches_llama_cpp) {
    const reference_case& rc = GetParam();
    NEXTTOK_REQUIRE_DATA(std::string("models/") + rc.model);
    const auto ref = test::read_reference_logits(test::data_path(std::string("reference/") + rc.reference).string());
    ASSERT_FALSE(ref.prompt.empty());
    ASSERT_EQ(ref.logits.size(), ref.prompt.size());
    ASSERT_EQ(ref.greedy.size(), 32u);

    auto m = load_model(test::data_path(std::string("models/") + rc.model));
    const std::int64_t V = m->config().vocab_size;
    ASSERT_EQ(static_cast<std::int64_t>(ref.logits[0].size()), V);
    decoder<float> dec(m);
    kv_cache<float> cache(m->config(), static_cast<std::int64_t>(ref.prompt.size() + ref.greedy.size()));

    // Prefill the whole prompt in one call, logits at every position.
    std::vector<float> logits(ref.prompt.size() * V);
    dec.forward(ref.prompt, 0, cache, logits, logits_for::all);
    expect_prompt_logits(logits, ref, V, rc);

    if (!rc.check_greedy) return;
    std::vector<float> step(V);
    token_id next = static_cast<token_id>(test::argmax(logits.data() + (ref.prompt.size() - 1) * V, V));
    std::int64_t pos = static_cast<std::int64_t>(ref.prompt.size());
    for (std::size_t i = 0; i < ref.greedy.size(); ++i) {
        ASSERT_EQ(next, ref.greedy[i]) << "greedy token " << i;
        dec.forward(std::span<const token_id>(&next, 1), pos++, cache, step);
        next = static_cast<token_id>(test::argmax(step.data(), V));
    }
}

// The same oracle with the keys and values stored as q8_0 (q8_0_kv_cache) while llama.cpp's cache
// was F32: the 8-bit cache must stay within the tolerance data/README.md gives for 8-bit
// activations (3e-2) and keep the argmax at every prompt position, whatever the weight type.
// The error it adds is recorded (relative_rms_error, and vs our own float cache: cache_error).
class reference_logits_q8_0_cache_test : public ::testing::TestWithParam<reference_case> {};

TEST_P(reference_logits_q8_0_cache_test, matches_llama_cpp_within_the_8_bit_tolerance) {
    const reference_case& rc = GetParam();
    NEXTTOK_REQUIRE_DATA(std::string("models/") + rc.model);
    const auto ref = test::read_reference_logits(test::data_path(std::string("reference/") + rc.reference).string());
    ASSERT_FALSE(ref.prompt.empty());
    auto m = load_model(test::data_path(std::string("models/") + rc.model));
    const std::int64_t V = m->config().vocab_size;
    decoder<float> dec(m);
    q8_0_kv_cache<float> cache(m->config(), 64);
    kv_cache<float> float_cache(m->config(), 64);
    std::vector<float> logits(ref.prompt.size() * V), float_logits(logits.size());
    dec.forward(ref.prompt, 0, cache, logits, logits_for::all);
    dec.forward(ref.prompt, 0, float_cache, float_logits, logits_for::all);
    expect_prompt_logits(logits, ref, V, rc);
    const double cache_err = test::relative_rms_error(logits, float_logits);
    ::testing::Test::RecordProperty("cache_error", std::to_string(cache_err));
    EXPECT_GT(cache_err, 0.0) << rc.model << ": identical to the float cache, so q8_0 is not used";
}

INSTANTIATE_TEST_SUITE_P(
    files, reference_logits_q8_0_cache_test,
    ::testing::Values(reference_case{"stories260K/stories260K.gguf", "stories260K.logits.txt", 3e-2, false},
                      reference_case{"random/tiny-f32.gguf", "tiny-f32.logits.txt", 3e-2, false},
                      reference_case{"random/tiny-qwen2-f32.gguf", "tiny-qwen2-f32.logits.txt", 3e-2, false},
                      reference_case{"random/tiny-gpt2-f32.gguf", "tiny-gpt2-f32.logits.txt", 3e-2, false},
                      reference_case{"random/small-f32.gguf", "small-f32.logits.txt", 3e-2, false},
                      reference_case{"random/tiny-q4_0.gguf", "tiny-q4_0.logits.txt", 3e-2, false}),
    case_name);

// Tolerances from data/README.md.
INSTANTIATE_TEST_SUITE_P(
    files, reference_logits_test,
    ::testing::Values(reference_case{"stories260K/stories260K.gguf", "stories260K.logits.txt", 1e-4, true},
                      reference_case{"random/tiny-f32.gguf", "tiny-f32.logits.txt", 1e-4, true},
                      reference_case{"random/tiny-f16.gguf", "tiny-f16.logits.txt", 1e-3, false},
                      reference_case{"llama-2-tiny-random/llama-2-tiny-random.gguf", "llama-2-tiny-random.logits.txt",
                                     1e-3, false},
                      // Qwen2: Q/K/V biases, NeoX RoPE, tied output. GPT-2: learned positions, LayerNorm,
                      // fused QKV, GELU (llama.cpp's GELU table is half precision, hence 1e-3).
                      reference_case{"random/tiny-qwen2-f32.gguf", "tiny-qwen2-f32.logits.txt", 1e-4, true},
                      reference_case{"random/tiny-gpt2-f32.gguf", "tiny-gpt2-f32.logits.txt", 1e-3, false},
                      reference_case{"random/small-f32.gguf", "small-f32.logits.txt", 1e-4, true},
                      // RoPE scaling (64-token prompts, 96 positions): linear factor 4, Llama 3.1's
                      // rope_freqs, YaRN factor 4 over an original context of 64 (NeoX, magnitude on
                      // q and k); rope-none holds rope-linear's weights unscaled.
                      reference_case{"random/rope-none-f32.gguf", "rope-none-f32.logits.txt", 1e-4, true},
                      reference_case{"random/rope-linear-f32.gguf", "rope-linear-f32.logits.txt", 1e-4, true},
                      reference_case{"random/rope-llama3-f32.gguf", "rope-llama3-f32.logits.txt", 1e-4, true},
                      reference_case{"random/rope-yarn-qwen2-f32.gguf", "rope-yarn-qwen2-f32.logits.txt", 1e-4, true},
                      // Quantized weights, read in place and dequantized exactly; llama.cpp rounds the
                      // activations to 8 bits for these, hence 3e-2.
                      reference_case{"random/tiny-q8_0.gguf", "tiny-q8_0.logits.txt", 3e-2, false},
                      reference_case{"random/tiny-q4_0.gguf", "tiny-q4_0.logits.txt", 3e-2, false},
                      reference_case{"random/small-q4_k_m.gguf", "small-q4_k_m.logits.txt", 3e-2, false},
                      reference_case{"random/small-q5_k_m.gguf", "small-q5_k_m.logits.txt", 3e-2, false},
                      reference_case{"random/small-q6_k.gguf", "small-q6_k.logits.txt", 3e-2, false},
                      // dim 384 (not a multiple of 256): the quantizer's fallbacks to the 32-element types
                      // q4_1, q5_0, q5_1, iq4_nl (with q8_0, q4_k, q5_k, q6_k).
                      reference_case{"random/mixed-dim384-f32.gguf", "mixed-dim384-f32.logits.txt", 1e-4, true},
                      reference_case{"random/mixed-dim384-q4_1.gguf", "mixed-dim384-q4_1.logits.txt", 3e-2, false},
                      reference_case{"random/mixed-dim384-q5_0.gguf", "mixed-dim384-q5_0.logits.txt", 3e-2, false},
                      reference_case{"random/mixed-dim384-q5_1.gguf", "mixed-dim384-q5_1.logits.txt", 3e-2, false},
                      reference_case{"random/mixed-dim384-iq4_nl.gguf", "mixed-dim384-iq4_nl.logits.txt", 3e-2, false},
                      reference_case{"random/mixed-dim384-q4_k_m.gguf", "mixed-dim384-q4_k_m.logits.txt", 3e-2, false},
                      reference_case{"random/mixed-dim384-q5_k_m.gguf", "mixed-dim384-q5_k_m.logits.txt", 3e-2, false},
                      reference_case{"random/mixed-dim384-q3_k_m.gguf", "mixed-dim384-q3_k_m.logits.txt", 3e-2, false},
                      // and the low-bit 256-element types q2_k, q3_k, iq4_xs (with iq4_nl and q8_0 rows)
                      reference_case{"random/mixed-dim384-q2_k.gguf", "mixed-dim384-q2_k.logits.txt", 3e-2, false},
                      reference_case{"random/mixed-dim384-iq4_xs.gguf", "mixed-dim384-iq4_xs.logits.txt", 3e-2, false}),
    case_name);

}  // namespace
}  // namespace nexttok

namespace nexttok {
namespace {

// The llama2.c checkpoint holds the same trained weights as stories260K.gguf: it must meet the
// same oracle through the other loader.
TEST(llama2c_checkpoint, matches_llama_cpp_reference) {
    NEXTTOK_REQUIRE_DATA("models/stories260K/stories260K.bin");
    const auto ref = test::read_reference_logits(test::data_path("reference/stories260K.logits.txt").string());
    auto m = load_model(test::data_path("models/stories260K/stories260K.bin"));
    EXPECT_EQ(m->format(), model_file_format::llama2c);
    EXPECT_TRUE(m->config().tied_output);
    EXPECT_EQ(m->config().max_seq_len, 512);
    const std::int64_t V = m->config().vocab_size;
    decoder<float> dec(m);
    kv_cache<float> cache(m->config());
    std::vector<float> logits(ref.prompt.size() * V);
    dec.forward(ref.prompt, 0, cache, logits, logits_for::all);
    std::vector<float> expected;
    for (const auto& row : ref.logits) expected.insert(expected.end(), row.begin(), row.end());
    EXPECT_LT(test::relative_rms_error(logits, expected), 1e-4);
}

}  // namespace
}  // namespace nexttok

// decoder::shift_context (llama.cpp's context shift) against two oracles.
//
// 1. End to end, on each model's first layer alone: a layer's keys and values depend only on the
//    token and its position there, so after a prefill of N tokens and shifts that drop positions
//    [keep, keep + d), the logits of the next tokens equal those of a fresh prefill of the kept
//    tokens (which puts them at the positions the shift moved them to), up to the rounding of the
//    re-rotated keys: relative RMS < 1e-4 with a float cache; the bounds for half, bf16 and q8_0
//    caches are stated with their cases. (In deeper layers a moved token's key and value were
//    computed attending to the dropped tokens, so no fresh prefill reproduces them: llama.cpp's
//    shift is an approximation there, and so is ours, by the same definition.)
// 2. Every layer of the whole model: values move bitwise, and each moved key is the old one
//    rotated by -d positions in double here, with the pairing of the architecture and no magnitude.
//
// Models: adjacent-pair RoPE (tiny-f32, stories260K), NeoX RoPE with biases (tiny-qwen2), and the
// scaled files (linear, llama3's frequency factors, YaRN, whose magnitude 1 + 0.1 ln 4 the cached
// keys already carry: a shift that rotated with it again would be 14% off per shift).
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/q8_0_kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/model/load_model.hpp>

#include <reference_logits.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace nexttok {
namespace {

// n deterministic token ids spread over the vocabulary (BOS-like 1 first).
std::vector<token_id> some_tokens(std::int64_t n, std::int64_t vocab_size) {
    std::vector<token_id> t(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
        t[static_cast<std::size_t>(i)] = static_cast<token_id>((1 + 37 * i) % vocab_size);
    return t;
}

// The model's first layer alone, then its final norm and classifier. Views into m's file: m must
// outlive it.
std::shared_ptr<const model> first_layer_only(const std::shared_ptr<const model>& m) {
    model_config c = m->config();
    c.n_layers = 1;
    model_weights w = m->weights();
    w.layers.resize(1);
    return std::make_shared<const model>(c, std::move(w), model::source(model::memory_buffer{}));
}

void record(const char* key, double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", value);
    ::testing::Test::RecordProperty(key, text);
}

// Prefills n tokens, shifts (keep, d) twice (as generation does each time the cache fills), then
// runs 3 more tokens in one call; returns the relative RMS error of their logits against a fresh
// prefill of the tokens that survived, and checks the cache sizes and argmaxes on the way.
template <class Scalar, class Cache>
double shift_error(const std::shared_ptr<const model>& m, std::int64_t n, std::int64_t keep, std::int64_t d) {
    const std::int64_t V = m->config().vocab_size, extra = 3;
    const std::vector<token_id> tokens = some_tokens(n + d + extra, V);
    decoder<Scalar> dec(m);
    Cache shifted(m->config(), n + extra);
    std::vector<float> logits(static_cast<std::size_t>(extra * V));
    dec.forward(std::span<const token_id>(tokens).first(static_cast<std::size_t>(n)), 0, shifted, logits);
    dec.shift_context(shifted, keep, d);
    EXPECT_EQ(shifted.size(), n - d);
    // Refill the d positions, shift again: the second shift moves keys the first one rotated.
    dec.forward(std::span<const token_id>(tokens).subspan(static_cast<std::size_t>(n), static_cast<std::size_t>(d)),
                n - d, shifted, logits);
    EXPECT_EQ(shifted.size(), n);
    dec.shift_context(shifted, keep, d);
    EXPECT_EQ(shifted.size(), n - d);
    dec.forward(
        std::span<const token_id>(tokens).subspan(static_cast<std::size_t>(n + d), static_cast<std::size_t>(extra)),
        n - d, shifted, logits, logits_for::all);

    // What survived: tokens [0, keep), then everything after the two dropped windows.
    std::vector<token_id> kept(tokens.begin(), tokens.begin() + keep);
    kept.insert(kept.end(), tokens.begin() + keep + 2 * d, tokens.end());
    EXPECT_EQ(static_cast<std::int64_t>(kept.size()), n - d + extra);
    Cache fresh(m->config(), n + extra);
    std::vector<float> expected(kept.size() * static_cast<std::size_t>(V));
    dec.forward(kept, 0, fresh, expected, logits_for::all);
    expected.erase(expected.begin(), expected.end() - extra * V);
    for (std::int64_t r = 0; r < extra; ++r)
        EXPECT_EQ(test::argmax(logits.data() + r * V, V), test::argmax(expected.data() + r * V, V)) << "row " << r;
    return test::relative_rms_error(logits, expected);
}

struct shift_case {
    const char* model;  // under models/
};
void PrintTo(const shift_case& c, std::ostream* os) { *os << c.model; }

class context_shift_test : public ::testing::TestWithParam<shift_case> {
protected:
    std::shared_ptr<const model> load() const {
        return load_model(test::data_path(std::string("models/") + GetParam().model));
    }
};

TEST_P(context_shift_test, float_cache_matches_a_fresh_prefill_of_the_kept_tokens) {
    NEXTTOK_REQUIRE_DATA(std::string("models/") + GetParam().model);
    const auto m = load();
    const double err = shift_error<float, kv_cache<float>>(first_layer_only(m), 72, 4, 30);
    record("relative_rms_error", err);
    EXPECT_LT(err, 1e-4);
}

// A half or bf16 cache rounds each re-rotated key once more (2^-11 and 2^-8 relative per element);
// seen: half 1.8e-4 to 3.5e-4, bf16 2.0e-3 to 2.7e-3 (float: 1.5e-7).
TEST_P(context_shift_test, half_and_bf16_caches_within_their_rounding) {
    NEXTTOK_REQUIRE_DATA(std::string("models/") + GetParam().model);
    const auto m = load();
    const double half_err = shift_error<Eigen::half, kv_cache<Eigen::half>>(first_layer_only(m), 72, 4, 30);
    const double bf16_err = shift_error<Eigen::bfloat16, kv_cache<Eigen::bfloat16>>(first_layer_only(m), 72, 4, 30);
    record("half_error", half_err);
    record("bf16_error", bf16_err);
    EXPECT_LT(half_err, 1e-3);
    EXPECT_LT(bf16_err, 1e-2);
}

// q8_0 keys are dequantized, rotated and quantized again (llama.cpp's K-shift of a quantized
// cache): a second 8-bit rounding of every moved key. Seen: 1.7e-3 to 4.9e-3.
TEST_P(context_shift_test, q8_0_cache_within_the_8_bit_tolerance) {
    NEXTTOK_REQUIRE_DATA(std::string("models/") + GetParam().model);
    const auto m = load();
    const double err = shift_error<float, q8_0_kv_cache<float>>(first_layer_only(m), 72, 4, 30);
    record("relative_rms_error", err);
    EXPECT_LT(err, 1.5e-2);
}

// The whole model: in every layer the kept rows stay, the values move bitwise, the keys are the
// old ones rotated by -d (computed here in double, pairs as the architecture pairs them); layer 0
// also equals a fresh prefill of the kept tokens.
TEST_P(context_shift_test, every_layer_moves_values_and_rotates_keys) {
    NEXTTOK_REQUIRE_DATA(std::string("models/") + GetParam().model);
    const auto m = load();
    const model_config& c = m->config();
    const std::int64_t n = 40, keep = 4, d = 12, kv_dim = c.kv_dim(), half = c.rope_dim / 2;
    const std::vector<token_id> tokens = some_tokens(n, c.vocab_size);
    decoder<float> dec(m);
    kv_cache<float> cache(c, n);
    std::vector<float> logits(static_cast<std::size_t>(c.vocab_size));
    dec.forward(tokens, 0, cache, logits);
    std::vector<std::vector<float>> old_k, old_v;  // (layer * n + pos) rows of kv_dim
    for (std::int64_t l = 0; l < c.n_layers; ++l)
        for (std::int64_t p = 0; p < n; ++p) {
            old_k.emplace_back(cache.key(l, p), cache.key(l, p) + kv_dim);
            old_v.emplace_back(cache.value(l, p), cache.value(l, p) + kv_dim);
        }
    dec.shift_context(cache, keep, d);
    ASSERT_EQ(cache.size(), n - d);

    const std::vector<double> omega = rope_pair_frequencies(c.rope_scaling, c.rope_dim, c.rope_theta);
    const bool neox = c.positions == position_kind::rope_neox;
    double worst = 0.0;
    for (std::int64_t l = 0; l < c.n_layers; ++l)
        for (std::int64_t p = 0; p < n - d; ++p) {
            const std::int64_t from = p < keep ? p : p + d;
            const std::vector<float>& k = old_k[static_cast<std::size_t>(l * n + from)];
            const std::vector<float>& v = old_v[static_cast<std::size_t>(l * n + from)];
            ASSERT_EQ(std::memcmp(cache.value(l, p), v.data(), static_cast<std::size_t>(kv_dim) * sizeof(float)), 0)
                << "layer " << l << " position " << p;
            if (p < keep) {
                ASSERT_EQ(std::memcmp(cache.key(l, p), k.data(), static_cast<std::size_t>(kv_dim) * sizeof(float)), 0)
                    << "layer " << l << " position " << p;
                continue;
            }
            std::vector<double> expected(k.begin(), k.end());
            for (std::int64_t h = 0; h < c.n_kv_heads; ++h)
                for (std::int64_t i = 0; i < half; ++i) {
                    const std::int64_t a = h * c.head_dim + (neox ? i : 2 * i),
                                       b = h * c.head_dim + (neox ? i + half : 2 * i + 1);
                    const double angle = -static_cast<double>(d) * omega[static_cast<std::size_t>(i)];
                    expected[static_cast<std::size_t>(a)] = k[static_cast<std::size_t>(a)] * std::cos(angle) -
                                                            k[static_cast<std::size_t>(b)] * std::sin(angle);
                    expected[static_cast<std::size_t>(b)] = k[static_cast<std::size_t>(a)] * std::sin(angle) +
                                                            k[static_cast<std::size_t>(b)] * std::cos(angle);
                }
            double num = 0.0, den = 0.0;
            for (std::int64_t j = 0; j < kv_dim; ++j) {
                const double e = cache.key(l, p)[j] - expected[static_cast<std::size_t>(j)];
                num += e * e;
                den += expected[static_cast<std::size_t>(j)] * expected[static_cast<std::size_t>(j)];
            }
            worst = std::max(worst, std::sqrt(num / den));
        }
    record("worst_key_error", worst);
    EXPECT_LT(worst, 1e-6) << "moved keys are not the old ones rotated by -" << d << " positions";

    // Layer 0 against a fresh prefill of the kept tokens: values bitwise, keys to float rounding.
    std::vector<token_id> kept(tokens.begin(), tokens.begin() + keep);
    kept.insert(kept.end(), tokens.begin() + keep + d, tokens.end());
    kv_cache<float> fresh(c, n);
    dec.forward(kept, 0, fresh, logits);
    for (std::int64_t p = 0; p < n - d; ++p) {
        ASSERT_EQ(std::memcmp(cache.value(0, p), fresh.value(0, p), static_cast<std::size_t>(kv_dim) * sizeof(float)),
                  0)
            << "position " << p;
        for (std::int64_t j = 0; j < kv_dim; ++j)
            ASSERT_NEAR(cache.key(0, p)[j], fresh.key(0, p)[j], 1e-5f * (1.0f + std::abs(fresh.key(0, p)[j])));
    }
}

INSTANTIATE_TEST_SUITE_P(files, context_shift_test,
                         ::testing::Values(shift_case{"random/tiny-f32.gguf"}, shift_case{"random/tiny-qwen2-f32.gguf"},
                                           shift_case{"stories260K/stories260K.gguf"},
                                           shift_case{"random/rope-linear-f32.gguf"},
                                           shift_case{"random/rope-llama3-f32.gguf"},
                                           shift_case{"random/rope-yarn-qwen2-f32.gguf"}),
                         [](const ::testing::TestParamInfo<shift_case>& info) {
                             std::string name = info.param.model;
                             name = name.substr(name.find('/') + 1);
                             name = name.substr(0, name.find('.'));
                             for (char& ch : name)
                                 if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                             return name;
                         });

// llama-2-tiny-random has one layer of its own: the end-to-end oracle on the whole model.
TEST(context_shift, one_layer_model_matches_a_fresh_prefill) {
    NEXTTOK_REQUIRE_DATA("models/llama-2-tiny-random/llama-2-tiny-random.gguf");
    auto m = load_model(test::data_path("models/llama-2-tiny-random/llama-2-tiny-random.gguf"));
    ASSERT_EQ(m->config().n_layers, 1);
    const double err = shift_error<float, kv_cache<float>>(m, 40, 1, 15);
    record("relative_rms_error", err);
    EXPECT_LT(err, 1e-4);
}

TEST(context_shift, keep_everything_and_discarding_nothing_change_nothing) {
    NEXTTOK_REQUIRE_DATA("models/random/tiny-f32.gguf");
    auto m = load_model(test::data_path("models/random/tiny-f32.gguf"));
    const std::vector<token_id> tokens = some_tokens(9, m->config().vocab_size);
    decoder<float> dec(m);
    kv_cache<float> a(m->config(), 16), b(m->config(), 16);
    std::vector<float> la(static_cast<std::size_t>(m->config().vocab_size)), lb(la.size());
    dec.forward(std::span<const token_id>(tokens).first(8), 0, a, la);
    dec.forward(std::span<const token_id>(tokens).first(8), 0, b, lb);
    dec.shift_context(a, 3, 0);  // nothing dropped: nothing moves, nothing is rotated
    dec.shift_context(a, 8, 0);
    EXPECT_EQ(a.size(), 8);
    dec.forward(std::span<const token_id>(tokens).subspan(8, 1), 8, a, la);
    dec.forward(std::span<const token_id>(tokens).subspan(8, 1), 8, b, lb);
    EXPECT_EQ(la, lb);
    dec.shift_context(a, 2, 7);  // drop everything after the first two
    EXPECT_EQ(a.size(), 2);
}

TEST(context_shift, bad_arguments_throw_and_leave_the_cache_alone) {
    NEXTTOK_REQUIRE_DATA("models/random/tiny-f32.gguf");
    auto m = load_model(test::data_path("models/random/tiny-f32.gguf"));
    const std::vector<token_id> tokens = some_tokens(10, m->config().vocab_size);
    decoder<float> dec(m);
    kv_cache<float> cache(m->config(), 16);
    std::vector<float> logits(static_cast<std::size_t>(m->config().vocab_size));
    dec.forward(tokens, 0, cache, logits);
    EXPECT_THROW(dec.shift_context(cache, 4, 7), invalid_argument_error);  // 4 + 7 > 10
    EXPECT_THROW(dec.shift_context(cache, 11, 0), invalid_argument_error);
    EXPECT_THROW(dec.shift_context(cache, -1, 2), invalid_argument_error);
    EXPECT_THROW(dec.shift_context(cache, 2, -2), invalid_argument_error);
    EXPECT_EQ(cache.size(), 10);
    try {
        dec.shift_context(cache, 4, 7);
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("keep + n_discard <= size"), std::string::npos) << e.what();
    }
    // The cache's own check, for callers that move rows themselves.
    EXPECT_THROW(cache.discard(9, 2), invalid_argument_error);
}

TEST(context_shift, learned_positions_cannot_shift) {
    NEXTTOK_REQUIRE_DATA("models/random/tiny-gpt2-f32.gguf");
    auto m = load_model(test::data_path("models/random/tiny-gpt2-f32.gguf"));
    decoder<float> dec(m);
    kv_cache<float> cache(m->config(), 16);
    std::vector<float> logits(static_cast<std::size_t>(m->config().vocab_size));
    dec.forward(some_tokens(6, m->config().vocab_size), 0, cache, logits);
    try {
        dec.shift_context(cache, 1, 2);
        ADD_FAILURE() << "shifted a model with learned positions";
    } catch (const unsupported_error& e) {
        EXPECT_NE(std::string(e.what()).find("context shift needs RoPE"), std::string::npos) << e.what();
    }
    EXPECT_EQ(cache.size(), 6);
}

}  // namespace
}  // namespace nexttok

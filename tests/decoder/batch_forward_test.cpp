// A forward step over a ragged batch gives every sequence bitwise the logits it gets alone: the
// oracle is forward() on each sequence by itself, token by token, in its own cache. Batches mix a
// whole prompt, a prefill chunk that continues earlier positions, and single decode tokens, for
// each architecture (RoPE adjacent and NeoX, learned positions), Scalar, cache type and thread count.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/q8_0_kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/model/load_model.hpp>

#include <test_data.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace nexttok {
namespace {

// Logits of `tokens` run one at a time from position 0 in a fresh cache: row i predicts position i + 1.
template <class Scalar, template <class> class Cache>
std::vector<float> alone(decoder<Scalar>& dec, const std::vector<token_id>& tokens) {
    const std::int64_t V = dec.config().vocab_size;
    Cache<Scalar> cache(dec.config(), 64);
    std::vector<float> out(tokens.size() * V);
    for (std::size_t i = 0; i < tokens.size(); ++i)
        dec.forward(std::span<const token_id>(&tokens[i], 1), static_cast<std::int64_t>(i), cache,
                    std::span<float>(out.data() + i * V, V));
    return out;
}

template <class Scalar, template <class> class Cache>
void expect_batch_equals_alone(const char* file, int n_threads) {
    NEXTTOK_REQUIRE_DATA(file);
    auto m = load_model(test::data_path(file));
    const std::int64_t V = m->config().vocab_size;
    const std::vector<token_id> a = {1, 403, 407, 261, 378, 290, 300};       // a whole prompt, all logits
    const std::vector<token_id> b = {1, 300, 258, 400, 261, 262, 263, 264};  // 5 cached, then a chunk of 3, last logits
    const std::vector<token_id> c = {1, 290, 291, 292, 293, 294};            // 5 cached, then one decode token
    const std::vector<token_id> d = {1, 17};                                 // 1 cached, one token, no logits
    decoder<Scalar> dec(m, n_threads);
    const auto ref_a = alone<Scalar, Cache>(dec, a), ref_b = alone<Scalar, Cache>(dec, b);
    const auto ref_c = alone<Scalar, Cache>(dec, c);

    Cache<Scalar> ca(m->config(), 64), cb(m->config(), 64), cc(m->config(), 64), cd(m->config(), 64);
    std::vector<float> scratch(V);
    dec.forward(std::span<const token_id>(b.data(), 5), 0, cb, scratch);
    dec.forward(std::span<const token_id>(c.data(), 5), 0, cc, scratch);
    dec.forward(std::span<const token_id>(d.data(), 1), 0, cd, scratch);

    const batch_sequence<Cache<Scalar>> batch[] = {
        {std::span<const token_id>(c.data() + 5, 1), 5, &cc, logits_for::last},
        {std::span<const token_id>(a), 0, &ca, logits_for::all},
        {std::span<const token_id>(d.data() + 1, 1), 1, &cd, logits_for::none},
        {std::span<const token_id>(b.data() + 5, 3), 5, &cb, logits_for::last},
    };
    std::vector<float> logits((1 + a.size() + 0 + 1) * V);
    dec.forward(std::span<const batch_sequence<Cache<Scalar>>>(batch), logits);

    const std::string where = std::string(file) + ", " + std::to_string(n_threads) + " thread(s)";
    EXPECT_EQ(std::memcmp(logits.data(), ref_c.data() + 5 * V, V * sizeof(float)), 0) << where << ": decode token";
    for (std::size_t i = 0; i < a.size(); ++i)
        EXPECT_EQ(std::memcmp(logits.data() + (1 + i) * V, ref_a.data() + i * V, V * sizeof(float)), 0)
            << where << ": prompt row " << i;
    EXPECT_EQ(std::memcmp(logits.data() + (1 + a.size()) * V, ref_b.data() + 7 * V, V * sizeof(float)), 0)
        << where << ": chunk";
    EXPECT_EQ(cd.size(), 2) << "a sequence without logits still writes its keys and values";

    // The caches hold what they hold alone: the next token of b continues bitwise.
    const token_id next = 265;
    std::vector<float> after(V), after_alone(V);
    dec.forward(std::span<const token_id>(&next, 1), 8, cb, after);
    Cache<Scalar> solo(m->config(), 64);
    std::vector<token_id> b_next = b;
    b_next.push_back(next);
    dec.forward(std::span<const token_id>(b_next), 0, solo, after_alone);
    EXPECT_EQ(std::memcmp(after.data(), after_alone.data(), V * sizeof(float)), 0) << where << ": b continued";
}

const char* const files[] = {"models/stories260K/stories260K.gguf", "models/random/tiny-qwen2-f32.gguf",
                             "models/random/tiny-gpt2-f32.gguf", "models/random/tiny-q4_0.gguf"};

TEST(decoder_batch, equals_each_sequence_alone) {
    for (const char* f : files)
        for (int threads : {1, 2}) expect_batch_equals_alone<float, kv_cache>(f, threads);
}

TEST(decoder_batch, equals_each_sequence_alone_in_half_with_a_q8_0_cache) {
    for (const char* f : files) {
        expect_batch_equals_alone<Eigen::half, kv_cache>(f, 2);
        expect_batch_equals_alone<float, q8_0_kv_cache>(f, 2);
    }
}

TEST(decoder_batch, bad_sequences_are_named) {
    const char* const file = "models/stories260K/stories260K.gguf";
    NEXTTOK_REQUIRE_DATA(file);
    auto m = load_model(test::data_path(file));
    decoder<float> dec(m);
    kv_cache<float> c0(m->config(), 8), c1(m->config(), 4);
    std::vector<float> logits(2 * m->config().vocab_size);
    const std::vector<token_id> ok = {1, 2}, bad = {1, 9999}, five = {1, 2, 3, 4, 5};
    using seq = batch_sequence<kv_cache<float>>;
    const seq with_bad_token[] = {{ok, 0, &c0, logits_for::last}, {bad, 0, &c1, logits_for::last}};
    try {
        dec.forward(std::span<const seq>(with_bad_token), logits);
        FAIL() << "expected invalid_argument_error";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("sequence 1 of the batch: token id 9999"), std::string::npos) << e.what();
    }
    const seq too_long[] = {{ok, 0, &c0, logits_for::last}, {five, 0, &c1, logits_for::last}};
    EXPECT_THROW(dec.forward(std::span<const seq>(too_long), logits), cache_full_error);
    const seq empty[] = {{ok, 0, &c0, logits_for::last}, {std::span<const token_id>(), 0, &c1, logits_for::last}};
    EXPECT_THROW(dec.forward(std::span<const seq>(empty), logits), invalid_argument_error);
    EXPECT_THROW(dec.forward(std::span<const seq>(), logits), invalid_argument_error);
}

}  // namespace
}  // namespace nexttok

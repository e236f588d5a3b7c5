// decoder<float>::forward on paged sequences (paged_kv_cache::sequence) against fresh runs in a
// contiguous kv_cache: a prompt then single-token steps, with blocks of 1, 5 and 16 positions,
// after a fork (both branches continue as fresh runs of their own tokens) and after attaching a
// cached prefix.
//
// On tiny-f32 (head_dim 32) and stories260K (head_dim 8, so the attention kernels' scalar tails
// run) the logits are bitwise those of kv_cache: the tails use std::fma explicitly, so the row
// accessor of a cache type cannot change their rounding.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/paged_kv_cache.hpp>
#include <nexttok/cache/q8_0_kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/model/load_model.hpp>

#include <reference_logits.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace nexttok {
namespace {

const char* const tiny_gguf = "models/random/tiny-f32.gguf";
const char* const stories_gguf = "models/stories260K/stories260K.gguf";
constexpr std::int64_t context = 64;

using logits_list = std::vector<std::vector<float>>;

// Logits after each forward call: the prompt at pos0, then one call per token of `steps`.
template <class Cache>
logits_list run(decoder<float>& dec, Cache& cache, std::int64_t pos0, const std::vector<token_id>& prompt,
                const std::vector<token_id>& steps) {
    logits_list out;
    std::vector<float> logits(static_cast<std::size_t>(dec.config().vocab_size));
    dec.forward(prompt, pos0, cache, logits);
    out.push_back(logits);
    std::int64_t pos = pos0 + static_cast<std::int64_t>(prompt.size());
    for (token_id t : steps) {
        dec.forward(std::span<const token_id>(&t, 1), pos++, cache, logits);
        out.push_back(logits);
    }
    return out;
}

// Bitwise equal logits (exact), or within 1e-6 relative RMS with the same argmax, call by call.
::testing::AssertionResult same_logits(const logits_list& got, const logits_list& ref, bool exact) {
    if (got.size() != ref.size())
        return ::testing::AssertionFailure() << got.size() << " forward calls vs " << ref.size();
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i].size() != ref[i].size())
            return ::testing::AssertionFailure() << "forward call " << i << ": sizes differ";
        const auto n = static_cast<std::int64_t>(ref[i].size());
        if (exact ? std::memcmp(got[i].data(), ref[i].data(), ref[i].size() * sizeof(float)) != 0
                  : test::relative_rms_error(got[i], ref[i]) >= 1e-6 ||
                        test::argmax(got[i].data(), n) != test::argmax(ref[i].data(), n))
            return ::testing::AssertionFailure() << "the logits of forward call " << i << " differ (relative RMS "
                                                 << test::relative_rms_error(got[i], ref[i]) << ")";
    }
    return ::testing::AssertionSuccess();
}

// A prompt, its greedy continuation (steps) and another one (alt_steps), and the logits of fresh
// runs of both in a kv_cache; `exact`: whether paged runs must match them bitwise.
struct reference {
    std::shared_ptr<const model> m;
    bool exact = true;
    std::vector<token_id> prompt{1, 403, 407, 261, 378};
    std::vector<token_id> steps, alt_steps;
    logits_list logits, alt_logits;
};

logits_list fresh_run(decoder<float>& dec, const std::vector<token_id>& prompt, const std::vector<token_id>& steps) {
    kv_cache<float> cache(dec.config(), context);
    return run(dec, cache, 0, prompt, steps);
}

reference make_reference(const char* file, bool exact) {
    reference r;
    r.exact = exact;
    r.m = load_model(test::data_path(file));
    decoder<float> dec(r.m);
    kv_cache<float> cache(r.m->config(), context);
    std::vector<float> logits(static_cast<std::size_t>(r.m->config().vocab_size));
    dec.forward(r.prompt, 0, cache, logits);
    for (std::int64_t i = 0; i < 10; ++i) {
        r.steps.push_back(static_cast<token_id>(test::argmax(logits.data(), static_cast<std::int64_t>(logits.size()))));
        dec.forward(std::span<const token_id>(&r.steps.back(), 1), static_cast<std::int64_t>(r.prompt.size()) + i,
                    cache, logits);
    }
    for (token_id t : r.steps) r.alt_steps.push_back((t + 7) % static_cast<token_id>(r.m->config().vocab_size));
    r.logits = fresh_run(dec, r.prompt, r.steps);
    r.alt_logits = fresh_run(dec, r.prompt, r.alt_steps);
    return r;
}

// A prompt and ten steps in one sequence of pools with blocks of 1, 5 and 16 positions, beside
// another sequence whose blocks interleave with it.
void expect_block_sizes_match(const reference& r) {
    decoder<float> dec(r.m);
    for (std::int64_t bs : {1, 5, 16}) {
        paged_kv_cache<float> pool(r.m->config(), {.n_blocks = 2 * (context / bs + 1), .block_size = bs});
        const seq_id other = pool.create();
        const seq_id s = pool.create();
        auto view = pool.sequence(s);
        std::vector<float> logits(static_cast<std::size_t>(r.m->config().vocab_size));
        logits_list got;
        dec.forward(r.prompt, 0, view, logits);
        got.push_back(logits);
        for (std::size_t i = 0; i < r.steps.size(); ++i) {
            pool.reserve(other, pool.size(other) + 1);
            dec.forward(std::span<const token_id>(&r.steps[i], 1), static_cast<std::int64_t>(r.prompt.size() + i), view,
                        logits);
            got.push_back(logits);
        }
        EXPECT_TRUE(same_logits(got, r.logits, r.exact)) << "block size " << bs;
        EXPECT_EQ(pool.size(s), 15);
        EXPECT_EQ(pool.sequence_blocks(s), (15 + bs - 1) / bs);
    }
}

// After the prompt, b forks a (sharing the partly filled second block of 4); a takes the other
// continuation, b the greedy one, interleaved: each matches its own fresh run.
void expect_fork_continues_as_fresh_runs(const reference& r) {
    decoder<float> dec(r.m);
    paged_kv_cache<float> pool(r.m->config(), {.n_blocks = 16, .block_size = 4});
    const seq_id a = pool.create();
    auto va = pool.sequence(a);
    logits_list la = run(dec, va, 0, r.prompt, {});
    const seq_id b = pool.fork(a);
    auto vb = pool.sequence(b);
    EXPECT_EQ(pool.n_used_blocks(), 2);
    logits_list lb = la;
    std::vector<float> logits(static_cast<std::size_t>(r.m->config().vocab_size));
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
        const auto pos = static_cast<std::int64_t>(r.prompt.size() + i);
        dec.forward(std::span<const token_id>(&r.alt_steps[i], 1), pos, va, logits);
        la.push_back(logits);
        dec.forward(std::span<const token_id>(&r.steps[i], 1), pos, vb, logits);
        lb.push_back(logits);
    }
    EXPECT_TRUE(same_logits(la, r.alt_logits, r.exact)) << "the forked-from sequence";
    EXPECT_TRUE(same_logits(lb, r.logits, r.exact)) << "the fork";
    EXPECT_EQ(pool.n_used_blocks(), 1 + 2 * 3) << "only the first block stays shared";
}

// A finished sequence publishes its 15 tokens (3 full blocks of 4) and ends; a new one attaches 12
// positions from the cache and runs positions 12 and 13 in one call: the logits of a fresh run.
void expect_attached_prefix_continues_as_a_fresh_run(const reference& r) {
    decoder<float> dec(r.m);
    paged_kv_cache<float> pool(r.m->config(), {.n_blocks = 16, .block_size = 4});
    std::vector<token_id> all = r.prompt;
    all.insert(all.end(), r.steps.begin(), r.steps.end());
    const seq_id a = pool.create();
    auto va = pool.sequence(a);
    run(dec, va, 0, r.prompt, r.steps);
    pool.publish(a, all);
    pool.release(a);
    EXPECT_EQ(pool.n_cached_blocks(), 3);

    const seq_id b = pool.create();
    ASSERT_EQ(pool.attach_prefix(b, std::span<const token_id>(all).first(14)), 12);
    auto vb = pool.sequence(b);
    std::vector<float> logits(static_cast<std::size_t>(r.m->config().vocab_size));
    dec.forward(std::span<const token_id>(all).subspan(12, 2), 12, vb, logits);
    // r.logits[k] follow position 4 + k: position 13 is k = 9.
    EXPECT_TRUE(same_logits({logits}, {r.logits[9]}, r.exact));
    EXPECT_EQ(pool.prefix_hit_blocks(), 3);
}

TEST(paged_kv_cache_decoder, block_sizes_give_bitwise_the_logits_of_kv_cache) {
    NEXTTOK_REQUIRE_DATA(tiny_gguf);
    expect_block_sizes_match(make_reference(tiny_gguf, true));
}

TEST(paged_kv_cache_decoder, fork_continues_bitwise_as_fresh_kv_cache_runs) {
    NEXTTOK_REQUIRE_DATA(tiny_gguf);
    expect_fork_continues_as_fresh_runs(make_reference(tiny_gguf, true));
}

TEST(paged_kv_cache_decoder, attached_prefix_continues_bitwise_as_a_fresh_kv_cache_run) {
    NEXTTOK_REQUIRE_DATA(tiny_gguf);
    expect_attached_prefix_continues_as_a_fresh_run(make_reference(tiny_gguf, true));
}

TEST(paged_kv_cache_decoder, q8_0_gives_bitwise_the_logits_of_q8_0_kv_cache) {
    NEXTTOK_REQUIRE_DATA(tiny_gguf);
    const reference r = make_reference(tiny_gguf, true);
    decoder<float> dec(r.m);
    q8_0_kv_cache<float> contiguous(r.m->config(), context);
    const logits_list ref = run(dec, contiguous, 0, r.prompt, r.steps);
    q8_0_paged_kv_cache<float> pool(r.m->config(), {.n_blocks = 8, .block_size = 4});
    auto view = pool.sequence(pool.create());
    EXPECT_TRUE(same_logits(run(dec, view, 0, r.prompt, r.steps), ref, true));
}

TEST(paged_kv_cache_decoder, stories260_k_block_sizes_fork_and_prefix_match_kv_cache_bitwise) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const reference r = make_reference(stories_gguf, true);
    expect_block_sizes_match(r);
    expect_fork_continues_as_fresh_runs(r);
    expect_attached_prefix_continues_as_a_fresh_run(r);
}

}  // namespace
}  // namespace nexttok

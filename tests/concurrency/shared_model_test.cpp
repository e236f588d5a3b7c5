// Thread safety of a loaded model: one model shared read-only by four threads, each with its own
// decoder (one thread), kv_cache and sampler, generating 100 tokens with different seeds at the same
// time; each result equals, tokens and log-probabilities bitwise, the same generation run alone.
// On a random model (always) and on stories260K (when the shared data is there). Written to be clean
// under ThreadSanitizer: each thread writes only its own result slot, read after join().
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/model/random_model.hpp>
#include <nexttok/sampling/make_sampler.hpp>
#include <nexttok/stopping/max_new_tokens.hpp>

#include "concurrency_util.hpp"
#include "test_data.hpp"

#include <gtest/gtest.h>

#include <latch>
#include <string>
#include <thread>
#include <vector>

namespace nexttok {
namespace {

constexpr std::int64_t n_threads = 4;
constexpr std::int64_t n_tokens = 100;

struct thread_job {
    std::vector<token_id> prompt;
    sampling_options sampling;
};

std::vector<thread_job> four_jobs(std::int64_t vocab_size) {
    std::vector<thread_job> jobs;
    for (std::int64_t i = 0; i < n_threads; ++i) {
        thread_job j;
        j.prompt = test::random_tokens(static_cast<std::uint64_t>(100 + i), 4 + 3 * i, vocab_size);
        j.sampling.temperature = 0.9f;
        j.sampling.top_k = 40;
        j.sampling.seed = static_cast<std::uint64_t>(1000 + 17 * i);
        jobs.push_back(std::move(j));
    }
    return jobs;
}

// One generation with its own decoder, cache and sampler: what each thread runs.
generation_result run(const std::shared_ptr<const model>& m, const thread_job& j) {
    decoder<float> dec(m, 1);
    kv_cache<float> cache(m->config(), static_cast<std::int64_t>(j.prompt.size()) + n_tokens);
    any_sampler sample = make_sampler(j.sampling);
    max_new_tokens stop(n_tokens);
    return generate(dec, cache, std::span<const token_id>(j.prompt), sample, stop);
}

void expect_concurrent_equals_sequential(const std::shared_ptr<const model>& m) {
    const std::vector<thread_job> jobs = four_jobs(m->config().vocab_size);
    std::vector<generation_result> alone;
    for (const thread_job& j : jobs) alone.push_back(run(m, j));

    std::vector<generation_result> together(jobs.size());
    std::latch start(n_threads);
    std::vector<std::thread> threads;
    for (std::int64_t i = 0; i < n_threads; ++i)
        threads.emplace_back([&, i] {
            const auto k = static_cast<std::size_t>(i);
            start.arrive_and_wait();  // all four generate at the same time
            together[k] = run(m, jobs[k]);
        });
    for (std::thread& t : threads) t.join();

    for (std::size_t i = 0; i < jobs.size(); ++i) {
        ASSERT_EQ(alone[i].tokens.size(), static_cast<std::size_t>(n_tokens)) << "thread " << i;
        EXPECT_EQ(together[i].tokens, alone[i].tokens) << "thread " << i;
        EXPECT_TRUE(test::bitwise_equal(together[i].logprobs, alone[i].logprobs)) << "thread " << i;
        EXPECT_TRUE(test::bitwise_equal(together[i].processed_logprobs, alone[i].processed_logprobs)) << "thread " << i;
        EXPECT_EQ(together[i].reason, alone[i].reason) << "thread " << i;
    }
    // Different seeds and prompts give different generations (else the comparison proves little).
    EXPECT_NE(alone[0].tokens, alone[1].tokens);
}

TEST(shared_model, four_threads_generate_as_they_do_alone_on_a_random_model) {
    expect_concurrent_equals_sequential(test::small_random_model());
}

TEST(shared_model, four_threads_generate_as_they_do_alone_on_stories260_k) {
    NEXTTOK_REQUIRE_DATA(test::stories_gguf);
    expect_concurrent_equals_sequential(load_model(test::data_path(test::stories_gguf)));
}

}  // namespace
}  // namespace nexttok

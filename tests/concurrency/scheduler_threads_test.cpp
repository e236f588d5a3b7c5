// The continuous-batching scheduler stepping on one thread while three other threads submit requests
// and cancel some of them at random points (a fixed number of each, random timing). Oracles: every
// request not cancelled equals generate() run alone (tokens and log-probabilities bitwise); a
// cancelled one ends with finish_reason cancelled holding a prefix of those tokens, or, if it had
// already finished, equals generate() alone; afterwards no block of the pool is in use (cached
// prefix blocks may stay) and the counters add up. A small pool makes preemption happen too.
// Written to be clean under ThreadSanitizer: each client writes only its own records, read after join().
#include <nexttok/batching/scheduler.hpp>
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/paged_kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/sampling/make_sampler.hpp>
#include <nexttok/stopping/max_new_tokens.hpp>

#include "concurrency_util.hpp"
#include "test_data.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace nexttok {
namespace {

constexpr int n_clients = 3;
constexpr int n_per_client = 6;
constexpr int max_cancels_per_client = 2;

struct client_job {
    std::vector<token_id> prompt;
    sampling_options sampling;
    std::int64_t n_new = 0;
};

// Requests of different lengths; every other one starts with the same 16 tokens (prefix caching).
std::vector<client_job> make_jobs(std::int64_t vocab_size) {
    const std::vector<token_id> shared = test::random_tokens(7, 16, vocab_size);
    std::vector<client_job> jobs;
    for (int k = 0; k < n_clients * n_per_client; ++k) {
        client_job j;
        if (k % 2 == 0) j.prompt = shared;
        const auto tail = test::random_tokens(static_cast<std::uint64_t>(300 + k), 2 + k % 11, vocab_size);
        j.prompt.insert(j.prompt.end(), tail.begin(), tail.end());
        j.sampling.temperature = k % 5 == 0 ? 0.0f : 0.8f;
        j.sampling.seed = static_cast<std::uint64_t>(500 + k);
        j.n_new = 20 + (k * 7) % 41;
        jobs.push_back(std::move(j));
    }
    return jobs;
}

generation_result alone(const std::shared_ptr<const model>& m, const client_job& j) {
    decoder<float> dec(m, 1);
    kv_cache<float> cache(m->config(), static_cast<std::int64_t>(j.prompt.size()) + j.n_new);
    any_sampler sample = make_sampler(j.sampling);
    max_new_tokens stop(j.n_new);
    return generate(dec, cache, std::span<const token_id>(j.prompt), sample, stop);
}

// What a client saw of one request.
struct record {
    request_id id = -1;
    bool cancel_sent = false;     // cancel() returned
    bool cancel_refused = false;  // cancel() said it had already finished
};

void submit_and_cancel_from_three_threads(const std::shared_ptr<const model>& m) {
    const std::vector<client_job> jobs = make_jobs(m->config().vocab_size);
    std::vector<generation_result> want;
    for (const client_job& j : jobs) want.push_back(alone(m, j));

    decoder<float> dec(m, 1);
    paged_kv_cache<float> pool(m->config(), {.n_blocks = 40, .block_size = 8});
    scheduler<float> batch(dec, pool, nullptr, {.max_step_tokens = 64});

    std::vector<record> records(jobs.size());  // client c writes [c * n_per_client, (c + 1) * n_per_client)
    std::atomic<int> clients_done{0};
    std::atomic<bool> first_cancel_sent{false};
    const auto client = [&](int c) {
        std::uint64_t rng = static_cast<std::uint64_t>(9000 + c);
        int cancels = 0;
        for (int i = 0; i < n_per_client; ++i) {
            const auto k = static_cast<std::size_t>(c * n_per_client + i);
            token_callback on_token;
            if (k == 0)  // cannot finish before its cancellation arrives: its first token waits for it
                on_token = [&](const token_event&) {
                    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                    while (!first_cancel_sent && std::chrono::steady_clock::now() < until)
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    return true;
                };
            records[k].id = batch.submit(jobs[k].prompt, make_sampler(jobs[k].sampling), max_new_tokens(jobs[k].n_new),
                                         std::move(on_token));
            std::this_thread::sleep_for(std::chrono::microseconds(detail::splitmix64_next(rng) % 3000));
            const bool cancel_now =
                k == 0 || (cancels < max_cancels_per_client && detail::splitmix64_next(rng) % 3 == 0);
            if (!cancel_now) continue;
            // One of this client's requests so far not yet cancelled, at random.
            std::vector<std::size_t> open;
            for (std::size_t q = static_cast<std::size_t>(c * n_per_client); q <= k; ++q)
                if (!records[q].cancel_sent && !records[q].cancel_refused) open.push_back(q);
            const std::size_t victim = k == 0 ? 0 : open[detail::splitmix64_next(rng) % open.size()];
            try {
                batch.cancel(records[victim].id);
                records[victim].cancel_sent = true;
            } catch (const invalid_argument_error& e) {
                EXPECT_NE(std::string(e.what()).find("already finished"), std::string::npos) << e.what();
                records[victim].cancel_refused = true;
            }
            if (k == 0) first_cancel_sent = true;
            ++cancels;
        }
        ++clients_done;
    };
    std::vector<std::thread> clients;
    for (int c = 0; c < n_clients; ++c) clients.emplace_back(client, c);

    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((clients_done < n_clients || !batch.idle()) && std::chrono::steady_clock::now() < deadline)
        if (!batch.step()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    for (std::thread& t : clients) t.join();
    ASSERT_TRUE(batch.idle()) << "bounded: 60 s";

    int n_cancelled = 0;
    for (std::size_t k = 0; k < jobs.size(); ++k) {
        const std::string what = "request " + std::to_string(k);
        const std::optional<generation_result> got = batch.take_result(records[k].id);
        ASSERT_TRUE(got.has_value()) << what;
        if (records[k].cancel_sent && got->reason == finish_reason::cancelled) {
            ++n_cancelled;
            ASSERT_LE(got->tokens.size(), want[k].tokens.size()) << what;
            EXPECT_TRUE(std::equal(got->tokens.begin(), got->tokens.end(), want[k].tokens.begin()))
                << what << ": what it made before";
            continue;
        }
        EXPECT_EQ(got->tokens, want[k].tokens) << what;
        EXPECT_TRUE(test::bitwise_equal(got->logprobs, want[k].logprobs)) << what;
        EXPECT_EQ(got->reason, want[k].reason) << what;
    }
    EXPECT_GE(n_cancelled, 1) << "request 0 waits for its cancellation";
    EXPECT_EQ(pool.n_used_blocks(), 0) << "blocks held after every request ended";
    EXPECT_EQ(pool.n_sequences(), 0);
    EXPECT_LE(pool.n_cached_blocks(), pool.n_blocks());
    const scheduler_stats st = batch.stats();
    EXPECT_EQ(st.submitted, static_cast<std::int64_t>(jobs.size()));
    EXPECT_EQ(st.finished, static_cast<std::int64_t>(jobs.size()));
    EXPECT_EQ(st.waiting + st.running, 0);
}

TEST(scheduler_threads, submit_and_cancel_from_three_threads_on_a_random_model) {
    submit_and_cancel_from_three_threads(test::small_random_model());
}

TEST(scheduler_threads, submit_and_cancel_from_three_threads_on_stories260_k) {
    NEXTTOK_REQUIRE_DATA(test::stories_gguf);
    submit_and_cancel_from_three_threads(load_model(test::data_path(test::stories_gguf)));
}

}  // namespace
}  // namespace nexttok

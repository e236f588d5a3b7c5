// The scheduler on real models, each request against its oracle: the same request run alone by
// generate() on a contiguous kv_cache (tokens, text, finish reason and log-probabilities bitwise),
// whatever the batch, the prefill chunking, the token budget, preemption or the number of threads.
// Plus the counts the paged pool makes exact: prompt positions computed with shared prefixes, the
// blocks held, and the errors for bad input.
#include <nexttok/batching.hpp>
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/paged_kv_cache.hpp>
#include <nexttok/cache/q8_0_kv_cache.hpp>
#include <nexttok/generation.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/sampling.hpp>
#include <nexttok/stopping.hpp>
#include <nexttok/tokenizer.hpp>

#include <test_data.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace nexttok {
namespace {

const char* const stories_gguf = "models/stories260K/stories260K.gguf";
const char* const qwen2_gguf = "models/random/tiny-qwen2-f32.gguf";

struct loaded {
    std::shared_ptr<const model> m;
    tokenizer tok;
};

const loaded& stories() {
    static const loaded s = [] {
        auto m = load_model(test::data_path(stories_gguf));
        return loaded{m, load_tokenizer(*m->gguf())};
    }();
    return s;
}

// One request: a prompt and its options.
struct job {
    std::vector<token_id> prompt;
    generation_options options;
};

generation_options options_with(float temperature, std::uint64_t seed, std::int64_t n) {
    generation_options o;
    o.sampling.temperature = temperature;
    o.sampling.seed = seed;
    o.max_new_tokens = n;
    return o;
}

// Eight requests of different lengths and policies (greedy, sampled with different seeds, top-k,
// top-p, min-p, penalties, stop strings and token sequences, log-probabilities), so that they finish
// at different steps.
std::vector<job> mixed_jobs(const tokenizer& tok) {
    std::vector<job> jobs;
    jobs.push_back({tok.encode("Once upon a time", true), options_with(0.0f, 0, 40)});
    jobs.push_back(
        {tok.encode("The little dog ran to the park and saw a big red ball", true), options_with(0.9f, 7, 50)});
    jobs.push_back({tok.encode("Lily", true), options_with(1.0f, 123, 30)});
    job j{tok.encode("One day, a boy named Tim went to the store with his mom. He wanted", true),
          options_with(0.7f, 99, 60)};
    j.options.sampling.top_k = 10;
    j.options.sampling.repeat_penalty = 1.3f;
    j.options.n_logprobs = 3;
    jobs.push_back(std::move(j));
    job k{tok.encode("Sue had a cat", true), options_with(0.8f, 5, 45)};
    k.options.stop = {"."};
    jobs.push_back(std::move(k));
    jobs.push_back({tok.encode("Once upon a time there was", true), options_with(1.2f, 2024, 35)});
    job m{tok.encode("Tom and his friend Ben played in the garden", true), options_with(0.8f, 31, 55)};
    m.options.sampling.top_p = 0.9f;
    m.options.sampling.min_p = 0.1f;
    m.options.stop_token_sequences = {tok.encode(" the", false)};
    jobs.push_back(std::move(m));
    job g{tok.encode("The", true), options_with(0.0f, 0, 25)};
    g.options.sampling.presence_penalty = 0.5f;
    jobs.push_back(std::move(g));
    return jobs;
}

// positions: the cache's (0: the model's context, 128 for stories260K; RoPE runs past it).
generation_result alone(const loaded& s, const job& j, std::int64_t positions = 0) {
    decoder<float> dec(s.m);
    kv_cache<float> cache(s.m->config(), positions > 0 ? positions : s.m->config().max_seq_len);
    return generate(dec, cache, s.tok, j.prompt, j.options);
}

void expect_same(const generation_result& got, const generation_result& want, const std::string& what) {
    EXPECT_EQ(got.tokens, want.tokens) << what;
    EXPECT_EQ(got.text, want.text) << what;
    EXPECT_EQ(got.reason, want.reason) << what;
    EXPECT_EQ(got.logprobs, want.logprobs) << what;
    EXPECT_EQ(got.processed_logprobs, want.processed_logprobs) << what;
    ASSERT_EQ(got.top_logprobs.size(), want.top_logprobs.size()) << what;
    for (std::size_t i = 0; i < got.top_logprobs.size(); ++i) {
        ASSERT_EQ(got.top_logprobs[i].size(), want.top_logprobs[i].size()) << what;
        for (std::size_t k = 0; k < got.top_logprobs[i].size(); ++k) {
            EXPECT_EQ(got.top_logprobs[i][k].id, want.top_logprobs[i][k].id) << what;
            EXPECT_EQ(got.top_logprobs[i][k].logprob, want.top_logprobs[i][k].logprob) << what;
        }
    }
}

std::vector<generation_result> references(const loaded& s, const std::vector<job>& jobs, std::int64_t positions = 0) {
    std::vector<generation_result> r;
    for (const job& j : jobs) r.push_back(alone(s, j, positions));
    return r;
}

// Runs the jobs through one scheduler: the first half submitted up front, the rest after a few
// steps (so that requests join a running batch), with streamed text collected per request.
template <class Pool>
std::vector<generation_result> run_batch(decoder<float>& dec, Pool& pool, const tokenizer& tok,
                                         const std::vector<job>& jobs, const scheduler_options& so,
                                         std::vector<std::string>* streamed = nullptr) {
    scheduler<float, Pool> batch(dec, pool, &tok, so);
    std::vector<request_id> ids;
    std::vector<std::string> texts(jobs.size());
    auto submit = [&](std::size_t i) {
        ids.push_back(batch.submit(jobs[i].prompt, jobs[i].options, [&texts, i](const token_event& e) {
            texts[i] += e.text;
            return true;
        }));
    };
    const std::size_t first = (jobs.size() + 1) / 2;
    for (std::size_t i = 0; i < first; ++i) submit(i);
    for (int k = 0; k < 3; ++k) batch.step();
    for (std::size_t i = first; i < jobs.size(); ++i) submit(i);
    batch.run();
    EXPECT_TRUE(batch.idle());
    std::vector<generation_result> results;
    for (const request_id id : ids) {
        std::optional<generation_result> r = batch.take_result(id);
        EXPECT_TRUE(r.has_value());
        results.push_back(r ? std::move(*r) : generation_result{});
        EXPECT_FALSE(batch.take_result(id).has_value()) << "a result is taken once";
    }
    if (streamed) *streamed = texts;
    return results;
}

// A sampler that keeps a copy of every logits vector it is given, around the policies of a job.
struct recording_sampler {
    any_sampler inner;
    std::shared_ptr<std::vector<std::vector<float>>> seen = std::make_shared<std::vector<std::vector<float>>>();
    token_id sample(std::span<const float> logits) {
        seen->emplace_back(logits.begin(), logits.end());
        return inner.sample(logits);
    }
    void accept(token_id id) { inner.accept(id); }
    void reset() { inner.reset(); }
    float last_logprob() const { return inner.last_logprob(); }
};

TEST(scheduler, each_request_gets_bitwise_the_logits_it_gets_alone) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const loaded& s = stories();
    const std::vector<job> jobs = mixed_jobs(s.tok);
    std::vector<std::vector<std::vector<float>>> want;
    for (const job& j : jobs) {
        decoder<float> dec(s.m);
        kv_cache<float> cache(s.m->config(), s.m->config().max_seq_len);
        recording_sampler sample{make_sampler(j.options, s.tok)};
        auto stop = make_stopping(j.options, s.tok);
        generate(dec, cache, s.tok, j.prompt, sample, stop);
        want.push_back(*sample.seen);
    }
    for (const int threads : {1, 2}) {
        for (const std::int64_t chunk : {1, 7, 64}) {
            decoder<float> dec(s.m, threads);
            paged_kv_cache<float> pool(s.m->config(), {.n_blocks = 256, .block_size = 16});
            scheduler<float> batch(dec, pool, &s.tok, {.max_step_tokens = 64, .prefill_chunk = chunk});
            std::vector<recording_sampler> samplers;
            for (const job& j : jobs) {
                samplers.push_back({make_sampler(j.options, s.tok)});
                batch.submit(j.prompt, samplers.back(), make_stopping(j.options, s.tok));  // shares `seen`
            }
            batch.run();
            for (std::size_t i = 0; i < jobs.size(); ++i)
                EXPECT_TRUE(*samplers[i].seen == want[i])
                    << "request " << i << ", " << threads << " threads, prefill chunks of " << chunk << ": "
                    << samplers[i].seen->size() << " logits vectors, alone " << want[i].size();
        }
    }
}

TEST(scheduler, each_request_equals_generate_alone_for_any_chunking_and_threads) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const loaded& s = stories();
    const std::vector<job> jobs = mixed_jobs(s.tok);
    const std::vector<generation_result> want = references(s, jobs);
    for (const int threads : {1, 2}) {
        for (const std::int64_t chunk : {1, 7, 64}) {
            decoder<float> dec(s.m, threads);
            paged_kv_cache<float> pool(s.m->config(), {.n_blocks = 256, .block_size = 16});
            std::vector<std::string> streamed;
            const auto got =
                run_batch(dec, pool, s.tok, jobs, {.max_step_tokens = 64, .prefill_chunk = chunk}, &streamed);
            for (std::size_t i = 0; i < jobs.size(); ++i) {
                const std::string what = "request " + std::to_string(i) + ", " + std::to_string(threads) +
                                         " threads, prefill chunks of " + std::to_string(chunk);
                expect_same(got[i], want[i], what);
                EXPECT_EQ(streamed[i], want[i].text) << what << ": the streamed text is the result's";
            }
            EXPECT_EQ(pool.n_used_blocks(), 0) << "every finished request frees its blocks";
        }
    }
}

TEST(scheduler, small_token_budgets_and_a_q8_0_pool_equal_the_same_cache_alone) {
    NEXTTOK_REQUIRE_DATA(qwen2_gguf);
    auto m = load_model(test::data_path(qwen2_gguf));
    // tiny-qwen2 has random weights and no vocabulary in use here: policies without text.
    std::vector<std::vector<token_id>> prompts = {
        {1, 5, 9, 200}, {1, 17}, {1, 3, 3, 3, 3, 3, 3, 3, 3, 40, 41, 42}, {7}};
    for (const std::int64_t budget : {1, 3, 16}) {
        decoder<float> dec(m, 2);
        q8_0_paged_kv_cache<float> pool(m->config(), {.n_blocks = 64, .block_size = 4});
        scheduler<float, q8_0_paged_kv_cache<float>> batch(dec, pool, nullptr, {.max_step_tokens = budget});
        std::vector<request_id> ids;
        for (std::size_t i = 0; i < prompts.size(); ++i)
            ids.push_back(batch.submit(prompts[i], make_sampler_chain(temperature(0.9f), categorical(40 + i)),
                                       max_new_tokens(12 + 3 * static_cast<std::int64_t>(i))));
        batch.run();
        for (std::size_t i = 0; i < prompts.size(); ++i) {
            decoder<float> solo(m);
            q8_0_kv_cache<float> cache(m->config(), m->config().max_seq_len);
            auto sample = make_sampler_chain(temperature(0.9f), categorical(40 + i));
            max_new_tokens stop(12 + 3 * static_cast<std::int64_t>(i));
            const generation_result want = generate(solo, cache, prompts[i], sample, stop);
            const generation_result got = *batch.take_result(ids[i]);
            EXPECT_EQ(got.tokens, want.tokens) << "request " << i << ", budget " << budget;
            EXPECT_EQ(got.logprobs, want.logprobs) << "request " << i << ", budget " << budget;
        }
    }
}

// 8 requests with one 200-token prefix and their own suffixes: the prefix is computed once.
TEST(scheduler, a_shared_prefix_is_computed_once) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const loaded& s = stories();
    std::vector<token_id> prefix = s.tok.encode(
        "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw "
        "a big "
        "tree with a swing. She wanted to play on the swing, but it was too high. Lily asked her mom for help. Her mom "
        "lifted "
        "her up and she swung back and forth. Lily was very happy. Then a boy named Tom came to the park. He had a "
        "ball and "
        "he wanted to play with Lily. They played together all day. At the end of the day, they were tired and went "
        "home. The next morning, Lily woke up early. She ate her breakfast and ran "
        "outside to find Tom, and they played with the ball again until it was time for lunch.",
        true);
    ASSERT_GE(prefix.size(), 200u);
    prefix.resize(200);
    const char* suffixes[] = {" The",     " Lily said", " Tom", " They went",
                              " One day", " The sun",   " Mom", " A bird sang"};
    std::vector<job> jobs;
    std::int64_t suffix_tokens = 0;
    for (const char* text : suffixes) {
        job j{prefix, options_with(0.0f, 0, 8)};
        const std::vector<token_id> tail = s.tok.encode(text, false);
        j.prompt.insert(j.prompt.end(), tail.begin(), tail.end());
        suffix_tokens += static_cast<std::int64_t>(tail.size());
        jobs.push_back(std::move(j));
    }
    const std::vector<generation_result> want = references(s, jobs, 512);

    constexpr std::int64_t block = 8;  // 200 = 25 whole blocks
    decoder<float> dec(s.m, 2);
    paged_kv_cache<float> pool(s.m->config(), {.n_blocks = 256, .block_size = block, .max_seq_len = 512});
    scheduler<float> batch(dec, pool, &s.tok, {.max_step_tokens = 64});
    std::vector<request_id> ids;
    for (const job& j : jobs) ids.push_back(batch.submit(j.prompt, j.options));
    batch.run();
    for (std::size_t i = 0; i < jobs.size(); ++i)
        expect_same(*batch.take_result(ids[i]), want[i], "request " + std::to_string(i));

    const scheduler_stats st = batch.stats();
    EXPECT_EQ(st.prompt_tokens, 200 + suffix_tokens) << "the prefix once, then each suffix";
    EXPECT_EQ(st.prefix_hit_tokens, 7 * 200);
    EXPECT_EQ(pool.prefix_hit_blocks(), 7 * 200 / block);
    // At most: the 25 shared blocks plus each request's own blocks for suffix + 8 generated tokens
    // (all 8 at once at worst).
    std::int64_t own = 0;
    for (const job& j : jobs) own += (static_cast<std::int64_t>(j.prompt.size()) + 8 + block - 1) / block - 200 / block;
    EXPECT_LE(st.peak_used_blocks, 200 / block + own);
    EXPECT_EQ(pool.n_used_blocks(), 0);
}

// A pool that holds about 3 of 6 requests at their full length: requests are preempted and
// recomputed, and each still equals its run alone.
TEST(scheduler, preempted_requests_are_recomputed_and_unchanged) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const loaded& s = stories();
    std::vector<job> jobs = mixed_jobs(s.tok);
    jobs.resize(6);
    for (job& j : jobs) {
        j.options.max_new_tokens = 60;
        j.options.stop_token_sequences.clear();
        j.options.ignore_eos = true;
        j.options.stop.clear();
    }
    const std::vector<generation_result> want = references(s, jobs);
    std::int64_t longest = 0;
    for (const job& j : jobs)
        longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(j.prompt.size()) + 60);
    constexpr std::int64_t block = 4;
    const std::int64_t n_blocks = 3 * ((longest + block - 1) / block);
    for (const int threads : {1, 2}) {
        decoder<float> dec(s.m, threads);
        paged_kv_cache<float> pool(s.m->config(), {.n_blocks = n_blocks, .block_size = block});
        const auto got = run_batch(dec, pool, s.tok, jobs, {.max_step_tokens = 32, .prefill_chunk = 7});
        for (std::size_t i = 0; i < jobs.size(); ++i) expect_same(got[i], want[i], "request " + std::to_string(i));
        EXPECT_LE(pool.peak_used_blocks(), n_blocks);
        EXPECT_EQ(pool.n_used_blocks(), 0);
    }
    // The same with prefix caching off: a preempted request recomputes everything.
    decoder<float> dec(s.m);
    paged_kv_cache<float> pool(s.m->config(), {.n_blocks = n_blocks, .block_size = block, .prefix_caching = false});
    scheduler<float> batch(dec, pool, &s.tok, {.max_step_tokens = 32});
    std::vector<request_id> ids;
    for (const job& j : jobs) ids.push_back(batch.submit(j.prompt, j.options));
    batch.run();
    for (std::size_t i = 0; i < jobs.size(); ++i)
        expect_same(*batch.take_result(ids[i]), want[i], "request " + std::to_string(i));
    const scheduler_stats st = batch.stats();
    EXPECT_GT(st.preemptions, 0) << "the pool holds 3 of the 6 at full length";
    EXPECT_GT(st.recomputed_tokens, 0);
    EXPECT_EQ(st.generated_tokens, 6 * 60);
}

// 16 requests of 100 positions each (prompt + generated): the pool never holds more than their
// blocks, and none after.
TEST(scheduler, blocks_held_follow_the_tokens) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const loaded& s = stories();
    constexpr std::int64_t block = 16, length = 100;
    decoder<float> dec(s.m, 2);
    paged_kv_cache<float> pool(s.m->config(), {.n_blocks = 1024, .block_size = block});
    scheduler<float> batch(dec, pool, &s.tok, {.max_step_tokens = 128});
    std::vector<request_id> ids;
    for (int i = 0; i < 16; ++i) {
        std::vector<token_id> prompt = s.tok.encode("Once upon a time, number " + std::to_string(i), true);
        generation_options o =
            options_with(0.8f, static_cast<std::uint64_t>(i), length - static_cast<std::int64_t>(prompt.size()));
        o.ignore_eos = true;
        ids.push_back(batch.submit(prompt, o));
    }
    batch.run();
    for (const request_id id : ids) {
        const generation_result r = *batch.take_result(id);
        EXPECT_EQ(r.timings.n_prompt_tokens + static_cast<std::int64_t>(r.tokens.size()), length);
    }
    // The last sampled token of each is never run, so 99 positions are held at most.
    EXPECT_LE(pool.peak_used_blocks(), 16 * ((length + block - 1) / block));
    EXPECT_GE(pool.peak_used_blocks(), 16 * ((length - 1 + block - 1) / block) / 2) << "requests ran together";
    EXPECT_EQ(pool.n_used_blocks(), 0);
    EXPECT_EQ(batch.stats().peak_running, 16);
}

TEST(scheduler, bad_input_is_refused_with_the_sizes_and_ids) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const loaded& s = stories();
    decoder<float> dec(s.m);
    paged_kv_cache<float> pool(s.m->config(), {.n_blocks = 4, .block_size = 8});
    scheduler<float> batch(dec, pool, &s.tok);
    EXPECT_EQ(batch.capacity(), 32);
    const std::vector<token_id> long_prompt(33, 1);
    try {
        batch.submit(long_prompt, generation_options{});
        ADD_FAILURE() << "a prompt longer than the pool is refused";
    } catch (const invalid_argument_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("33 tokens"), std::string::npos) << m;
        EXPECT_NE(m.find("32 positions"), std::string::npos) << m;
        EXPECT_NE(m.find("4 blocks of 8"), std::string::npos) << m;
    }
    EXPECT_THROW(batch.submit(std::vector<token_id>{}, generation_options{}), invalid_argument_error);
    try {
        batch.submit(std::vector<token_id>{1, 600}, generation_options{});
        ADD_FAILURE() << "a token outside the vocabulary is refused";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("prompt token 1 is 600, outside the vocabulary [0, 512)"),
                  std::string::npos)
            << e.what();
    }
    generation_options bad;
    bad.sampling.top_p = 2.0f;
    try {
        batch.submit(std::vector<token_id>{1}, bad);
        ADD_FAILURE() << "bad options are refused";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("top_p"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(batch.idle()) << "nothing was queued";
    EXPECT_THROW(scheduler<float>(dec, pool, &s.tok, {.max_step_tokens = 0}), invalid_argument_error);

    try {
        batch.cancel(5);
        ADD_FAILURE() << "an unknown request cannot be cancelled";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("request 5 is unknown"), std::string::npos) << e.what();
    }
    const request_id done = batch.submit(s.tok.encode("Once", true), options_with(0.0f, 0, 3));
    batch.run();
    try {
        batch.cancel(done);
        ADD_FAILURE() << "a finished request cannot be cancelled";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("already finished"), std::string::npos) << e.what();
    }
    EXPECT_EQ(batch.take_result(done)->tokens.size(), 3u);
}

TEST(scheduler, a_cancelled_request_frees_its_blocks_and_the_others_are_unchanged) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const loaded& s = stories();
    const std::vector<job> jobs = mixed_jobs(s.tok);
    const std::vector<generation_result> want = references(s, jobs);
    decoder<float> dec(s.m);
    paged_kv_cache<float> pool(s.m->config(), {.n_blocks = 256, .block_size = 16});
    scheduler<float> batch(dec, pool, &s.tok);
    std::vector<request_id> ids;
    for (const job& j : jobs) ids.push_back(batch.submit(j.prompt, j.options));
    for (int k = 0; k < 5; ++k) batch.step();
    batch.cancel(ids[3]);  // running
    const request_id queued = batch.submit(s.tok.encode("Lily", true), options_with(0.0f, 0, 20));
    batch.cancel(queued);  // not yet admitted
    batch.run();
    const generation_result cancelled = *batch.take_result(ids[3]);
    EXPECT_EQ(cancelled.reason, finish_reason::cancelled);
    EXPECT_GT(cancelled.tokens.size(), 0u);
    ASSERT_LE(cancelled.tokens.size(), want[3].tokens.size());
    EXPECT_TRUE(std::equal(cancelled.tokens.begin(), cancelled.tokens.end(), want[3].tokens.begin()))
        << "what it made before";
    EXPECT_EQ(batch.take_result(queued)->reason, finish_reason::cancelled);
    for (std::size_t i = 0; i < jobs.size(); ++i)
        if (i != 3) expect_same(*batch.take_result(ids[i]), want[i], "request " + std::to_string(i));
    EXPECT_EQ(pool.n_used_blocks(), 0);
}

// Requests submitted and cancelled from another thread while one thread drives the steps.
TEST(scheduler, submissions_from_another_thread_equal_generate_alone) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const loaded& s = stories();
    const std::vector<job> jobs = mixed_jobs(s.tok);
    const std::vector<generation_result> want = references(s, jobs);
    decoder<float> dec(s.m);
    paged_kv_cache<float> pool(s.m->config(), {.n_blocks = 256, .block_size = 16});
    scheduler<float> batch(dec, pool, &s.tok);
    std::vector<request_id> ids(jobs.size());
    request_id long_one = -1;
    std::atomic<bool> submitted{false}, cancel_sent{false};
    std::thread client([&] {
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            ids[i] = batch.submit(jobs[i].prompt, jobs[i].options);
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        // A request that cannot finish before its cancellation arrives: its callback waits for it.
        generation_options o = options_with(0.0f, 0, 100);
        o.ignore_eos = true;
        long_one = batch.submit(s.tok.encode("Lily", true), o, [&](const token_event&) {
            const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (!cancel_sent && std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            return true;
        });
        batch.cancel(long_one);
        cancel_sent = true;
        submitted = true;
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((!submitted || !batch.idle()) && std::chrono::steady_clock::now() < deadline)
        if (!batch.step()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    client.join();
    ASSERT_TRUE(batch.idle()) << "bounded: 60 s";
    for (std::size_t i = 0; i < jobs.size(); ++i)
        expect_same(*batch.take_result(ids[i]), want[i], "request " + std::to_string(i));
    const generation_result cancelled = *batch.take_result(long_one);
    EXPECT_EQ(cancelled.reason, finish_reason::cancelled);
    EXPECT_LT(cancelled.tokens.size(), 100u);
    EXPECT_EQ(pool.n_used_blocks(), 0);
    const scheduler_stats st = batch.stats();
    EXPECT_EQ(st.submitted, static_cast<std::int64_t>(jobs.size()) + 1);
    EXPECT_EQ(st.finished, static_cast<std::int64_t>(jobs.size()) + 1);
}

TEST(generate_batch, results_in_input_order_equal_generate_alone) {
    NEXTTOK_REQUIRE_DATA(stories_gguf);
    const loaded& s = stories();
    std::vector<std::vector<token_id>> prompts;
    for (const char* p : {"Once upon a time", "The dog", "Lily and Tom", "One day"})
        prompts.push_back(s.tok.encode(p, true));
    const generation_options o = options_with(0.0f, 0, 40);
    decoder<float> dec(s.m, 2);
    paged_kv_cache<float> pool(s.m->config(), {.n_blocks = 128, .block_size = 16});
    std::vector<std::string> texts(prompts.size());
    const auto got = generate_batch(dec, pool, s.tok, std::span<const std::vector<token_id>>(prompts), o, {},
                                    [&](std::size_t i, const token_event& e) {
                                        texts[i] += e.text;
                                        return true;
                                    });
    ASSERT_EQ(got.size(), prompts.size());
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        const generation_result want = alone(s, {prompts[i], o});
        expect_same(got[i], want, "prompt " + std::to_string(i));
        EXPECT_EQ(texts[i], want.text);
    }
}

}  // namespace
}  // namespace nexttok

// Cached vs uncached decoding through the same generate(): the time of one decoding step at a
// context of L tokens, with a KV cache (one new token per forward call: cost nearly flat in L) and
// without (no_cache: the whole sequence again at every step: cost grows with L).
//
// The model has random weights, large enough that the forward pass dominates: dim 512, 8 layers,
// 8 heads, hidden 1376, vocab 4096, float. Each iteration prefills a prompt of L - 1 tokens and
// decodes `decode_steps` more; the reported time (manual timing) is the mean decode step.
// BM_uncached_over_cached measures both in the same iteration and reports their ratio, which is
// stable on a noisy machine where absolute times are not.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/no_cache.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/model/random_model.hpp>
#include <nexttok/sampling/greedy.hpp>
#include <nexttok/sampling/sampler_chain.hpp>
#include <nexttok/stopping/max_new_tokens.hpp>

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <vector>

namespace {

constexpr int decode_steps = 4;

const std::shared_ptr<const nexttok::model>& bench_model() {
    static const auto m = [] {
        nexttok::model_config c;
        c.vocab_size = 4096;
        c.dim = 512;
        c.hidden_dim = 1376;
        c.n_layers = 8;
        c.n_heads = 8;
        c.n_kv_heads = 8;
        c.max_seq_len = 1024;
        return nexttok::make_random_model(c, 42);
    }();
    return m;
}

int bench_threads() {
    const char* env = std::getenv("NEXTTOK_THREADS");
    return env != nullptr ? std::atoi(env) : 2;
}

std::vector<nexttok::token_id> prompt_of(std::int64_t n) {
    std::vector<nexttok::token_id> p(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
        p[static_cast<std::size_t>(i)] = static_cast<nexttok::token_id>((i * 7919 + 1) % 4096);
    return p;
}

// Seconds per decode step at context `context` (prompt of context - 1, then decode_steps + 1 tokens).
template <class Cache>
double seconds_per_step(nexttok::decoder<float>& dec, Cache& cache, std::int64_t context) {
    const auto prompt = prompt_of(context - 1);
    auto sampler = nexttok::make_sampler_chain(nexttok::greedy{});
    nexttok::max_new_tokens stop(decode_steps + 1);
    const auto r = nexttok::generate(dec, cache, std::span<const nexttok::token_id>(prompt), sampler, stop);
    benchmark::DoNotOptimize(r.tokens.data());
    return r.timings.decode_seconds / static_cast<double>(r.timings.n_decode_steps);
}

template <class Cache>
void BM_decode_step(benchmark::State& state) {
    const auto& m = bench_model();
    nexttok::decoder<float> dec(m, bench_threads());
    Cache cache(m->config());
    const std::int64_t context = state.range(0);
    for (auto _ : state) state.SetIterationTime(seconds_per_step(dec, cache, context));
    state.counters["context"] = static_cast<double>(context);
    state.counters["tokens_per_second"] =
        benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_uncached_over_cached(benchmark::State& state) {
    const auto& m = bench_model();
    nexttok::decoder<float> dec(m, bench_threads());
    nexttok::kv_cache<float> cached(m->config());
    nexttok::no_cache<float> uncached(m->config());
    const std::int64_t context = state.range(0);
    double sum_cached = 0.0, sum_uncached = 0.0;
    for (auto _ : state) {
        const double c = seconds_per_step(dec, cached, context);
        const double u = seconds_per_step(dec, uncached, context);
        sum_cached += c;
        sum_uncached += u;
        state.SetIterationTime(c + u);
    }
    state.counters["cached_ms"] = 1e3 * sum_cached / static_cast<double>(state.iterations());
    state.counters["uncached_ms"] = 1e3 * sum_uncached / static_cast<double>(state.iterations());
    state.counters["uncached_over_cached"] = sum_uncached / sum_cached;
}

}  // namespace

BENCHMARK(BM_decode_step<nexttok::kv_cache<float>>)
    ->Name("decode_step/cached")
    ->RangeMultiplier(2)
    ->Range(32, 512)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_decode_step<nexttok::no_cache<float>>)
    ->Name("decode_step/uncached")
    ->RangeMultiplier(2)
    ->Range(32, 512)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.2);
BENCHMARK(BM_uncached_over_cached)
    ->RangeMultiplier(2)
    ->Range(32, 512)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.2);

BENCHMARK_MAIN();

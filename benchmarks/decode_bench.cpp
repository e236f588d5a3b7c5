// Single-sequence decode and 128-token prefill on models with random weights of two shapes and
// every weight format, against the machine's limits measured in the same run:
// - decode reads every weight once per token: bound by memory bandwidth. Reported: tokens/s,
//   bytes of weights per token, and bw_fraction = weight bytes x tokens/s / the read bandwidth,
//   both measured in alternation (support/roofline.hpp, paired_bandwidth: streaming passes over
//   1 GiB between groups of tokens, each group against the passes around it, the median over the
//   groups); bw_GBps is the median pass, bw_fraction_of_best the mean tokens/s against the best;
// - prefill multiplies the weights by a 128-token matrix: bound by arithmetic. Reported: tokens/s,
//   GFLOP/s (2 per multiply-add of the weight products and attention) and flops_fraction of the
//   measured peak FMA rate.
// - long-context decode (1.1B, q4_0 weights, contexts 1024..2047) with the KV cache in float and
//   in q8_0 (q8_0_kv_cache): attention then reads the cache, up to 92 MB per token in float.
//   Reported: tokens/s, kv_MB read per token (mean), bw_fraction of weights + cache bytes.
// Shapes: "110M" (dim 768, 12 layers, 12 heads, ffn 2048, vocab 32000) and "1.1B" (TinyLlama:
// dim 2048, 22 layers, 32 heads, 4 KV heads, ffn 5632, vocab 32000). Filter with
// --benchmark_filter, e.g. 'decode/1.1B/q4_0'.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/q8_0_kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/model/random_model.hpp>

#include "support/roofline.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using nexttok::tensor_type;

struct shape {
    const char* name;
    nexttok::model_config config;
};

nexttok::model_config make_config(std::int64_t dim, std::int64_t n_layers, std::int64_t n_heads, std::int64_t n_kv_heads,
                                  std::int64_t hidden_dim) {
    nexttok::model_config c;
    c.vocab_size = 32000;
    c.dim = dim;
    c.n_layers = n_layers;
    c.n_heads = n_heads;
    c.n_kv_heads = n_kv_heads;
    c.hidden_dim = hidden_dim;
    c.max_seq_len = 2048;
    return c;
}

const shape shapes[] = {{"110M", make_config(768, 12, 12, 12, 2048)}, {"1.1B", make_config(2048, 22, 32, 4, 5632)}};

// One model at a time in memory (the 1.1B ones take up to 2.2 GB): built on first use.
const std::shared_ptr<const nexttok::model>& model_for(const shape& s, tensor_type type) {
    static std::string key;
    static std::shared_ptr<const nexttok::model> m;
    const std::string k = std::string(s.name) + "/" + nexttok::to_string(type);
    if (k != key) {
        m.reset();
        m = nexttok::make_random_model(s.config, 1234, type);
        key = k;
    }
    return m;
}

// Seconds of timed tokens per decode case: with paired_bandwidth's groups of 0.1 s, twenty groups
// between twenty-one streaming passes.
constexpr double decode_seconds = 2.0;

double peak(int n_threads) {
    static std::map<int, double> cache;
    auto it = cache.find(n_threads);
    if (it == cache.end()) it = cache.emplace(n_threads, nexttok::bench::peak_flops(n_threads)).first;
    return it->second;
}

// One decode step measured with pb: the streaming pass pb asks for, if one is due, and after it one
// untimed token (the pass evicted the caches and let the pool's workers sleep), both outside the
// benchmark's timing; then the token, timed, counted as reading `bytes`.
template <class Forward>
void paired_token(benchmark::State& state, nexttok::bench::paired_bandwidth& pb, double bytes, Forward&& forward) {
    if (pb.pass_due()) {
        state.PauseTiming();
        pb.measure_pass();
        forward();
        state.ResumeTiming();
    }
    const auto t0 = std::chrono::steady_clock::now();
    forward();
    pb.add_token(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), bytes);
}

void decode(benchmark::State& state, const shape& s, tensor_type type, int n_threads) {
    const auto& m = model_for(s, type);
    nexttok::decoder<float> dec(m, n_threads);
    nexttok::kv_cache<float> cache(m->config(), 256);
    std::vector<float> logits(static_cast<std::size_t>(m->config().vocab_size));
    nexttok::token_id token = 1;
    dec.forward(std::span<const nexttok::token_id>(&token, 1), 0, cache, logits);
    std::int64_t pos = 1;
    const double bytes = static_cast<double>(m->weight_bytes());
    nexttok::bench::paired_bandwidth pb(n_threads);
    for (auto _ : state) {
        token = static_cast<nexttok::token_id>((pos * 7919) % 32000);
        paired_token(state, pb, bytes, [&] { dec.forward(std::span<const nexttok::token_id>(&token, 1), pos, cache, logits); });
        pos = pos == 255 ? 1 : pos + 1;  // contexts 1..255: attention stays a small part
        benchmark::DoNotOptimize(logits.data());
    }
    pb.finish();
    const double tokens_per_second = static_cast<double>(pb.tokens()) / pb.seconds();
    state.counters["weight_MB"] = bytes / 1e6;
    state.counters["tokens_per_s"] = tokens_per_second;
    state.counters["bw_GBps"] = pb.median_bandwidth() / 1e9;
    state.counters["bw_fraction"] = pb.median_fraction();
    state.counters["bw_fraction_of_best"] = bytes * tokens_per_second / pb.best_bandwidth();
}

// Decode at contexts [first, 2 first): the cache's rows below `first` are random (as a prompt's would
// be, for timing), then each token appends a row and attends to all earlier ones.
template <class Cache>
void decode_long(benchmark::State& state, const shape& s, tensor_type type, int n_threads) {
    constexpr std::int64_t first = 1024;
    const auto& m = model_for(s, type);
    const nexttok::model_config& c = m->config();
    nexttok::decoder<float> dec(m, n_threads);
    Cache cache(c, 2 * first);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> row(static_cast<std::size_t>(c.kv_dim()));
    for (std::int64_t l = 0; l < c.n_layers; ++l)
        for (std::int64_t pos = 0; pos < first; ++pos)
            for (auto* dst : {cache.key(l, pos), cache.value(l, pos)}) {
                for (float& v : row) v = normal(rng);
                nexttok::store_kv_row(row.data(), dst, c.kv_dim());
            }
    cache.reserve(first);
    std::vector<float> logits(static_cast<std::size_t>(c.vocab_size));
    std::int64_t pos = first;
    const double row_bytes = static_cast<double>(cache.bytes()) / static_cast<double>(2 * first);  // K and V, all layers
    const double weight_bytes = static_cast<double>(m->weight_bytes());
    nexttok::bench::paired_bandwidth pb(n_threads);
    for (auto _ : state) {
        const nexttok::token_id token = static_cast<nexttok::token_id>((pos * 7919) % 32000);
        paired_token(state, pb, weight_bytes + row_bytes * static_cast<double>(pos + 1),
                     [&] { dec.forward(std::span<const nexttok::token_id>(&token, 1), pos, cache, logits); });
        pos = pos == 2 * first - 1 ? first : pos + 1;
        benchmark::DoNotOptimize(logits.data());
    }
    pb.finish();
    const double tokens = static_cast<double>(pb.tokens());
    state.counters["tokens_per_s"] = tokens / pb.seconds();
    state.counters["kv_MB"] = (pb.bytes() / tokens - weight_bytes) / 1e6;
    state.counters["bw_GBps"] = pb.median_bandwidth() / 1e9;
    state.counters["bw_fraction"] = pb.median_fraction();
}

void prefill(benchmark::State& state, const shape& s, tensor_type type, int n_threads) {
    constexpr std::int64_t n = 128;
    const auto& m = model_for(s, type);
    const nexttok::model_config& c = m->config();
    nexttok::decoder<float> dec(m, n_threads);
    nexttok::kv_cache<float> cache(c, n);
    std::vector<nexttok::token_id> prompt(n);
    for (std::int64_t i = 0; i < n; ++i) prompt[static_cast<std::size_t>(i)] = static_cast<nexttok::token_id>((i * 7919 + 1) % 32000);
    std::vector<float> logits(static_cast<std::size_t>(c.vocab_size));
    dec.forward(prompt, 0, cache, logits);  // untimed, as decode's first token: scratch sized and touched
    const auto t0 = std::chrono::steady_clock::now();
    for (auto _ : state) {
        dec.forward(prompt, 0, cache, logits);
        benchmark::DoNotOptimize(logits.data());
    }
    // Multiply-adds: every weight matrix but the embedding once per token (the classifier for the
    // last token only, as computed), plus attention's q.k and p.v over the causal triangle.
    const double per_token = static_cast<double>(c.n_layers) * (static_cast<double>(c.dim) * (c.q_dim() + 2 * c.kv_dim()) +
                                                               static_cast<double>(c.q_dim()) * c.dim + 3.0 * c.dim * c.hidden_dim);
    const double attention = static_cast<double>(c.n_layers) * c.n_heads * c.head_dim * 2.0 * (n * (n + 1) / 2.0);
    const double flops = 2.0 * (per_token * n + static_cast<double>(c.vocab_size) * c.dim + attention);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                           static_cast<double>(state.iterations());
    state.counters["tokens_per_s"] = static_cast<double>(n) / seconds;
    state.counters["GFLOPps"] = flops / seconds / 1e9;
    state.counters["peak_GFLOPps"] = peak(n_threads) / 1e9;
    state.counters["flops_fraction"] = flops / seconds / peak(n_threads);
}

}  // namespace

int main(int argc, char** argv) {
    const tensor_type all[] = {tensor_type::f32, tensor_type::f16, tensor_type::bf16,
                               tensor_type::q8_0, tensor_type::q4_0, tensor_type::q4_k};
    for (const shape& s : shapes)
        for (tensor_type type : all) {
            if (type == tensor_type::f32 && std::string(s.name) != "110M") continue;  // 4.4 GB: 110M only
            const std::string suffix = std::string(s.name) + "/" + nexttok::to_string(type);
            for (int threads : {1, 2})
                benchmark::RegisterBenchmark(("decode/" + suffix + "/threads:" + std::to_string(threads)).c_str(),
                                             [&s, type, threads](benchmark::State& st) { decode(st, s, type, threads); })
                    ->UseRealTime()->MinTime(decode_seconds);
            for (int threads : {1, 2})
                benchmark::RegisterBenchmark(("prefill128/" + suffix + "/threads:" + std::to_string(threads)).c_str(),
                                             [&s, type, threads](benchmark::State& st) { prefill(st, s, type, threads); })
                    ->UseRealTime()->MinTime(1.0)->Unit(benchmark::kMillisecond);
        }
    const shape& big = shapes[1];
    for (int threads : {1, 2}) {
        const std::string suffix = "/1.1B/q4_0/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(("decode_ctx1024/kv_f32" + suffix).c_str(), [&big, threads](benchmark::State& st) {
            decode_long<nexttok::kv_cache<float>>(st, big, tensor_type::q4_0, threads);
        })->UseRealTime()->MinTime(decode_seconds);
        benchmark::RegisterBenchmark(("decode_ctx1024/kv_q8_0" + suffix).c_str(), [&big, threads](benchmark::State& st) {
            decode_long<nexttok::q8_0_kv_cache<float>>(st, big, tensor_type::q4_0, threads);
        })->UseRealTime()->MinTime(decode_seconds);
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

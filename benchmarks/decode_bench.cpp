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
#include <nexttok/kernels/kernel_isa.hpp>

#include "support/decode_cases.hpp"
#include "support/roofline.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

namespace {

using nexttok::tensor_type;
using nexttok::bench::model_for;
using nexttok::bench::paired_token;
using nexttok::bench::shape;
using nexttok::bench::shapes;

// Seconds of timed tokens per decode case: with paired_bandwidth's groups of 0.1 s, twenty groups
// between twenty-one streaming passes.
constexpr double decode_seconds = 2.0;

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
        paired_token(state, pb, bytes,
                     [&] { dec.forward(std::span<const nexttok::token_id>(&token, 1), pos, cache, logits); });
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
    const double row_bytes =
        static_cast<double>(cache.bytes()) / static_cast<double>(2 * first);  // K and V, all layers
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
    nexttok::bench::prefill128(state, model_for(s, type), n_threads);
}

}  // namespace

int main(int argc, char** argv) {
    const tensor_type all[] = {tensor_type::f32,   tensor_type::f16,    tensor_type::bf16, tensor_type::q8_0,
                               tensor_type::q4_0,  tensor_type::q4_k,   tensor_type::q4_1, tensor_type::q5_0,
                               tensor_type::q5_1,  tensor_type::iq4_nl, tensor_type::q2_k, tensor_type::q3_k,
                               tensor_type::iq4_xs};
    for (const shape& s : shapes)
        for (tensor_type type : all) {
            if (type == tensor_type::f32 && std::string(s.name) != "110M") continue;  // 4.4 GB: 110M only
            const std::string suffix = std::string(s.name) + "/" + nexttok::to_string(type);
            for (int threads : {1, 2})
                benchmark::RegisterBenchmark(
                    ("decode/" + suffix + "/threads:" + std::to_string(threads)).c_str(),
                    [&s, type, threads](benchmark::State& st) { decode(st, s, type, threads); })
                    ->UseRealTime()
                    ->MinTime(decode_seconds);
            for (int threads : {1, 2})
                benchmark::RegisterBenchmark(
                    ("prefill128/" + suffix + "/threads:" + std::to_string(threads)).c_str(),
                    [&s, type, threads](benchmark::State& st) { prefill(st, s, type, threads); })
                    ->UseRealTime()
                    ->MinTime(1.0)
                    ->Unit(benchmark::kMillisecond);
        }
    const shape& big = shapes[1];
    for (int threads : {1, 2}) {
        const std::string suffix = "/1.1B/q4_0/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(("decode_ctx1024/kv_f32" + suffix).c_str(),
                                     [&big, threads](benchmark::State& st) {
                                         decode_long<nexttok::kv_cache<float>>(st, big, tensor_type::q4_0, threads);
                                     })
            ->UseRealTime()
            ->MinTime(decode_seconds);
        benchmark::RegisterBenchmark(("decode_ctx1024/kv_q8_0" + suffix).c_str(),
                                     [&big, threads](benchmark::State& st) {
                                         decode_long<nexttok::q8_0_kv_cache<float>>(st, big, tensor_type::q4_0,
                                                                                    threads);
                                     })
            ->UseRealTime()
            ->MinTime(decode_seconds);
    }
    // The kernel set matmul and attention run (NEXTTOK_ISA may lower it).
    benchmark::AddCustomContext("kernels", nexttok::kernel_isa_name(nexttok::active_kernel_isa()));
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

// What the decode benchmarks share: the two model shapes with random weights (one model in memory
// at a time), the peak FMA rate measured once per thread count, the paired measurement of one
// decode step against the read bandwidth, the multiply-adds a token costs, and the 128-token
// prefill case.
#pragma once

#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/model/random_model.hpp>

#include "roofline.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nexttok::bench {

struct shape {
    const char* name;
    model_config config;
};

inline model_config make_config(std::int64_t dim, std::int64_t n_layers, std::int64_t n_heads, std::int64_t n_kv_heads,
                                std::int64_t hidden_dim) {
    model_config c;
    c.vocab_size = 32000;
    c.dim = dim;
    c.n_layers = n_layers;
    c.n_heads = n_heads;
    c.n_kv_heads = n_kv_heads;
    c.hidden_dim = hidden_dim;
    c.max_seq_len = 2048;
    return c;
}

// "110M" (dim 768, 12 layers, 12 heads, ffn 2048) and "1.1B" (TinyLlama: dim 2048, 22 layers,
// 32 heads, 4 KV heads, ffn 5632); vocab 32000.
inline const shape shapes[] = {{"110M", make_config(768, 12, 12, 12, 2048)},
                               {"1.1B", make_config(2048, 22, 32, 4, 5632)}};

// One model at a time in memory (the 1.1B ones take up to 2.2 GB): built on first use.
inline const std::shared_ptr<const model>& model_for(const shape& s, tensor_type type) {
    static std::string key;
    static std::shared_ptr<const model> m;
    const std::string k = std::string(s.name) + "/" + to_string(type);
    if (k != key) {
        m.reset();
        m = make_random_model(s.config, 1234, type);
        key = k;
    }
    return m;
}

// peak_flops(n_threads), measured on first use.
inline double peak(int n_threads) {
    static std::map<int, double> cache;
    auto it = cache.find(n_threads);
    if (it == cache.end()) it = cache.emplace(n_threads, peak_flops(n_threads)).first;
    return it->second;
}

// One decode step measured with pb: the streaming pass pb asks for, if one is due, and after it one
// untimed token (the pass evicted the caches and let the pool's workers sleep), both outside the
// benchmark's timing; then the token, timed, counted as reading `bytes`.
template <class Forward>
void paired_token(benchmark::State& state, paired_bandwidth& pb, double bytes, Forward&& forward) {
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

// Multiply-adds of the weight products of one token: every matrix of every layer (the embedding is
// a lookup; the classifier is counted where its logits are computed).
inline double layer_macs_per_token(const model_config& c) {
    return static_cast<double>(c.n_layers) * (static_cast<double>(c.dim) * (c.q_dim() + 2 * c.kv_dim()) +
                                              static_cast<double>(c.q_dim()) * c.dim + 3.0 * c.dim * c.hidden_dim);
}

// Multiply-adds of attention's q.k and p.v over `n_positions` cached positions (summed over tokens).
inline double attention_macs(const model_config& c, double n_positions) {
    return static_cast<double>(c.n_layers) * c.n_heads * c.head_dim * 2.0 * n_positions;
}

// A 128-token prompt in one forward call, as a benchmark case (after one untimed call, as decode's
// first token: scratch sized and touched). Reports tokens/s, GFLOP/s (2 per multiply-add of the
// weight products, the classifier of the last token and attention over the causal triangle) and
// flops_fraction of the peak FMA rate; returns the tokens/s.
inline double prefill128(benchmark::State& state, const std::shared_ptr<const model>& m, int n_threads) {
    constexpr std::int64_t n = 128;
    const model_config& c = m->config();
    decoder<float> dec(m, n_threads);
    kv_cache<float> cache(c, n);
    std::vector<token_id> prompt(n);
    for (std::int64_t i = 0; i < n; ++i)
        prompt[static_cast<std::size_t>(i)] = static_cast<token_id>((i * 7919 + 1) % 32000);
    std::vector<float> logits(static_cast<std::size_t>(c.vocab_size));
    dec.forward(prompt, 0, cache, logits);
    const auto t0 = std::chrono::steady_clock::now();
    for (auto _ : state) {
        dec.forward(prompt, 0, cache, logits);
        benchmark::DoNotOptimize(logits.data());
    }
    const double flops = 2.0 * (layer_macs_per_token(c) * n + static_cast<double>(c.vocab_size) * c.dim +
                                attention_macs(c, n * (n + 1) / 2.0));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                           static_cast<double>(state.iterations());
    state.counters["tokens_per_s"] = static_cast<double>(n) / seconds;
    state.counters["GFLOPps"] = flops / seconds / 1e9;
    state.counters["peak_GFLOPps"] = peak(n_threads) / 1e9;
    state.counters["flops_fraction"] = flops / seconds / peak(n_threads);
    return static_cast<double>(n) / seconds;
}

}  // namespace nexttok::bench

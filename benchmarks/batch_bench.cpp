// Batched decode: B sequences with about 128 cached positions each, one token each per forward
// call (decoder::forward over a ragged batch of paged_kv_cache sequences, as the continuous-batching
// scheduler runs them), for B = 1, 2, 4, 8, 16, 32 on the 1.1B shape with random weights in f16,
// q8_0, q4_0 and q4_k, 1 and 2 threads. A step reads every weight once for all B tokens: bound by
// the read bandwidth at small B, by arithmetic at large B. Each sequence's token runs at positions
// 128..143 in turn (attending to 129..144 positions), then its cache is truncated back to 128.
//
// A case alternates, as decode_bench's decode does (support/decode_cases.hpp, paired_token), a
// streaming pass over 1 GiB with 0.1 s of timed steps (the step right after a pass untimed), and
// beside every timed step (before and after it in turn) runs one reference step, timed apart: a
// batch-1 step on another sequence of the same pool (B > 1), or the same token on a contiguous
// kv_cache (B = 1). Each group of steps is judged against what was measured beside it; a figure
// is the median over the groups.
// Reported:
// - tokens_per_s: the aggregate rate, B x steps / seconds over all timed steps;
// - batch1_tokens_per_s (B > 1) / contiguous_tokens_per_s (B = 1): the reference steps' rate;
// - vs_batch1: the aggregate rate / the batch-1 rate beside it (1 at B = 1);
// - roof_fraction: the roofline bound of a step / its measured time; the bound is
//   max(bytes / the bandwidth of the passes around the group, B x FLOPs per token / the peak FMA
//   rate), bytes = the weights + the B sequences' cached keys and values, FLOPs = 2 per multiply-add
//   of the weight products, the token's classifier row and attention. The integer kernels (q8_0,
//   q4_0, q4_k) count the FLOPs of the float product they stand for, as decode_bench's prefill does;
// - vs_bound: the aggregate rate / min(B x the batch-1 rate, the 128-token prefill rate): what
//   batching can reach, each weight pass serving B tokens, and no faster per token than a prompt's
//   tokens go (the prefill128 case of the same weights and threads, which runs first; absent when
//   the filter leaves that case out);
// - paged_vs_contiguous (B = 1): the paged cache's tokens/s / the contiguous cache's.
// Filter with --benchmark_filter, e.g. '1.1B/(f16|q4_0)/.*threads:2'.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/paged_kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>

#include "support/decode_cases.hpp"
#include "support/roofline.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using nexttok::tensor_type;
using nexttok::bench::model_for;

const nexttok::bench::shape& big = nexttok::bench::shapes[1];

constexpr std::int64_t context = 128;  // cached positions before a sequence's first token
constexpr std::int64_t cycle = 16;     // tokens at positions context.. before the truncation: one block
constexpr std::int64_t block_size = 16;
// Seconds of timed steps per batch case (groups of 0.1 s: ten groups at small B, one step per group
// at B = 32 in f16); twice that at B = 1, whose paged_vs_contiguous is a ratio of two close figures.
constexpr double batch_seconds = 1.0;

// tokens_per_s of the prefill128 cases run so far, by "type/threads".
std::map<std::string, double>& prefill_rates() {
    static std::map<std::string, double> rates;
    return rates;
}

std::string key(tensor_type type, int n_threads) { return nexttok::to_string(type) + "/" + std::to_string(n_threads); }

// Decode steps over B sequences, each a token at its next position in [context, context + cycle);
// after `cycle` steps every cache is truncated back to `context` positions (a paged sequence keeps
// its blocks up to there). The caches are not owned; logits are (B, vocab_size).
template <class Cache>
class decode_steps {
public:
    decode_steps(std::vector<Cache*> caches, std::int64_t vocab_size)
            : caches_(std::move(caches)),
              vocab_size_(vocab_size),
              tokens_(caches_.size()),
              batch_(caches_.size()),
              logits_(caches_.size() * static_cast<std::size_t>(vocab_size)) {}

    void operator()(nexttok::decoder<float>& dec) {
        for (std::size_t s = 0; s < caches_.size(); ++s) {
            tokens_[s] = static_cast<nexttok::token_id>((n_steps_ * 7919 + static_cast<std::int64_t>(s) * 104729 + 1) %
                                                        vocab_size_);
            batch_[s] = {std::span<const nexttok::token_id>(&tokens_[s], 1), context + n_steps_ % cycle, caches_[s],
                         nexttok::logits_for::last};
        }
        dec.forward(std::span<const nexttok::batch_sequence<Cache>>(batch_), logits_);
        benchmark::DoNotOptimize(logits_.data());
        if (++n_steps_ % cycle == 0)
            for (Cache* c : caches_) c->truncate(context);
    }

private:
    std::vector<Cache*> caches_;
    std::int64_t vocab_size_;
    std::int64_t n_steps_ = 0;
    std::vector<nexttok::token_id> tokens_;              // (B)
    std::vector<nexttok::batch_sequence<Cache>> batch_;  // (B)
    std::vector<float> logits_;                          // (B, vocab_size)
};

// Positions [0, context) of `cache` hold `rows` (random keys then values, (2, context, kv_dim)), as
// a prompt's would (for timing): every layer the same rows.
template <class Cache>
void fill_context(Cache& cache, const nexttok::model_config& c, const std::vector<float>& rows) {
    cache.reserve(context);
    const std::int64_t kv_dim = c.kv_dim();
    for (std::int64_t l = 0; l < c.n_layers; ++l)
        for (std::int64_t pos = 0; pos < context; ++pos) {
            nexttok::store_kv_row(rows.data() + pos * kv_dim, cache.key(l, pos), kv_dim);
            nexttok::store_kv_row(rows.data() + (context + pos) * kv_dim, cache.value(l, pos), kv_dim);
        }
}

// Reference steps run beside one group of steps.
struct timing {
    double seconds = 0.0;
    std::int64_t steps = 0;
};

// The tokens_per_s of the prefill128 case of these weights and threads, 0 if it has not run.
double prefill_rate(tensor_type type, int n_threads) {
    const auto it = prefill_rates().find(key(type, n_threads));
    return it == prefill_rates().end() ? 0.0 : it->second;
}

// The counters of a batch case from its groups of steps (pb), the reference steps beside each
// group, and a step's arithmetic at the peak rate (compute_seconds).
void report(benchmark::State& state, const nexttok::bench::paired_bandwidth& pb, const std::vector<timing>& references,
            std::int64_t n_batch, double prefill, double compute_seconds) {
    // Per group: the aggregate rate against the batch-1 rate beside it (the group's own at B = 1),
    // against the bound, and against the reference's rate.
    const double b = static_cast<double>(n_batch);
    std::vector<double> vs_batch1, vs_bound, vs_reference;
    double reference_seconds = 0.0, reference_steps = 0.0;
    for (std::size_t g = 0; g < references.size(); ++g) {
        const auto& pg = pb.groups()[g];
        if (pg.tokens == 0 || references[g].steps == 0) continue;
        const double aggregate = b * static_cast<double>(pg.tokens) / pg.seconds;
        const double reference_rate = static_cast<double>(references[g].steps) / references[g].seconds;
        const double batch1 = n_batch == 1 ? aggregate : reference_rate;
        vs_batch1.push_back(aggregate / batch1);
        vs_reference.push_back(aggregate / reference_rate);
        if (prefill > 0.0) vs_bound.push_back(aggregate / std::min(b * batch1, prefill));
        reference_seconds += references[g].seconds;
        reference_steps += static_cast<double>(references[g].steps);
    }
    state.counters["tokens_per_s"] = b * static_cast<double>(pb.tokens()) / pb.seconds();
    state.counters[n_batch == 1 ? "contiguous_tokens_per_s" : "batch1_tokens_per_s"] =
        reference_steps / reference_seconds;
    state.counters["vs_batch1"] = nexttok::bench::median(vs_batch1);
    if (prefill > 0.0) state.counters["vs_bound"] = nexttok::bench::median(vs_bound);
    state.counters["roof_fraction"] = pb.median_fraction(compute_seconds);
    state.counters["bw_GBps"] = pb.median_bandwidth() / 1e9;
    if (n_batch == 1) state.counters["paged_vs_contiguous"] = nexttok::bench::median(vs_reference);
}

void prefill(benchmark::State& state, tensor_type type, int n_threads) {
    prefill_rates()[key(type, n_threads)] = nexttok::bench::prefill128(state, model_for(big, type), n_threads);
}

using paged_pool = nexttok::paged_kv_cache<float>;
using paged_view = nexttok::paged_sequence<paged_pool>;

// The caches of a batch case: n_batch sequences of a paged pool, one more for the batch-1
// reference, and a contiguous cache, each with `context` positions of the same random rows and
// room for `cycle` more. Views point into the pool: not copyable, not movable.
struct batch_caches {
    batch_caches(const nexttok::model_config& c, std::int64_t n_batch)
            : pool(c, {.n_blocks = (n_batch + 1) * ((context + cycle + block_size - 1) / block_size),
                       .block_size = block_size,
                       .max_seq_len = context + cycle}),
              contiguous(c, context + cycle) {
        std::mt19937 rng(7);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<float> rows(static_cast<std::size_t>(2 * context * c.kv_dim()));
        for (float& v : rows) v = normal(rng);
        for (std::int64_t s = 0; s <= n_batch; ++s) {
            views.push_back(pool.sequence(pool.create()));
            fill_context(views.back(), c, rows);
        }
        fill_context(contiguous, c, rows);
    }
    batch_caches(const batch_caches&) = delete;
    batch_caches& operator=(const batch_caches&) = delete;

    // The batch's views (all but the last).
    std::vector<paged_view*> batch() {
        std::vector<paged_view*> v;
        for (std::size_t s = 0; s + 1 < views.size(); ++s) v.push_back(&views[s]);
        return v;
    }

    paged_pool pool;
    std::vector<paged_view> views;  // (n_batch + 1)
    nexttok::kv_cache<float> contiguous;
};

// Bytes read and FLOPs of one step of n_batch tokens, at the mean number of positions attended
// (context + (cycle + 1) / 2): the weights once and each sequence's keys and values; 2 per
// multiply-add of the weight products, the classifier row and attention, per token.
struct step_cost {
    double bytes, flops;
};
step_cost cost_of_step(const nexttok::model& m, std::int64_t n_batch) {
    const nexttok::model_config& c = m.config();
    const double positions = static_cast<double>(context) + (cycle + 1) / 2.0;
    const double b = static_cast<double>(n_batch);
    return {static_cast<double>(m.weight_bytes()) +
                b * positions * static_cast<double>(nexttok::kv_cache_bytes(c, 1, sizeof(float))),
            b * 2.0 *
                (nexttok::bench::layer_macs_per_token(c) + static_cast<double>(c.vocab_size) * c.dim +
                 nexttok::bench::attention_macs(c, positions))};
}

void batch_decode(benchmark::State& state, tensor_type type, int n_threads, std::int64_t n_batch) {
    const auto& m = model_for(big, type);
    nexttok::decoder<float> dec(m, n_threads);
    batch_caches caches(m->config(), n_batch);
    const std::int64_t vocab_size = m->config().vocab_size;
    decode_steps<paged_view> step(caches.batch(), vocab_size);
    decode_steps<paged_view> paged_one({&caches.views.back()}, vocab_size);
    decode_steps<nexttok::kv_cache<float>> contiguous_one({&caches.contiguous}, vocab_size);
    const std::function<void()> reference = n_batch == 1 ? std::function<void()>([&] { contiguous_one(dec); })
                                                         : std::function<void()>([&] { paged_one(dec); });
    const step_cost cost = cost_of_step(*m, n_batch);

    std::vector<timing> references;  // (groups of pb) the reference steps run beside each group
    nexttok::bench::paired_bandwidth pb(n_threads);
    // A reference step, outside the benchmark's timing, counted in the current group of pb.
    const auto reference_step = [&] {
        state.PauseTiming();
        references.resize(pb.groups().size());
        const auto t0 = std::chrono::steady_clock::now();
        reference();
        references.back().seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ++references.back().steps;
        state.ResumeTiming();
    };
    // The pair in alternating order, so that neither always follows the other (the first step
    // opens the first group).
    bool reference_first = false;
    for (auto _ : state) {
        if (reference_first) reference_step();
        nexttok::bench::paired_token(state, pb, cost.bytes, [&] { step(dec); });
        if (!reference_first) reference_step();
        reference_first = !reference_first;
    }
    pb.finish();
    report(state, pb, references, n_batch, prefill_rate(type, n_threads), cost.flops / nexttok::bench::peak(n_threads));
}

}  // namespace

int main(int argc, char** argv) {
    // Weights outermost: one model in memory at a time, built once; the prefill case of a type and
    // thread count before its batch cases, which compare against it.
    for (tensor_type type : {tensor_type::f16, tensor_type::q8_0, tensor_type::q4_0, tensor_type::q4_k}) {
        const std::string weights = std::string(big.name) + "/" + nexttok::to_string(type);
        for (int threads : {1, 2}) {
            const std::string suffix = "/threads:" + std::to_string(threads);
            benchmark::RegisterBenchmark(("prefill128/" + weights + suffix).c_str(),
                                         [type, threads](benchmark::State& st) { prefill(st, type, threads); })
                ->UseRealTime()
                ->MinTime(1.0)
                ->Unit(benchmark::kMillisecond);
            for (std::int64_t n_batch : {1, 2, 4, 8, 16, 32})
                benchmark::RegisterBenchmark(
                    ("batch_decode/" + weights + "/batch:" + std::to_string(n_batch) + suffix).c_str(),
                    [type, threads, n_batch](benchmark::State& st) { batch_decode(st, type, threads, n_batch); })
                    ->UseRealTime()
                    ->MinTime(n_batch == 1 ? 2 * batch_seconds : batch_seconds)
                    ->Unit(benchmark::kMillisecond);
        }
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

// Speculative decoding against plain greedy decoding of the same 1.1B-shape f16 target (random
// weights, TinyLlama's shape: support/decode_cases.hpp), with two drafters:
// - model: the target's own weights quantized to q4_0 (nexttok/speculative/quantized_copy.hpp), greedy drafts
//   ("self-speculation");
// - ngram: prompt lookup (ngram_drafter, n = 3..1) on a prompt of one 32-token passage three times.
// Each case runs plain generate() and speculative_generator on the same prompt for the same number
// of tokens (greedy: the outputs must be equal; same_tokens says whether they were), then measures
// the costs the prediction needs, each the median of a few calls at the context the generation ended
// near:
//   t_step  one target decode step (1 token): step_ms;
//   c       the draft's step (a q4_0 decode step, or one n-gram lookup) / t_step;
//   v       one target call of round(k) + 1 tokens with logits for all rows / t_step.
// k is fixed (adaptive = false, draft_max = k in the case's name), and the k of the prediction is the
// mean number of tokens drafted per round, counted by a wrapper around the drafter (the statistics
// count only the drafts the target examined, up to the first rejection): draft_max for the model
// drafter; less for the n-gram drafter, which proposes nothing without a match and at most the
// tokens between the match and the sequence's end. With a = accepted / examined (the statistics'
// acceptance_rate(), an estimate of the per-token acceptance),
//   E = (1 - a^(k+1)) / (1 - a), predicted = E / (v + k c),
// speedup = speculative tokens/s / plain tokens/s, vs_predicted = speedup / predicted;
// tok_per_round is the measured counterpart of E.
// Tokens/s exclude the prompt: plain = (n - 1) decode steps / their seconds (generate()'s timings);
// speculative = n tokens / the seconds of the rounds (after start(), which runs the prompt).
// verify_cost/*: v2, v3, v5, v9 = one call of 2, 3, 5, 9 tokens / one decode step, for the target
// and the draft (the prediction's premise is v near 1 for small n: the weights are read once).
// Threads: NEXTTOK_THREADS (default 2). About 90 s in all (the models take 2.8 GB).
//   nexttok_speculative_bench --benchmark_counters_tabular=true
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/sampling/greedy.hpp>
#include <nexttok/sampling/sampler_chain.hpp>
#include <nexttok/speculative/model_drafter.hpp>
#include <nexttok/speculative/ngram_drafter.hpp>
#include <nexttok/speculative/quantized_copy.hpp>
#include <nexttok/speculative/speculative_generator.hpp>
#include <nexttok/stopping/max_new_tokens.hpp>

#include "support/decode_cases.hpp"
#include "support/roofline.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using nexttok::token_id;
using clock_type = std::chrono::steady_clock;

int bench_threads() {
    const char* env = std::getenv("NEXTTOK_THREADS");
    return env != nullptr ? std::atoi(env) : 2;
}

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// The f16 target and its q4_0 copy, built on first use and kept for the whole run (2.2 + 0.6 GB).
struct models {
    std::shared_ptr<const nexttok::model> target, draft;
};
const models& bench_models() {
    static const models m = [] {
        auto target = nexttok::make_random_model(nexttok::bench::shapes[1].config, 1234, nexttok::tensor_type::f16);
        auto draft = nexttok::quantized_copy(*target, nexttok::tensor_type::q4_0);
        return models{std::move(target), std::move(draft)};
    }();
    return m;
}

// 8 distinct tokens.
std::vector<token_id> short_prompt() {
    std::vector<token_id> p;
    for (int i = 0; i < 8; ++i) p.push_back(static_cast<token_id>((i * 7919 + 1) % 32000));
    return p;
}
// `n_repeats` copies of a passage of 32 distinct tokens.
std::vector<token_id> repeated_prompt(int n_repeats) {
    std::vector<token_id> p;
    for (int r = 0; r < n_repeats; ++r)
        for (int i = 0; i < 32; ++i) p.push_back(static_cast<token_id>((i * 104729 + 17) % 32000));
    return p;
}

// The median seconds of `reps` calls of f (after one untimed call).
template <class F>
double median_seconds(int reps, F&& f) {
    f();
    std::vector<double> s;
    for (int i = 0; i < reps; ++i) {
        const auto t0 = clock_type::now();
        f();
        s.push_back(seconds_since(t0));
    }
    return nexttok::bench::median(std::move(s));
}

// Seconds of one forward call of `n` tokens at positions pos.. of `cache` (its later positions
// dropped first), logits for every row: what a verification round costs (n = 1: a decode step).
double forward_seconds(nexttok::decoder<float>& dec, nexttok::kv_cache<float>& cache, std::int64_t pos, std::int64_t n,
                       int reps) {
    std::vector<token_id> tokens(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
        tokens[static_cast<std::size_t>(i)] = static_cast<token_id>((pos + i) * 31 % 32000);
    std::vector<float> logits(static_cast<std::size_t>(n * dec.config().vocab_size));
    dec.reserve(n, cache.capacity());
    return median_seconds(reps, [&] {
        cache.truncate(pos);
        dec.forward(std::span<const token_id>(tokens), pos, cache, logits,
                    n > 1 ? nexttok::logits_for::all : nexttok::logits_for::last);
        benchmark::DoNotOptimize(logits.data());
    });
}

// A drafter that counts the tokens it proposes: the statistics count only the drafts the target
// examined (up to the first rejection), the costs are those of every token drafted.
template <class Drafter>
class counting_drafter {
public:
    explicit counting_drafter(Drafter& d) : d_(&d) {}
    void check_vocabulary(std::int64_t n, std::string_view name) const { d_->check_vocabulary(n, name); }
    void begin(std::span<const token_id> prompt) { d_->begin(prompt); }
    template <class Pick>
    void propose(std::span<const token_id> sequence, std::int64_t k, Pick& pick, std::vector<token_id>& out) {
        const std::size_t before = out.size();
        d_->propose(sequence, k, pick, out);
        n_proposed_ += static_cast<std::int64_t>(out.size() - before);
    }
    void rollback(std::int64_t n) { d_->rollback(n); }
    std::int64_t n_proposed() const noexcept { return n_proposed_; }

private:
    Drafter* d_;  // non-owning
    std::int64_t n_proposed_ = 0;
};

struct run_figures {
    std::vector<token_id> tokens;
    double tokens_per_s = 0.0;
    nexttok::speculative_stats stats;
    std::int64_t n_proposed = 0;  // tokens drafted, examined or not
};

run_figures plain_run(nexttok::decoder<float>& dec, nexttok::kv_cache<float>& cache,
                      const std::vector<token_id>& prompt, std::int64_t n_new) {
    auto sampler = nexttok::make_sampler_chain(nexttok::greedy{});
    nexttok::max_new_tokens stop(n_new);
    const auto r = nexttok::generate(dec, cache, std::span<const token_id>(prompt), sampler, stop);
    return {r.tokens, r.timings.decode_tokens_per_second(), {}};
}

template <class Drafter>
run_figures speculative_run(nexttok::decoder<float>& dec, nexttok::kv_cache<float>& cache, Drafter& inner,
                            const std::vector<token_id>& prompt, std::int64_t n_new, std::int64_t k) {
    counting_drafter<Drafter> draft(inner);
    auto sampler = nexttok::make_sampler_chain(nexttok::greedy{});
    nexttok::max_new_tokens stop(n_new);
    const nexttok::token_callback no_callback;
    const nexttok::speculative_options options{.draft_max = k, .draft_min = 1, .adaptive = false, .greedy_draft = true};
    nexttok::speculative_generator g(dec, cache, draft, nullptr, std::span<const token_id>(prompt), sampler, stop,
                                     no_callback, options, n_new);
    double seconds = 0.0;
    if (g.start()) {
        const auto t0 = clock_type::now();
        while (g.step()) {
        }
        seconds = seconds_since(t0);
    }
    const nexttok::speculative_result r = g.finish();
    return {r.tokens, static_cast<double>(r.tokens.size()) / seconds, r.speculation, draft.n_proposed()};
}

// Tokens drafted per round (the k of the prediction), and that rounded (the k + 1 tokens of the
// verification call whose cost is v).
double mean_drafted(const run_figures& spec) {
    return spec.stats.n_rounds > 0 ? static_cast<double>(spec.n_proposed) / static_cast<double>(spec.stats.n_rounds)
                                   : 0.0;
}
std::int64_t rounded_drafted(const run_figures& spec) { return std::lround(mean_drafted(spec)); }

// Writes every figure of the file's header as counters. draft_step_seconds: one step of the drafter;
// verify_seconds: one target call of rounded_drafted(spec) + 1 tokens.
void report(benchmark::State& state, const run_figures& plain, const run_figures& spec, double step_seconds,
            double draft_step_seconds, double verify_seconds) {
    const double a = spec.stats.acceptance_rate();
    const double k = mean_drafted(spec);
    const double c = draft_step_seconds / step_seconds;
    const double v = verify_seconds / step_seconds;
    const double e = a < 1.0 ? (1.0 - std::pow(a, k + 1.0)) / (1.0 - a) : k + 1.0;
    const double predicted = e / (v + k * c);
    const double speedup = spec.tokens_per_s / plain.tokens_per_s;
    state.counters["plain_tok_s"] = plain.tokens_per_s;
    state.counters["spec_tok_s"] = spec.tokens_per_s;
    state.counters["a"] = a;
    state.counters["k"] = k;
    state.counters["c"] = c;
    state.counters["v"] = v;
    state.counters["E"] = e;
    state.counters["tok_per_round"] =
        static_cast<double>(spec.tokens.size()) / static_cast<double>(spec.stats.n_rounds);
    state.counters["predicted"] = predicted;
    state.counters["speedup"] = speedup;
    state.counters["vs_predicted"] = speedup / predicted;
    state.counters["same_tokens"] = plain.tokens == spec.tokens ? 1.0 : 0.0;
    state.counters["step_ms"] = step_seconds * 1e3;
}

constexpr int cost_reps = 5;

// The costs are measured at the context where the generation ended (prompt + n_new).
void model_draft(benchmark::State& state, std::int64_t k, std::int64_t n_new) {
    const models& m = bench_models();
    const int n_threads = bench_threads();
    nexttok::decoder<float> dec(m.target, n_threads), draft_dec(m.draft, n_threads);
    nexttok::kv_cache<float> cache(m.target->config(), 512), draft_cache(m.draft->config(), 512);
    const auto prompt = short_prompt();
    for (auto _ : state) {
        const run_figures plain = plain_run(dec, cache, prompt, n_new);
        nexttok::model_drafter draft(draft_dec, draft_cache);
        const run_figures spec = speculative_run(dec, cache, draft, prompt, n_new, k);
        const auto pos = static_cast<std::int64_t>(prompt.size()) + n_new - 1;
        const double step = forward_seconds(dec, cache, pos, 1, cost_reps);
        const double draft_step = forward_seconds(draft_dec, draft_cache, pos, 1, cost_reps);
        const double verify = forward_seconds(dec, cache, pos, rounded_drafted(spec) + 1, cost_reps);
        report(state, plain, spec, step, draft_step, verify);
    }
}

void ngram_draft(benchmark::State& state, std::int64_t k, std::int64_t n_new) {
    const models& m = bench_models();
    const int n_threads = bench_threads();
    nexttok::decoder<float> dec(m.target, n_threads);
    nexttok::kv_cache<float> cache(m.target->config(), 512);
    const auto prompt = repeated_prompt(3);
    for (auto _ : state) {
        const run_figures plain = plain_run(dec, cache, prompt, n_new);
        nexttok::ngram_drafter draft(3);
        const run_figures spec = speculative_run(dec, cache, draft, prompt, n_new, k);
        const auto pos = static_cast<std::int64_t>(prompt.size()) + n_new - 1;
        const double step = forward_seconds(dec, cache, pos, 1, cost_reps);
        // One lookup over the final sequence (the longest a round searched), 1000 times per sample.
        std::vector<token_id> sequence = prompt;
        sequence.insert(sequence.end(), plain.tokens.begin(), plain.tokens.end());
        const double lookup = median_seconds(cost_reps,
                                             [&] {
                                                 for (int i = 0; i < 1000; ++i)
                                                     benchmark::DoNotOptimize(draft.find(sequence));
                                             }) /
                              1000.0;
        const double verify = forward_seconds(dec, cache, pos, rounded_drafted(spec) + 1, cost_reps);
        report(state, plain, spec, step, lookup, verify);
    }
}

// v(n) = one call of n tokens (logits for all rows) / one decode step, for n = 2..9, of the f16
// target and of its q4_0 copy: the premise of the prediction is that v stays near 1 for small n
// (the weights are read once per call whatever n).
void verify_cost(benchmark::State& state, bool draft) {
    const models& m = bench_models();
    const auto& model = draft ? m.draft : m.target;
    nexttok::decoder<float> dec(model, bench_threads());
    nexttok::kv_cache<float> cache(model->config(), 512);
    constexpr std::int64_t pos = 128;
    std::vector<token_id> fill(pos, 1);
    std::vector<float> logits(static_cast<std::size_t>(model->config().vocab_size));
    dec.forward(std::span<const token_id>(fill), 0, cache, logits);
    for (auto _ : state) {
        const double step = forward_seconds(dec, cache, pos, 1, cost_reps);
        state.counters["step_ms"] = step * 1e3;
        for (const auto& [n, name] : {std::pair<std::int64_t, const char*>{2, "v2"}, {3, "v3"}, {5, "v5"}, {9, "v9"}})
            state.counters[name] = forward_seconds(dec, cache, pos, n, cost_reps) / step;
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string threads = "/threads:" + std::to_string(bench_threads());
    for (bool draft : {false, true})
        benchmark::RegisterBenchmark(("verify_cost/1.1B/" + std::string(draft ? "q4_0" : "f16") + threads).c_str(),
                                     [draft](benchmark::State& st) { verify_cost(st, draft); })
            ->Iterations(1)
            ->UseRealTime()
            ->Unit(benchmark::kSecond);
    for (std::int64_t k : {1, 2, 4})
        benchmark::RegisterBenchmark(("speculative/1.1B/f16/draft:q4_0/k:" + std::to_string(k) + threads).c_str(),
                                     [k](benchmark::State& st) { model_draft(st, k, 64); })
            ->Iterations(1)
            ->UseRealTime()
            ->Unit(benchmark::kSecond);
    for (std::int64_t k : {4, 8})
        benchmark::RegisterBenchmark(("speculative/1.1B/f16/ngram:3/k:" + std::to_string(k) + threads).c_str(),
                                     [k](benchmark::State& st) { ngram_draft(st, k, 96); })
            ->Iterations(1)
            ->UseRealTime()
            ->Unit(benchmark::kSecond);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

// The machine's limits, measured in the same run as the benchmarks they judge:
// - read bandwidth: threads read a buffer far larger than the caches (1 GiB) and sum it, two rows
//   at a time as the decode tiles read weights (limit_loops.hpp);
// - peak float FMA rate: threads run independent FMA chains that never touch memory.
// Both take the best of a few repetitions (the machine is shared; the best is the capability).
#pragma once

#include <nexttok/detail/huge_pages.hpp>
#include <nexttok/kernels/detail/simd.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

// The loops, compiled for each kernel set the program carries (see limit_loops.hpp).
#define NEXTTOK_EACH_ISA_BODY <support/limit_loops.hpp>
#include <nexttok/detail/each_isa.hpp>

namespace nexttok::bench {

// In the kernel set in use, as the kernels' matmul is (kernels/detail/passes.hpp).
inline float sum_floats(const float* p, std::size_t begin, std::size_t end) noexcept {
    NEXTTOK_ISA_CALL(::nexttok::bench, sum_floats(p, begin, end))
}
inline float fma_rounds(std::int64_t iterations, double* flops) noexcept {
    NEXTTOK_ISA_CALL(::nexttok::bench, fma_rounds(iterations, flops))
}

// Runs f(t) on n_threads threads (t = 0 on the caller) and returns the wall time in seconds.
template <class F>
double timed_on_threads(int n_threads, F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 1; t < n_threads; ++t) workers.emplace_back([&f, t] { f(t); });
    f(0);
    for (std::thread& w : workers) w.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Bytes per second that n_threads threads read from memory: the best of `passes` passes.
inline double read_bandwidth(int n_threads, int passes = 3) {
    constexpr std::size_t n_floats = std::size_t{1} << 28;  // 1 GiB
    // In huge pages where possible, as the weights are (detail/huge_pages.hpp): the limit is
    // measured under the same conditions as the decode it judges.
    static const std::shared_ptr<std::byte[]> storage = [] {
        std::shared_ptr<std::byte[]> b = detail::allocate_buffer(n_floats * sizeof(float));
        float* f = reinterpret_cast<float*>(b.get());
        for (std::size_t i = 0; i < n_floats; ++i) f[i] = 1.0f;  // touch every page
        return b;
    }();
    const float* buffer = reinterpret_cast<const float*>(storage.get());
    std::vector<float> sink(static_cast<std::size_t>(n_threads));
    double best = 1e30;
    for (int rep = 0; rep < passes; ++rep) {
        best = std::min(best, timed_on_threads(n_threads, [&](int t) {
                            const std::size_t begin = n_floats / n_threads * t, end = n_floats / n_threads * (t + 1);
                            sink[static_cast<std::size_t>(t)] = sum_floats(buffer, begin, end);
                        }));
    }
    if (sink[0] == 42.0f) std::abort();  // keeps the sums alive
    return static_cast<double>(n_floats * sizeof(float)) / best;
}

// The median of v (0 when empty).
inline double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t k = v.size() / 2;
    return v.size() % 2 ? v[k] : 0.5 * (v[k - 1] + v[k]);
}

// Decode speed against the read bandwidth, measured in alternation so that both see the same
// machine: one streaming pass (read_bandwidth with one pass over 1 GiB), then tokens for about
// group_seconds, then another pass, and so on, ending with a pass (finish()). Each group of tokens
// is judged against the mean of the passes just before and just after it; the figure is the
// median of those paired fractions. On a shared machine another tenant's traffic comes and goes
// within seconds: a limit measured once (the best of several passes) and an average over a second
// of tokens judge the decode against a machine state it did not run in, and vary from run to run
// by more than the kernels' differences.
class paired_bandwidth {
public:
    explicit paired_bandwidth(int n_threads, double group_seconds = 0.1)
            : n_threads_(n_threads), group_seconds_(group_seconds) {}

    // Whether a pass is due before the next token (the first, or the current group is complete).
    bool pass_due() const noexcept { return groups_.empty() || groups_.back().seconds >= group_seconds_; }
    // The pass starts 20 ms after the last token: a thread pool's workers spin for a few
    // milliseconds after a call before they sleep, and would take cycles from the stream.
    void measure_pass() {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        groups_.push_back({read_bandwidth(n_threads_, 1), 0.0, 0.0, 0});
    }
    // The last pass, after the last group (an empty group).
    void finish() { measure_pass(); }
    // A timed token that read `bytes`.
    void add_token(double seconds, double bytes) noexcept {
        group& g = groups_.back();
        g.seconds += seconds;
        g.bytes += bytes;
        ++g.tokens;
    }

    std::int64_t tokens() const noexcept {
        std::int64_t n = 0;
        for (const group& g : groups_) n += g.tokens;
        return n;
    }
    double seconds() const noexcept {
        return sum([](const group& g) { return g.seconds; });
    }
    double bytes() const noexcept {
        return sum([](const group& g) { return g.bytes; });
    }
    double median_bandwidth() const {
        std::vector<double> v;
        for (const group& g : groups_) v.push_back(g.bandwidth);
        return median(std::move(v));
    }
    double best_bandwidth() const {
        double best = 0.0;
        for (const group& g : groups_) best = std::max(best, g.bandwidth);
        return best;
    }
    // The median over groups of (the group's bytes / its seconds) / the mean bandwidth of the
    // passes around it. With compute_seconds > 0 (a token's arithmetic at the peak rate), of the
    // roofline bound instead: max(bytes / that bandwidth, tokens x compute_seconds) / seconds.
    double median_fraction(double compute_seconds = 0.0) const {
        std::vector<double> v;
        for (std::size_t i = 0; i + 1 < groups_.size(); ++i) {
            const group& g = groups_[i];
            if (g.tokens == 0) continue;
            const double bw = 0.5 * (g.bandwidth + groups_[i + 1].bandwidth);
            if (compute_seconds > 0.0)
                v.push_back(std::max(g.bytes / bw, static_cast<double>(g.tokens) * compute_seconds) / g.seconds);
            else
                v.push_back(g.bytes / g.seconds / bw);
        }
        return median(std::move(v));
    }

    // The groups in order, for figures measured alongside their tokens (the last one, after
    // finish(), is empty). bandwidth: the pass just before the group.
    struct group {
        double bandwidth, seconds, bytes;
        std::int64_t tokens;
    };
    const std::vector<group>& groups() const noexcept { return groups_; }

private:
    template <class F>
    double sum(F f) const noexcept {
        double s = 0.0;
        for (const group& g : groups_) s += f(g);
        return s;
    }
    int n_threads_;
    double group_seconds_;
    std::vector<group> groups_;
};

// Float operations per second (an FMA counts 2) that n_threads threads can do at most.
inline double peak_flops(int n_threads) {
    constexpr std::int64_t iterations = 20'000'000;
    std::vector<float> sink(static_cast<std::size_t>(n_threads));
    double flops = 0.0, best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
        best = std::min(best, timed_on_threads(n_threads, [&](int t) {
                            double f = 0.0;
                            sink[static_cast<std::size_t>(t)] = fma_rounds(iterations, &f);
                            if (t == 0) flops = f;
                        }));
    }
    if (sink[0] == 42.0f) std::abort();
    return flops * n_threads / best;
}

}  // namespace nexttok::bench

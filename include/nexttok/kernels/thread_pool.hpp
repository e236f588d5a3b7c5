// A persistent pool of worker threads with a static split of work and stealing at the end.
// parallel_for(n, f) runs f(i, t) exactly once for every i < n, t being the index of the thread
// running it (for per-thread scratch). Thread t of T starts on the contiguous range
// [t*n/T, (t+1)*n/T), from the front, the calling thread being thread 0; a thread whose range is
// done takes the remaining tasks of the others from their back, one at a time. So each thread
// still walks its own contiguous range (one stream of weights in decode), and a thread slowed by
// the machine (another tenant, an interrupt) no longer holds the others up at every call. Which
// thread runs a task never changes what the task computes, so results are bitwise the same for
// every thread count and every interleaving.
//
// No allocation and no thread creation per call: threads are created once, in the constructor.
// parallel_for must not be called concurrently on the same pool (one decoder, one caller).
#pragma once

#include <nexttok/detail/config.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace nexttok {

class thread_pool {
public:
    // n_threads >= 1 counts the calling thread; n_threads - 1 workers are started.
    NEXTTOK_DECL explicit thread_pool(int n_threads = 1);

    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;

    NEXTTOK_DECL ~thread_pool();

    int size() const noexcept { return n_threads_; }

    // Runs f(i, thread) for i in [0, n). F must not throw (kernels do not); f is called concurrently.
    template <class F>
    void parallel_for(std::int64_t n, F&& f) {
        if (n <= 0) return;
        if (n_threads_ == 1 || n == 1) {
            for (std::int64_t i = 0; i < n; ++i) f(i, 0);
            return;
        }
        using Fn = std::remove_reference_t<F>;
        struct offset_call {
            Fn* f;
            std::int64_t offset;
        };
        // Tasks are counted in 32 bits in a range (below): more than that runs in several rounds.
        for (std::int64_t first = 0; first < n; first += max_round) {
            offset_call call{&f, first};
            task_ = [](void* ctx, std::int64_t i, int t) {
                const auto* c = static_cast<const offset_call*>(ctx);
                (*c->f)(c->offset + i, t);
            };
            ctx_ = static_cast<void*>(&call);
            run_round(std::min(max_round, n - first));
        }
    }

private:
    // Waiting iterations before blocking: between the many small parallel_for calls of one token
    // a worker stays awake (a condition-variable wake-up costs tens of microseconds). It first
    // spins, then yields its core (so that a busy machine loses little), then sleeps.
    static constexpr int spin_limit = 4000;

    static void pause(int spin) noexcept {
        if (spin < 1000) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            std::this_thread::yield();
        }
    }

    static constexpr std::int64_t max_round = std::numeric_limits<std::int32_t>::max();

    // Tasks [begin, end) not yet taken of one thread's share: begin in the low 32 bits, end in the
    // high 32. The owner takes from the front, the others from the back, by compare-and-swap, so
    // that every task is taken once. One cache line each (the owner's takes do not disturb others).
    struct alignas(64) range {
        std::atomic<std::uint64_t> bounds{0};
    };
    static std::uint64_t pack(std::int64_t begin, std::int64_t end) noexcept {
        return static_cast<std::uint64_t>(begin) | static_cast<std::uint64_t>(end) << 32;
    }

    // The task taken from the front (owner) or the back of r, or -1 when none is left.
    static std::int64_t take(range& r, bool front) noexcept {
        std::uint64_t b = r.bounds.load(std::memory_order_relaxed);
        for (;;) {
            const auto begin = static_cast<std::int64_t>(b & 0xffffffffu), end = static_cast<std::int64_t>(b >> 32);
            if (begin >= end) return -1;
            const std::uint64_t next = front ? pack(begin + 1, end) : pack(begin, end - 1);
            if (r.bounds.compare_exchange_weak(b, next, std::memory_order_relaxed)) return front ? begin : end - 1;
        }
    }

    // One parallel_for of n < 2^31 tasks: the shares are set, then published by the generation
    // bump (which the workers read before touching them).
    NEXTTOK_DECL void run_round(std::int64_t n);

    // Thread t's own share from the front, then what is left of the others' from their backs.
    NEXTTOK_DECL void run_share(int t);

    // Worker thread t: waits for each parallel_for, runs its share, reports it done.
    NEXTTOK_DECL void work(int t);

    int n_threads_ = 1;
    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    std::atomic<std::uint64_t> generation_{0};  // bumped once per parallel_for
    std::atomic<int> sleepers_{0};              // workers blocked on wake_
    std::atomic<bool> stop_{false};             // set before the last bump
    std::unique_ptr<range[]> ranges_;           // (n_threads): each thread's share of the current call
    void (*task_)(void*, std::int64_t, int) = nullptr;
    void* ctx_ = nullptr;
    std::atomic<int> pending_{0};
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/kernels/impl/thread_pool.ipp>
#endif

// A persistent pool of worker threads with a static split of work. parallel_for(n, f) runs
// f(i, t) for every i < n, t being the index of the thread running it (for per-thread scratch);
// thread t of T takes the contiguous range [t*n/T, (t+1)*n/T), the calling thread
// being thread 0. Which thread runs a task never changes what the task computes, so results are
// bitwise the same for every thread count.
//
// No allocation and no thread creation per call: threads are created once, in the constructor.
// parallel_for must not be called concurrently on the same pool (one decoder, one caller).
#pragma once

#include <nexttok/error.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace nexttok {

class thread_pool {
public:
    // n_threads >= 1 counts the calling thread; n_threads - 1 workers are started.
    explicit thread_pool(int n_threads = 1) {
        if (n_threads < 1 || n_threads > 1024)
            throw invalid_argument_error("thread_pool: n_threads = " + std::to_string(n_threads) + " (expected 1..1024)");
        n_threads_ = n_threads;
        workers_.reserve(static_cast<std::size_t>(n_threads - 1));
        for (int t = 1; t < n_threads; ++t) workers_.emplace_back([this, t] { work(t); });
    }

    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;

    ~thread_pool() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
            generation_.fetch_add(1);
        }
        wake_.notify_all();
        for (std::thread& w : workers_) w.join();
    }

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
        task_ = [](void* ctx, std::int64_t i, int t) { (*static_cast<Fn*>(ctx))(i, t); };
        ctx_ = static_cast<void*>(&f);
        n_tasks_ = n;
        pending_.store(n_threads_ - 1);
        generation_.fetch_add(1);  // publishes the task (seq_cst, paired with sleepers_ in work())
        if (sleepers_.load() > 0) {
            std::lock_guard lock(mutex_);
            wake_.notify_all();
        }
        run_share(0);
        // Spin while the workers finish (microseconds for decode-sized work), then block.
        for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
            if (spin < spin_limit) {
                pause(spin);
                continue;
            }
            std::unique_lock lock(mutex_);
            done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
            break;
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

    void run_share(int t) {
        const std::int64_t begin = n_tasks_ * t / n_threads_;
        const std::int64_t end = n_tasks_ * (t + 1) / n_threads_;
        for (std::int64_t i = begin; i < end; ++i) task_(ctx_, i, t);
    }

    void work(int t) {
        std::uint64_t seen = 0;
        for (;;) {
            std::uint64_t g = generation_.load();
            for (int spin = 0; g == seen; g = generation_.load()) {
                if (++spin < spin_limit) {
                    pause(spin);
                    continue;
                }
                std::unique_lock lock(mutex_);
                sleepers_.fetch_add(1);
                wake_.wait(lock, [&] { return generation_.load() != seen; });
                sleepers_.fetch_sub(1);
            }
            seen = g;
            if (stop_) return;
            run_share(t);
            if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                std::lock_guard lock(mutex_);
                done_.notify_one();
            }
        }
    }

    int n_threads_ = 1;
    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    std::atomic<std::uint64_t> generation_{0};  // bumped once per parallel_for
    std::atomic<int> sleepers_{0};              // workers blocked on wake_
    std::atomic<bool> stop_{false};             // set before the last bump
    void (*task_)(void*, std::int64_t, int) = nullptr;
    void* ctx_ = nullptr;
    std::int64_t n_tasks_ = 0;
    std::atomic<int> pending_{0};
};

}  // namespace nexttok

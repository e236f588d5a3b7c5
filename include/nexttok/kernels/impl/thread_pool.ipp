// The definitions of thread_pool.hpp: starting and stopping the workers, and the rounds of
// parallel_for.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/kernels/thread_pool.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace nexttok {

NEXTTOK_DECL thread_pool::thread_pool(int n_threads) {
    if (n_threads < 1 || n_threads > 1024)
        throw invalid_argument_error("thread_pool: n_threads = " + std::to_string(n_threads) + " (expected 1..1024)");
    n_threads_ = n_threads;
    ranges_ = std::make_unique<range[]>(static_cast<std::size_t>(n_threads));
    workers_.reserve(static_cast<std::size_t>(n_threads - 1));
    for (int t = 1; t < n_threads; ++t) workers_.emplace_back([this, t] { work(t); });
}

NEXTTOK_DECL thread_pool::~thread_pool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
        generation_.fetch_add(1);
    }
    wake_.notify_all();
    for (std::thread& w : workers_) w.join();
}

NEXTTOK_DECL void thread_pool::run_round(std::int64_t n) {
    for (int t = 0; t < n_threads_; ++t)
        ranges_[static_cast<std::size_t>(t)].bounds.store(pack(n * t / n_threads_, n * (t + 1) / n_threads_),
                                                          std::memory_order_relaxed);
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

NEXTTOK_DECL void thread_pool::run_share(int t) {
    range& own = ranges_[static_cast<std::size_t>(t)];
    for (std::int64_t i; (i = take(own, true)) >= 0;) task_(ctx_, i, t);
    for (int k = 1; k < n_threads_; ++k) {
        range& other = ranges_[static_cast<std::size_t>((t + k) % n_threads_)];
        for (std::int64_t i; (i = take(other, false)) >= 0;) task_(ctx_, i, t);
    }
}

NEXTTOK_DECL void thread_pool::work(int t) {
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

}  // namespace nexttok

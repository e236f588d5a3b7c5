#include <nexttok/error.hpp>
#include <nexttok/kernels/thread_pool.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace nexttok {
namespace {

// Every task runs exactly once, on a thread index of the pool, for task counts around the split
// points and thread counts above and below them.
TEST(thread_pool, runs_every_task_once) {
    for (int n_threads : {1, 2, 3, 4}) {
        thread_pool pool(n_threads);
        for (std::int64_t n : {0, 1, 2, 3, 5, 16, 17, 100, 1000}) {
            std::vector<std::atomic<int>> runs(static_cast<std::size_t>(n));
            std::atomic<int> bad_thread{0};
            for (int call = 0; call < 20; ++call)
                pool.parallel_for(n, [&](std::int64_t i, int t) {
                    runs[static_cast<std::size_t>(i)].fetch_add(1);
                    if (t < 0 || t >= n_threads) bad_thread.fetch_add(1);
                });
            for (std::int64_t i = 0; i < n; ++i)
                EXPECT_EQ(runs[static_cast<std::size_t>(i)].load(), 20)
                    << "task " << i << " of " << n << ", " << n_threads << " threads";
            EXPECT_EQ(bad_thread.load(), 0);
        }
    }
}

// Thread t starts on its own contiguous share from the front: with tasks that take long enough
// for every thread to start, task t * n / T is run by thread t.
TEST(thread_pool, each_thread_starts_on_its_share) {
    thread_pool pool(2);
    std::vector<int> ran_on(8, -1);
    pool.parallel_for(8, [&](std::int64_t i, int t) {
        ran_on[static_cast<std::size_t>(i)] = t;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    });
    EXPECT_EQ(ran_on[0], 0);
    EXPECT_EQ(ran_on[4], 1);
}

// A thread held up does not hold up the others: while the worker sleeps in the first task of its
// share, the calling thread takes the rest of that share from its back (if the worker is late to
// start, the calling thread takes the whole share; tasks 5-7 are its own either way).
TEST(thread_pool, idle_thread_takes_the_rest_of_a_held_up_share) {
    thread_pool pool(2);
    std::vector<int> ran_on(8, -1);
    pool.parallel_for(8, [&](std::int64_t i, int t) {
        ran_on[static_cast<std::size_t>(i)] = t;
        if (i == 4 && t == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    });
    for (int i : {0, 1, 2, 3, 5, 6, 7}) EXPECT_EQ(ran_on[static_cast<std::size_t>(i)], 0) << "task " << i;
}

TEST(thread_pool, rejects_invalid_thread_counts) {
    EXPECT_THROW(thread_pool(0), invalid_argument_error);
    EXPECT_THROW(thread_pool(-3), invalid_argument_error);
}

}  // namespace
}  // namespace nexttok

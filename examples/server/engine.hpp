// The serving engine: one continuous-batching scheduler over a paged KV pool (prefix caching on),
// driven by one engine thread that calls step() while there is work and sleeps on a condition
// variable when idle. An HTTP request becomes a job: one scheduler request per choice (choice i
// with seed + i), whose token events the engine thread pushes into the job's queue, where the HTTP
// thread that owns the request pops them (to stream them or to wait for the end).
//
// Admission: at most `limit` choices in flight (running + waiting, --parallel + --queue); beyond it
// submit() returns null and the caller answers 503. The scheduler itself runs at most --parallel
// at once (scheduler_options::max_running). cancel() ends a job's requests at the next step; the
// scheduler frees their blocks.
//
// Thread-safety: every public member function may be called from any thread; the scheduler's
// step() runs only on the engine thread, which also runs the token callbacks and reads the pool.
#pragma once

#include "metrics.hpp"

#include <nexttok/nexttok.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace server {

// One event of one choice: new text (and the token it came with), or the choice's end.
struct choice_event {
    std::int64_t choice = 0;
    bool finished = false;
    std::string text;                          // newly released text (may be empty)
    nexttok::token_id id = nexttok::no_token;  // no_token: text released at the end, no new token
    float logprob = 0.0f;
    std::vector<nexttok::token_logprob> top;                       // alternatives, when asked
    nexttok::finish_reason reason = nexttok::finish_reason::none;  // when finished
    std::int64_t n_tokens = 0;                                     // when finished: tokens generated
    std::string error;                                             // when finished with reason error: the message
};

// The event queue of one HTTP request. push() from the engine thread, pop() from the request's thread.
class job {
public:
    job(std::int64_t n_choices, std::int64_t n_prompt) : n_choices_(n_choices), n_prompt_(n_prompt) {}

    std::int64_t n_choices() const noexcept { return n_choices_; }
    std::int64_t n_prompt() const noexcept { return n_prompt_; }

    void push(choice_event e) {
        std::lock_guard lock(mutex_);
        if (e.finished) ++n_finished_;
        events_.push_back(std::move(e));
        cv_.notify_all();
    }

    // Appends the queued events to `out`, waiting up to `timeout` when there are none. True when
    // every choice has finished and all events were handed out.
    bool pop(std::vector<choice_event>& out, std::chrono::milliseconds timeout) {
        std::unique_lock lock(mutex_);
        cv_.wait_for(lock, timeout, [&] { return !events_.empty(); });
        for (auto& e : events_) out.push_back(std::move(e));
        events_.clear();
        return n_finished_ == n_choices_;
    }

    bool finished() const {
        std::lock_guard lock(mutex_);
        return n_finished_ == n_choices_;
    }

private:
    const std::int64_t n_choices_, n_prompt_;
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<choice_event> events_;
    std::int64_t n_finished_ = 0;
};

// What the HTTP side needs of the engine, independent of the scalar and pool types.
class engine {
public:
    virtual ~engine() = default;
    // Queues one request per choice (all with this prompt). Null when the server is full or
    // stopping; invalid_argument_error (nothing queued) for a prompt that is empty, too long for the
    // context or holds a token outside the vocabulary.
    virtual std::shared_ptr<job> submit(const std::vector<nexttok::token_id>& prompt,
                                        const std::vector<nexttok::generation_options>& choices) = 0;
    // Ends the job's unfinished requests (their end events follow); no-op for a finished job.
    virtual void cancel(const job& j) = 0;
    // Ends every request in flight and refuses new ones.
    virtual void cancel_all() = 0;
    // Waits until no request is in flight, then stops the engine thread.
    virtual void shutdown() = 0;
    virtual engine_gauges gauges() const = 0;
    // Positions one request may hold (prompt + generated).
    virtual std::int64_t capacity() const = 0;
};

struct engine_options {
    int threads = 1;                      // the decoder's
    nexttok::scheduler_options schedule;  // max_running = --parallel
    nexttok::paged_cache_options pool;    // n_blocks, block_size, max_seq_len, prefix_caching
    std::int64_t limit = 68;              // choices in flight at most (--parallel + --queue)
};

template <class Scalar, class Pool>
class engine_impl final : public engine {
public:
    // The model and tokenizer must outlive the engine. Starts the engine thread.
    engine_impl(std::shared_ptr<const nexttok::model> model, const nexttok::tokenizer& tok, const engine_options& o,
                metrics& m)
            : dec_(std::move(model), o.threads),
              pool_(dec_.config(), o.pool),
              sched_(dec_, pool_, &tok, o.schedule),
              metrics_(&m),
              limit_(o.limit) {
        kv_free_ = pool_.n_free_blocks();
        thread_ = std::thread([this] { loop_(); });
    }

    ~engine_impl() override { shutdown(); }

    std::shared_ptr<job> submit(const std::vector<nexttok::token_id>& prompt,
                                const std::vector<nexttok::generation_options>& choices) override {
        const auto n = static_cast<std::int64_t>(choices.size());
        auto j = std::make_shared<job>(n, static_cast<std::int64_t>(prompt.size()));
        std::lock_guard lock(mutex_);
        if (stopping_ || static_cast<std::int64_t>(active_.size()) + n > limit_) return nullptr;
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<entry> added;
        try {
            for (std::int64_t i = 0; i < n; ++i) {
                auto timing = std::make_shared<choice_timing>(t0);
                const nexttok::request_id id =
                    sched_.submit(prompt, choices[static_cast<std::size_t>(i)], make_callback_(j, i, timing));
                added.push_back({j, i, id, timing});
            }
        } catch (...) {
            for (const entry& e : added) cancel_quietly_(e.id);  // their end events go to a job nobody reads
            active_.insert(active_.end(), added.begin(), added.end());
            throw;
        }
        active_.insert(active_.end(), added.begin(), added.end());
        prompt_tokens_ += n * static_cast<std::int64_t>(prompt.size());
        cv_.notify_one();
        return j;
    }

    void cancel(const job& j) override {
        std::lock_guard lock(mutex_);
        for (const entry& e : active_)
            if (e.owner.get() == &j) cancel_quietly_(e.id);
    }

    void cancel_all() override {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        for (const entry& e : active_) cancel_quietly_(e.id);
        cv_.notify_one();
    }

    void shutdown() override {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
            exit_ = true;
            cv_.notify_one();
        }
        if (thread_.joinable()) thread_.join();
    }

    engine_gauges gauges() const override {
        const nexttok::scheduler_stats s = sched_.stats();
        engine_gauges g;
        g.running = s.running;
        g.waiting = s.waiting;
        g.kv_blocks_used = kv_used_.load();
        g.kv_blocks_free = kv_free_.load();
        g.computed_prompt_tokens = s.prompt_tokens;
        g.generated_tokens = s.generated_tokens;
        g.prefix_hit_tokens = s.prefix_hit_tokens;
        g.preemptions = s.preemptions;
        std::lock_guard lock(mutex_);
        g.prompt_tokens = prompt_tokens_;
        return g;
    }

    std::int64_t capacity() const override { return sched_.capacity(); }

private:
    // Written by the callback (engine thread, or submit's thread for a request that ends at once).
    struct choice_timing {
        explicit choice_timing(std::chrono::steady_clock::time_point t) : submitted(t) {}
        std::chrono::steady_clock::time_point submitted;
        std::optional<std::chrono::steady_clock::time_point> first, last;
    };

    struct entry {
        std::shared_ptr<job> owner;
        std::int64_t choice = 0;
        nexttok::request_id id = 0;
        std::shared_ptr<choice_timing> timing;
    };

    nexttok::token_callback make_callback_(const std::shared_ptr<job>& j, std::int64_t choice,
                                           const std::shared_ptr<choice_timing>& timing) {
        return [j, choice, timing, m = metrics_](const nexttok::token_event& e) {
            if (e.id != nexttok::no_token) {
                const auto now = std::chrono::steady_clock::now();
                if (!timing->first) {
                    timing->first = now;
                    m->observe_time_to_first_token(std::chrono::duration<double>(now - timing->submitted).count());
                }
                timing->last = now;
            }
            choice_event ev;
            ev.choice = choice;
            ev.text = std::string(e.text);
            ev.id = e.id;
            ev.logprob = e.logprob;
            ev.top.assign(e.top_logprobs.begin(), e.top_logprobs.end());
            j->push(std::move(ev));
            return true;
        };
    }

    void cancel_quietly_(nexttok::request_id id) {
        try {
            sched_.cancel(id);
        } catch (const nexttok::invalid_argument_error&) {
            // already finished: its result is collected at the next pass
        }
    }

    void loop_() {
        for (;;) {
            {
                std::unique_lock lock(mutex_);
                cv_.wait(lock, [&] { return exit_ || !active_.empty(); });
                if (exit_ && active_.empty()) return;
            }
            sched_.step();
            kv_used_ = pool_.n_used_blocks();
            kv_free_ = pool_.n_free_blocks();
            collect_();
        }
    }

    // Hands the results of finished requests to their jobs.
    void collect_() {
        std::lock_guard lock(mutex_);
        for (auto it = active_.begin(); it != active_.end();) {
            std::optional<nexttok::generation_result> r = sched_.take_result(it->id);
            if (!r) {
                ++it;
                continue;
            }
            const choice_timing& t = *it->timing;
            if (r->tokens.size() >= 2 && t.first && t.last)
                metrics_->observe_time_per_output_token(std::chrono::duration<double>(*t.last - *t.first).count() /
                                                        static_cast<double>(r->tokens.size() - 1));
            choice_event ev;
            ev.choice = it->choice;
            ev.finished = true;
            ev.reason = r->reason;
            ev.error = r->error;
            ev.n_tokens = static_cast<std::int64_t>(r->tokens.size());
            it->owner->push(std::move(ev));
            it = active_.erase(it);
        }
    }

    nexttok::decoder<Scalar> dec_;
    Pool pool_;
    nexttok::scheduler<Scalar, Pool> sched_;
    metrics* metrics_;  // non-owning
    const std::int64_t limit_;

    mutable std::mutex mutex_;  // guards active_, stopping_, exit_, prompt_tokens_
    std::condition_variable cv_;
    std::vector<entry> active_;  // submitted, result not yet handed to the job
    bool stopping_ = false;      // no new requests
    bool exit_ = false;          // the engine thread ends once active_ is empty
    std::int64_t prompt_tokens_ = 0;
    std::atomic<std::int64_t> kv_used_{0}, kv_free_{0};  // the pool's, after the last step
    std::thread thread_;
};

}  // namespace server

// The server's Prometheus metrics (text exposition format 0.0.4): counters and histograms that the
// HTTP threads and the engine thread update, and the gauges read from the engine at scrape time.
// Thread-safety: every member function may be called from any thread (one mutex; updates are a few
// per request or per token, far from contended).
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace server {

// A cumulative histogram with fixed upper bounds (seconds).
class histogram {
public:
    explicit histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size(), 0) {}

    void observe(double x) {
        for (std::size_t i = 0; i < bounds_.size(); ++i)
            if (x <= bounds_[i]) ++counts_[i];
        sum_ += x;
        ++count_;
    }

    void write(std::string& out, const std::string& name, const std::string& help) const {
        out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
        char buf[64];
        for (std::size_t i = 0; i < bounds_.size(); ++i) {
            std::snprintf(buf, sizeof buf, "%g", bounds_[i]);
            out += name + "_bucket{le=\"" + buf + "\"} " + std::to_string(counts_[i]) + "\n";
        }
        out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
        std::snprintf(buf, sizeof buf, "%.9g", sum_);
        out += name + "_sum " + buf + "\n" + name + "_count " + std::to_string(count_) + "\n";
    }

private:
    std::vector<double> bounds_;
    std::vector<std::uint64_t> counts_;  // observations <= bounds_[i]
    double sum_ = 0.0;
    std::uint64_t count_ = 0;
};

// Values the engine reports at scrape time.
struct engine_gauges {
    std::int64_t running = 0, waiting = 0;                // requests in the scheduler
    std::int64_t kv_blocks_used = 0, kv_blocks_free = 0;  // free includes cached prefix blocks
    std::int64_t prompt_tokens = 0;                       // prompt tokens of submitted requests
    std::int64_t computed_prompt_tokens = 0;  // prompt positions computed (not attached from the prefix cache)
    std::int64_t generated_tokens = 0;
    std::int64_t prefix_hit_tokens = 0;
    std::int64_t preemptions = 0;
};

class metrics {
public:
    metrics()
            : ttft_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
              tpot_({0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}) {}

    // One answered HTTP request (endpoint: its path, or "other").
    void count_request(const std::string& endpoint, int status) {
        std::lock_guard lock(mutex_);
        ++requests_[{endpoint, status}];
    }
    void observe_time_to_first_token(double seconds) {
        std::lock_guard lock(mutex_);
        ttft_.observe(seconds);
    }
    void observe_time_per_output_token(double seconds) {
        std::lock_guard lock(mutex_);
        tpot_.observe(seconds);
    }

    std::string render(const engine_gauges& g) const {
        std::string out;
        auto metric = [&](const char* name, const char* type, const char* help, std::int64_t value) {
            out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " +
                   std::to_string(value) + "\n";
        };
        metric("nexttok_requests_running", "gauge", "Requests holding KV blocks in the scheduler.", g.running);
        metric("nexttok_requests_waiting", "gauge", "Requests queued in the scheduler.", g.waiting);
        metric("nexttok_prompt_tokens_total", "counter", "Prompt tokens of submitted requests.", g.prompt_tokens);
        metric("nexttok_prompt_tokens_computed_total", "counter",
               "Prompt positions computed (the rest came from the prefix cache).", g.computed_prompt_tokens);
        metric("nexttok_generated_tokens_total", "counter", "Tokens generated.", g.generated_tokens);
        metric("nexttok_kv_blocks_used", "gauge", "KV pool blocks held by requests.", g.kv_blocks_used);
        metric("nexttok_kv_blocks_free", "gauge", "KV pool blocks free (cached prefix blocks included).",
               g.kv_blocks_free);
        metric("nexttok_prefix_cache_hit_tokens_total", "counter", "Prompt positions attached from the prefix cache.",
               g.prefix_hit_tokens);
        metric("nexttok_preemptions_total", "counter", "Requests preempted when the KV pool ran short.", g.preemptions);
        std::lock_guard lock(mutex_);
        out +=
            "# HELP nexttok_requests_total HTTP requests answered, by endpoint and status.\n# TYPE "
            "nexttok_requests_total counter\n";
        for (const auto& [key, n] : requests_)
            out += "nexttok_requests_total{endpoint=\"" + key.first + "\",status=\"" + std::to_string(key.second) +
                   "\"} " + std::to_string(n) + "\n";
        ttft_.write(out, "nexttok_time_to_first_token_seconds", "Time from submission to the first generated token.");
        tpot_.write(out, "nexttok_time_per_output_token_seconds",
                    "Mean time between generated tokens of a request, after the first.");
        return out;
    }

private:
    mutable std::mutex mutex_;
    std::map<std::pair<std::string, int>, std::uint64_t> requests_;
    histogram ttft_, tpot_;
};

}  // namespace server

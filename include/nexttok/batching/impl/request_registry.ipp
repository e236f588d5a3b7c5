// The definitions of detail/request_registry.hpp.
#pragma once

#include <nexttok/batching/detail/request_registry.hpp>
#include <nexttok/error.hpp>

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace nexttok::detail {

NEXTTOK_DECL request_registry::request_registry() = default;

NEXTTOK_DECL request_registry::~request_registry() = default;

NEXTTOK_DECL request_id request_registry::submit(const tokenizer* tok, std::span<const token_id> prompt,
                                                 any_sampler sample, any_of_criteria stop, token_callback on_token,
                                                 std::int64_t capacity, const loop_settings& settings) {
    auto r = std::make_unique<scheduled_request>(tok, prompt, std::move(sample), std::move(stop), std::move(on_token),
                                                 capacity, settings);
    if (!r->start()) {  // ended before its first token (e.g. max_new_tokens = 0)
        generation_result result = r->finish();
        std::lock_guard lock(mutex_);
        const request_id id = next_id_++;
        ++stats_.submitted;
        ++stats_.finished;
        results_.emplace(id, std::move(result));
        return id;
    }
    std::lock_guard lock(mutex_);
    const request_id id = r->id = next_id_++;
    ++stats_.submitted;
    live_.insert(id);
    incoming_.push_back(std::move(r));
    return id;
}

NEXTTOK_DECL void request_registry::cancel(request_id id) {
    std::lock_guard lock(mutex_);
    if (id < 0 || id >= next_id_)
        throw invalid_argument_error("scheduler::cancel: request " + std::to_string(id) +
                                     " is unknown (ids so far: 0 to " + std::to_string(next_id_ - 1) + ")");
    if (!live_.contains(id))
        throw invalid_argument_error("scheduler::cancel: request " + std::to_string(id) + " has already finished");
    cancels_.push_back(id);
}

NEXTTOK_DECL bool request_registry::finished(request_id id) const {
    std::lock_guard lock(mutex_);
    return results_.contains(id);
}

NEXTTOK_DECL std::optional<generation_result> request_registry::take_result(request_id id) {
    std::lock_guard lock(mutex_);
    const auto it = results_.find(id);
    if (it == results_.end()) return std::nullopt;
    generation_result r = std::move(it->second);
    results_.erase(it);
    return r;
}

NEXTTOK_DECL bool request_registry::idle() const {
    std::lock_guard lock(mutex_);
    return live_.empty();
}

NEXTTOK_DECL scheduler_stats request_registry::stats() const {
    std::lock_guard lock(mutex_);
    scheduler_stats s = stats_;
    s.waiting = static_cast<std::int64_t>(waiting_count_ + incoming_.size());
    s.running = static_cast<std::int64_t>(running_count_);
    return s;
}

NEXTTOK_DECL void request_registry::take_incoming(std::deque<scheduled_request*>& waiting) {
    std::lock_guard lock(mutex_);
    for (auto& r : incoming_) {
        waiting.push_back(r.get());
        owned_.emplace(r->id, std::move(r));
    }
    incoming_.clear();
    for (const request_id id : cancels_)
        if (const auto it = owned_.find(id); it != owned_.end()) it->second->cancelled = true;
    cancels_.clear();
}

NEXTTOK_DECL void request_registry::finish(scheduled_request* r, finish_reason why) {
    if (why != finish_reason::none) r->stop_with(why);
    generation_result result = r->finish();
    const request_id id = r->id;
    std::lock_guard lock(mutex_);
    results_.emplace(id, std::move(result));
    live_.erase(id);
    ++stats_.finished;
    owned_.erase(id);  // r dangles from here
}

NEXTTOK_DECL void request_registry::publish(const scheduler_stats& step_stats, std::size_t n_running,
                                            std::size_t n_waiting) {
    std::lock_guard lock(mutex_);
    const std::int64_t submitted = stats_.submitted, finished = stats_.finished;
    stats_ = step_stats;
    stats_.submitted = submitted;
    stats_.finished = finished;
    running_count_ = n_running;
    waiting_count_ = n_waiting;
}

}  // namespace nexttok::detail

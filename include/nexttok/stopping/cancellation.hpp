// Stops with finish_reason::cancelled when another thread asks: through a std::stop_token (from a
// std::stop_source or std::jthread; the state is shared, so copies of the criterion see the request)
// or through a std::atomic<bool> flag set to true (non-owning: the flag must outlive the criterion).
// The check is one atomic load (acquire), so the generation ends after the token in flight. This
// criterion is the only stopping state meant to be touched from another thread.
#pragma once

#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <atomic>
#include <stop_token>
#include <utility>

namespace nexttok {

class cancellation {
public:
    explicit cancellation(std::stop_token token) noexcept : token_(std::move(token)) {}
    explicit cancellation(const std::atomic<bool>& flag) noexcept : flag_(&flag) {}

    finish_reason check(const generation_state&) const noexcept {
        const bool requested = flag_ != nullptr ? flag_->load(std::memory_order_acquire) : token_.stop_requested();
        return requested ? finish_reason::cancelled : finish_reason::none;
    }

private:
    std::stop_token token_;
    const std::atomic<bool>* flag_ = nullptr;  // non-owning
};

}  // namespace nexttok

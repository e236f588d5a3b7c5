// Stops with finish_reason::max_new_tokens once n tokens have been generated (n_generated() >= n),
// the prompt not counted. n = 0 is allowed and means "generate nothing": the check generate() makes
// before the first step (n_generated() == 0) already fires.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <cstddef>
#include <cstdint>

namespace nexttok {

class max_new_tokens {
public:
    // Throws invalid_argument_error for n < 0 (signed so that a -1 from a CLI is caught, not wrapped).
    explicit max_new_tokens(std::int64_t n) : n_(checked_(n)) {}

    finish_reason check(const generation_state& state) const noexcept {
        return state.n_generated() >= n_ ? finish_reason::max_new_tokens : finish_reason::none;
    }

    std::size_t n() const noexcept { return n_; }

private:
    NEXTTOK_DECL static std::size_t checked_(std::int64_t n);

    std::size_t n_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/stopping/impl/max_new_tokens.ipp>
#endif

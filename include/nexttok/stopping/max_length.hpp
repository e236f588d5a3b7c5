// Stops with finish_reason::max_length once the whole sequence, prompt included, holds n tokens
// (Hugging Face's max_length / MaxLengthCriteria). A prompt of n tokens or more stops before the first
// step. Together with max_new_tokens, the first to fire wins.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <cstddef>
#include <cstdint>

namespace nexttok {

class max_length {
public:
    // Throws invalid_argument_error for n < 1.
    explicit max_length(std::int64_t n) : n_(checked_(n)) {}

    finish_reason check(const generation_state& state) const noexcept {
        return state.tokens.size() >= n_ ? finish_reason::max_length : finish_reason::none;
    }

    std::size_t n() const noexcept { return n_; }

private:
    NEXTTOK_DECL static std::size_t checked_(std::int64_t n);

    std::size_t n_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/stopping/impl/max_length.ipp>
#endif

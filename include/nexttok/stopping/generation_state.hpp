// What a stopping criterion sees after each step: a non-owning view of the sequence so far. Built by
// generate() on every step from its own buffers; valid only during the check() call.
#pragma once

#include <nexttok/types.hpp>

#include <cassert>
#include <cstddef>
#include <span>
#include <string_view>

namespace nexttok {

struct generation_state {
    // The whole sequence: prompt + generated, newest last. (n_prompt + n_generated()) ids.
    std::span<const token_id> tokens;
    // How many of `tokens` are the prompt. Precondition: n_prompt <= tokens.size().
    std::size_t n_prompt = 0;
    // The text generated so far (the prompt's text excluded), as decoded by the streamer.
    std::string_view text;

    std::size_t n_generated() const noexcept {
        assert(n_prompt <= tokens.size());
        return tokens.size() - n_prompt;
    }

    // The generated tokens only, oldest first.
    std::span<const token_id> generated() const noexcept { return tokens.subspan(n_prompt); }

    // The newest generated token, or no_token before the first one.
    token_id last_generated() const noexcept { return n_generated() == 0 ? no_token : tokens.back(); }
};

}  // namespace nexttok

// Stops with finish_reason::stop_token when the generated tokens end with one of the given token
// sequences (a multi-token end-of-turn marker, "\n\nUser:" as the tokens a model emits). The whole
// sequence must lie in the generated tokens: prompt tokens never complete a match (as eos_criterion
// and stop_tokens). Sequences of one token behave as stop_tokens. Cost per check: O(total length).
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <vector>

namespace nexttok {

class stop_token_sequences {
public:
    // Throws invalid_argument_error for an empty sequence.
    NEXTTOK_DECL explicit stop_token_sequences(std::vector<std::vector<token_id>> sequences);

    NEXTTOK_DECL finish_reason check(const generation_state& state) const noexcept;

    const std::vector<std::vector<token_id>>& sequences() const noexcept { return sequences_; }

private:
    std::vector<std::vector<token_id>> sequences_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/stopping/impl/stop_token_sequences.ipp>
#endif

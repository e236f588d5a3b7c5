// Stops with finish_reason::stop_token when the generated tokens end with one of the given token
// sequences (a multi-token end-of-turn marker, "\n\nUser:" as the tokens a model emits). The whole
// sequence must lie in the generated tokens: prompt tokens never complete a match (as eos_criterion
// and stop_tokens). Sequences of one token behave as stop_tokens. Cost per check: O(total length).
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace nexttok {

class stop_token_sequences {
public:
    // Throws invalid_argument_error for an empty sequence.
    explicit stop_token_sequences(std::vector<std::vector<token_id>> sequences) : sequences_(std::move(sequences)) {
        for (const auto& s : sequences_)
            if (s.empty()) throw invalid_argument_error("stop_token_sequences: an empty sequence");
    }

    finish_reason check(const generation_state& state) const noexcept {
        const auto generated = state.generated();
        for (const auto& s : sequences_) {
            if (s.size() > generated.size()) continue;
            if (std::equal(s.begin(), s.end(), generated.end() - static_cast<std::ptrdiff_t>(s.size())))
                return finish_reason::stop_token;
        }
        return finish_reason::none;
    }

    const std::vector<std::vector<token_id>>& sequences() const noexcept { return sequences_; }

private:
    std::vector<std::vector<token_id>> sequences_;
};

}  // namespace nexttok

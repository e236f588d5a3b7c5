// The definitions of stop_token_sequences.hpp.
#pragma once

#include <nexttok/stopping/stop_token_sequences.hpp>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace nexttok {

NEXTTOK_DECL stop_token_sequences::stop_token_sequences(std::vector<std::vector<token_id>> sequences)
        : sequences_(std::move(sequences)) {
    for (const auto& s : sequences_)
        if (s.empty()) throw invalid_argument_error("stop_token_sequences: an empty sequence");
}

NEXTTOK_DECL finish_reason stop_token_sequences::check(const generation_state& state) const noexcept {
    const auto generated = state.generated();
    for (const auto& s : sequences_) {
        if (s.size() > generated.size()) continue;
        if (std::equal(s.begin(), s.end(), generated.end() - static_cast<std::ptrdiff_t>(s.size())))
            return finish_reason::stop_token;
    }
    return finish_reason::none;
}

}  // namespace nexttok

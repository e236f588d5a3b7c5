// The definitions of banned_sequences.hpp.
#pragma once

#include <nexttok/sampling/banned_sequences.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nexttok {

NEXTTOK_DECL banned_sequences::banned_sequences(std::vector<std::vector<token_id>> sequences)
        : sequences_(std::move(sequences)), context_(longest_prefix_(sequences_)) {}

NEXTTOK_DECL void banned_sequences::apply(candidates& c) {
    banned_.reserve(c.size());
    for (const auto& s : sequences_) {
        const std::size_t prefix = s.size() - 1;
        if (prefix > context_.size()) continue;
        bool match = true;
        for (std::size_t k = 0; k < prefix && match; ++k) match = context_.from_end(prefix - 1 - k) == s[k];
        if (match) banned_.mark(s.back());
    }
    banned_.remove_from(c);
}

NEXTTOK_DECL std::int64_t banned_sequences::longest_prefix_(const std::vector<std::vector<token_id>>& sequences) {
    std::size_t longest = 0;
    for (const auto& s : sequences) {
        if (s.empty()) throw invalid_argument_error("banned_sequences: an empty sequence");
        for (token_id t : s)
            if (t < 0) throw invalid_argument_error("banned_sequences: negative token id " + std::to_string(t));
        longest = std::max(longest, s.size() - 1);
    }
    return static_cast<std::int64_t>(longest);
}

}  // namespace nexttok

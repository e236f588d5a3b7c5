// The definitions of no_repeat_ngram.hpp.
#pragma once

#include <nexttok/sampling/no_repeat_ngram.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace nexttok {

NEXTTOK_DECL no_repeat_ngram::no_repeat_ngram(std::int32_t n, bool include_prompt)
        : n_(n), include_prompt_(include_prompt) {
    if (n < 0) throw invalid_argument_error("no_repeat_ngram: n = " + std::to_string(n) + ": must be >= 0 (0 = off)");
}

NEXTTOK_DECL void no_repeat_ngram::apply(candidates& c) {
    in_prompt_ = false;
    banned_.reserve(c.size());
    const auto n = static_cast<std::size_t>(n_);
    const std::size_t len = context_.size();
    if (n == 0 || len < n) return;
    // Windows [j, j + n) whose first n-1 tokens equal the last n-1 tokens ban their last token.
    // The window ending at the newest token cannot complete (it would need one more token).
    for (std::size_t j = 0; j + n <= len; ++j) {
        bool match = true;
        for (std::size_t k = 0; k + 1 < n && match; ++k) match = context_[j + k] == context_[len - (n - 1) + k];
        if (match) banned_.mark(context_[j + n - 1]);
    }
    banned_.remove_from(c);
}

}  // namespace nexttok

// The definitions of min_new_tokens.hpp.
#pragma once

#include <nexttok/sampling/min_new_tokens.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nexttok {

NEXTTOK_DECL min_new_tokens::min_new_tokens(std::int64_t n, std::vector<token_id> eos_ids)
        : n_(n), eos_(std::move(eos_ids)) {
    if (n < 0) throw invalid_argument_error("min_new_tokens: n = " + std::to_string(n) + ": must be >= 0");
    std::erase_if(eos_, [](token_id t) { return t < 0; });
}

NEXTTOK_DECL void min_new_tokens::apply(candidates& c) {
    in_prompt_ = false;
    if (n_generated_ >= n_ || eos_.empty()) return;
    c.keep_if([&](std::size_t i) { return std::find(eos_.begin(), eos_.end(), c.ids[i]) == eos_.end(); });
}

}  // namespace nexttok

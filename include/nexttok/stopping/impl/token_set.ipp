// The definitions of detail/token_set.hpp.
#pragma once

#include <nexttok/stopping/detail/token_set.hpp>

#include <algorithm>
#include <span>

namespace nexttok::detail {

NEXTTOK_DECL token_set::token_set(std::span<const token_id> ids) {
    for (token_id id : ids)
        if (id >= 0) ids_.push_back(id);
    std::sort(ids_.begin(), ids_.end());
    ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
}

}  // namespace nexttok::detail

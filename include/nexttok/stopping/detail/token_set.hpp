// A small immutable set of token ids (end-of-sequence ids, stop tokens): a sorted vector, since such
// sets hold a handful of ids and are probed once per generated token.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <span>
#include <vector>

namespace nexttok::detail {

class token_set {
public:
    token_set() = default;

    // Negative ids (no_token) are dropped: they can never be generated, so a vocabulary without an
    // EOS token can pass its -1 unchanged. Duplicates are merged.
    NEXTTOK_DECL explicit token_set(std::span<const token_id> ids);

    bool contains(token_id id) const noexcept { return std::binary_search(ids_.begin(), ids_.end(), id); }
    bool empty() const noexcept { return ids_.empty(); }
    // Sorted ascending, unique.
    std::span<const token_id> ids() const noexcept { return ids_; }

private:
    std::vector<token_id> ids_;
};

}  // namespace nexttok::detail

#if NEXTTOK_HEADER_ONLY
#include <nexttok/stopping/impl/token_set.ipp>
#endif

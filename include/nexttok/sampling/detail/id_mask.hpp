// A set of token ids to remove from a candidate set, rebuilt on every apply() without allocating
// once warm: one flag per id (grown to the largest id seen, at most the vocabulary) and the list of
// ids set, so clearing costs the number of ids marked, not the vocabulary. Internal.
#pragma once

#include <nexttok/sampling/candidates.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nexttok::detail {

class id_mask {
public:
    void mark(token_id id) {
        if (id < 0) return;
        const auto i = static_cast<std::size_t>(id);
        if (i >= flags_.size()) flags_.resize(i + 1, 0);
        if (flags_[i] == 0) {
            flags_[i] = 1;
            marked_.push_back(id);
        }
    }

    // Sizes the flags for ids below n (the vocabulary), so that mark() does not allocate for them.
    void reserve(std::size_t n) {
        if (flags_.size() < n) flags_.resize(n, 0);
        marked_.reserve(n);
    }

    bool contains(token_id id) const noexcept {
        const auto i = static_cast<std::size_t>(id);
        return id >= 0 && i < flags_.size() && flags_[i] != 0;
    }

    bool empty() const noexcept { return marked_.empty(); }

    void clear() noexcept {
        for (token_id id : marked_) flags_[static_cast<std::size_t>(id)] = 0;
        marked_.clear();
    }

    // Removes the marked ids from c (order kept), then clears the mask.
    void remove_from(candidates& c) {
        if (!marked_.empty()) c.keep_if([&](std::size_t i) { return !contains(c.ids[i]); });
        clear();
    }

private:
    std::vector<std::uint8_t> flags_;  // (largest id marked + 1)
    std::vector<token_id> marked_;
};

}  // namespace nexttok::detail

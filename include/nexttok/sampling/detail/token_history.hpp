// The recent tokens a stateful processor remembers (penalties, DRY, no-repeat-n-gram, banned
// sequences): the last `capacity` accepted tokens in a ring allocated once, or every accepted token
// when the capacity is negative (then the buffer grows, amortized, as the sequence does). Internal.
#pragma once

#include <nexttok/types.hpp>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nexttok::detail {

class token_history {
public:
    // capacity < 0: unbounded; 0: remembers nothing; n > 0: the last n tokens (allocated now).
    explicit token_history(std::int64_t capacity = -1) : capacity_(capacity) {
        if (capacity_ > 0) data_.resize(static_cast<std::size_t>(capacity_));
    }

    // Appends a token; returns the token that fell out of the window, or no_token.
    token_id push(token_id t) {
        if (capacity_ == 0) return no_token;
        if (capacity_ < 0) {
            data_.push_back(t);
            ++size_;
            return no_token;
        }
        const auto cap = static_cast<std::size_t>(capacity_);
        token_id evicted = no_token;
        if (size_ == cap) {
            evicted = data_[first_];
            first_ = (first_ + 1) % cap;
        } else {
            ++size_;
        }
        data_[(first_ + size_ - 1) % cap] = t;
        return evicted;
    }

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }

    // i-th token counted from the newest (0 = the newest). Precondition: i < size().
    token_id from_end(std::size_t i) const noexcept {
        assert(i < size_);
        return (*this)[size_ - 1 - i];
    }
    // i-th token counted from the oldest remembered one. Precondition: i < size().
    token_id operator[](std::size_t i) const noexcept {
        assert(i < size_);
        if (capacity_ < 0) return data_[i];
        return data_[(first_ + i) % static_cast<std::size_t>(capacity_)];
    }

    void clear() noexcept {
        size_ = 0;
        first_ = 0;
        if (capacity_ < 0) data_.clear();
    }

private:
    std::int64_t capacity_;
    std::vector<token_id> data_;  // (capacity) ring, or (size) when unbounded
    std::size_t first_ = 0;       // ring position of the oldest token
    std::size_t size_ = 0;
};

}  // namespace nexttok::detail

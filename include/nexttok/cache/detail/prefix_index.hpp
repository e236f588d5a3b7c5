// The prefix index of a paged KV cache: full blocks registered under the key (the key of the block
// before them, their block_size tokens), so that a later sequence whose tokens begin the same way
// finds the blocks that already hold its keys and values (a hash chain over full blocks, as vLLM's
// automatic prefix caching). A lookup never trusts a hash: it compares the parent key and every
// token of the candidate.
//
// Each registration gets a fresh 64-bit key id (never reused), and a child stores its parent's key
// id, not its block number. So when a parent is evicted and its block later holds something else,
// the children registered under the old parent can no longer be reached (they stay, unreachable,
// until the LRU evicts them): a chain only ever matches blocks computed after exactly that prefix.
//
// Storage is sized at construction (no allocation afterwards): per block its tokens, parent key,
// key, hash and the next block in its hash bucket; buckets are a power of two >= n_blocks.
// Internal; not thread-safe (the owning cache is driven by one thread).
#pragma once

#include <nexttok/types.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nexttok::detail {

class prefix_index {
public:
    using key_type = std::uint64_t;
    static constexpr key_type root_key = 0;  // the "parent" of a sequence's first block; never a block's key

    prefix_index() = default;  // empty: prefix caching off; registered() is false for every block
    prefix_index(std::int64_t n_blocks, std::int64_t block_size)
            : block_size_(block_size),
              tokens_(static_cast<std::size_t>(n_blocks * block_size)),
              parent_(static_cast<std::size_t>(n_blocks)),
              key_(static_cast<std::size_t>(n_blocks), root_key),
              hash_(static_cast<std::size_t>(n_blocks)),
              next_(static_cast<std::size_t>(n_blocks), -1),
              buckets_(std::bit_ceil(static_cast<std::size_t>(n_blocks)), -1),
              mask_(buckets_.size() - 1) {}

    bool registered(std::int32_t b) const noexcept {
        return !key_.empty() && key_[static_cast<std::size_t>(b)] != root_key;
    }
    key_type key(std::int32_t b) const noexcept { return key_[static_cast<std::size_t>(b)]; }
    std::int64_t size() const noexcept { return size_; }

    // Whether registered block b holds exactly `tokens` (whatever its parent).
    bool same_tokens(std::int32_t b, std::span<const token_id> tokens) const noexcept {
        const auto i = static_cast<std::size_t>(b);
        return registered(b) &&
               std::equal(tokens.begin(), tokens.end(), tokens_.begin() + static_cast<std::ptrdiff_t>(i * block_size_));
    }

    // Whether registered block b holds exactly `tokens` after the block whose key is `parent`.
    bool matches(std::int32_t b, key_type parent, std::span<const token_id> tokens) const noexcept {
        return registered(b) && parent_[static_cast<std::size_t>(b)] == parent && same_tokens(b, tokens);
    }

    // The registered block holding `tokens` (block_size of them) after `parent`, or -1.
    std::int32_t find(key_type parent, std::span<const token_id> tokens) const noexcept {
        if (key_.empty()) return -1;
        const std::uint64_t h = hash(parent, tokens);
        for (std::int32_t b = buckets_[h & mask_]; b >= 0; b = next_[static_cast<std::size_t>(b)])
            if (hash_[static_cast<std::size_t>(b)] == h && matches(b, parent, tokens)) return b;
        return -1;
    }

    // Registers unregistered block b as holding `tokens` after `parent`; returns its new key.
    key_type insert(std::int32_t b, key_type parent, std::span<const token_id> tokens) noexcept {
        const auto i = static_cast<std::size_t>(b);
        const std::uint64_t h = hash(parent, tokens);
        std::copy(tokens.begin(), tokens.end(), tokens_.begin() + static_cast<std::ptrdiff_t>(i * block_size_));
        parent_[i] = parent;
        key_[i] = next_key_++;
        hash_[i] = h;
        next_[i] = buckets_[h & mask_];
        buckets_[h & mask_] = b;
        ++size_;
        return key_[i];
    }

    // Unregisters block b (it is being evicted or reused); a no-op if it is not registered.
    void erase(std::int32_t b) noexcept {
        if (!registered(b)) return;
        const auto i = static_cast<std::size_t>(b);
        std::int32_t* link = &buckets_[hash_[i] & mask_];
        while (*link != b) link = &next_[static_cast<std::size_t>(*link)];
        *link = next_[i];
        next_[i] = -1;
        key_[i] = root_key;
        --size_;
    }

private:
    // splitmix64's finalizer over the parent key and each token: a well-mixed 64-bit hash (only
    // speed depends on it; matches() decides).
    static std::uint64_t mix(std::uint64_t z) noexcept {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    static std::uint64_t hash(key_type parent, std::span<const token_id> tokens) noexcept {
        std::uint64_t h = mix(parent + 0x9e3779b97f4a7c15ULL);
        for (token_id t : tokens) h = mix(h ^ static_cast<std::uint32_t>(t));
        return h;
    }

    std::int64_t block_size_ = 0;
    std::vector<token_id> tokens_;       // (n_blocks, block_size): what each registered block holds
    std::vector<key_type> parent_;       // (n_blocks): the key of the block before it
    std::vector<key_type> key_;          // (n_blocks): its key, root_key when not registered
    std::vector<std::uint64_t> hash_;    // (n_blocks): hash(parent, tokens)
    std::vector<std::int32_t> next_;     // (n_blocks): next block in the same bucket, -1 ends the chain
    std::vector<std::int32_t> buckets_;  // (power of two >= n_blocks): first block of each bucket, -1 empty
    std::size_t mask_ = 0;
    key_type next_key_ = 1;
    std::int64_t size_ = 0;
};

}  // namespace nexttok::detail

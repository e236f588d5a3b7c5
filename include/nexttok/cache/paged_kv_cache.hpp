// Paged KV caches: one pool of fixed-size blocks (block_size positions of keys and values over all
// layers) shared by many sequences, each with its own block table, for batched decoding and
// parallel sampling. Blocks are reference-counted: fork() shares a sequence's blocks without
// copying, attach_prefix() reuses the blocks of an earlier prompt with the same leading tokens
// (prefix caching, registered by publish()), and a shared block is copied before it is written
// (copy-on-write). Memory is allocated as blocks are first used, so bytes() follows the tokens
// held, not the pool's capacity; kv_planner.hpp sizes a pool for a memory budget.
// See detail/paged_storage.hpp for the block layout, the allocation order and the eviction policy.
//
//   paged_kv_cache<float> pool(model->config(), {.n_blocks = 1024, .block_size = 16});
//   seq_id s = pool.create();
//   auto view = pool.sequence(s);          // a kv_storage: decoder::forward and generate() use it
//   dec.forward(prompt, 0, view, logits);
//   seq_id t = pool.fork(s);               // a second sample from the same prompt, no copy
//
// paged_kv_cache stores rows in Scalar (the decoder's type); q8_0_paged_kv_cache stores them as
// q8_0 blocks, as q8_0_kv_cache does (kv_dim must be a multiple of 32).
// Not thread-safe: one thread drives a cache and its views (key()/value() may be read from
// several threads while nothing else runs on it, as the decoder's attention does).
#pragma once

#include <nexttok/cache/detail/paged_storage.hpp>
#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace nexttok {

// One sequence of a paged cache as a kv_storage<Scalar>, so that the single-sequence
// decoder::forward and generate() run on it unchanged. A cheap non-owning value (the cache's
// address and the sequence id): copy it freely; it must not outlive the cache, nor be used after
// the cache is moved or the sequence released.
template <class Cache>
class paged_sequence {
public:
    using scalar_type = typename Cache::scalar_type;
    using element_type = typename Cache::element_type;
    static constexpr bool retains_history = true;

    paged_sequence(Cache& cache, seq_id id) noexcept : cache_(&cache), id_(id) {}

    element_type* key(std::int64_t layer, std::int64_t pos) noexcept { return cache_->key(id_, layer, pos); }
    element_type* value(std::int64_t layer, std::int64_t pos) noexcept { return cache_->value(id_, layer, pos); }
    const element_type* key(std::int64_t layer, std::int64_t pos) const noexcept {
        return std::as_const(*cache_).key(id_, layer, pos);
    }
    const element_type* value(std::int64_t layer, std::int64_t pos) const noexcept {
        return std::as_const(*cache_).value(id_, layer, pos);
    }

    // Positions the sequence may hold (the cache's max_seq_len; the pool may run out before).
    std::int64_t capacity() const noexcept { return cache_->max_seq_len(); }
    std::int64_t size() const { return cache_->size(id_); }
    // The blocks in its table, shared ones included.
    std::size_t bytes() const { return static_cast<std::size_t>(cache_->sequence_blocks(id_)) * cache_->block_bytes(); }
    void reserve(std::int64_t n_positions) { cache_->reserve(id_, n_positions); }
    void clear() { cache_->truncate(id_, 0); }
    void truncate(std::int64_t n_positions) { cache_->truncate(id_, n_positions); }

    seq_id id() const noexcept { return id_; }
    Cache& cache() const noexcept { return *cache_; }

private:
    Cache* cache_;  // non-owning
    seq_id id_;
};

template <class Scalar>
class paged_kv_cache : public detail::paged_storage<Scalar> {
public:
    using scalar_type = Scalar;
    using element_type = Scalar;
    static constexpr bool retains_history = true;

    // Allocates only bookkeeping now; blocks as they are first used.
    paged_kv_cache(const kv_shape& c, const paged_cache_options& options)
            : detail::paged_storage<Scalar>(c, options, "paged_kv_cache") {}

    // A view of sequence s (which must exist) as a kv_storage<Scalar>.
    paged_sequence<paged_kv_cache> sequence(seq_id s) {
        (void)this->size(s);  // throws invalid_argument_error for an unknown id
        return {*this, s};
    }
};

template <class Scalar>
class q8_0_paged_kv_cache : public detail::paged_storage<block_q8_0> {
public:
    using scalar_type = Scalar;
    using element_type = block_q8_0;
    static constexpr bool retains_history = true;

    // Throws invalid_argument_error unless kv_dim is a multiple of 32.
    q8_0_paged_kv_cache(const kv_shape& c, const paged_cache_options& options)
            : detail::paged_storage<block_q8_0>(c, options, "q8_0_paged_kv_cache") {}

    paged_sequence<q8_0_paged_kv_cache> sequence(seq_id s) {
        (void)this->size(s);
        return {*this, s};
    }
};

}  // namespace nexttok

// A pool of fixed-size blocks of keys and values shared by many sequences (the memory manager of
// vLLM's PagedAttention): each sequence has a block table (block i holds its positions
// [i * block_size, (i + 1) * block_size)); blocks are reference-counted, so forked samples and
// requests with a common prompt share them, and a shared block is copied before it is written.
// Shared by paged_kv_cache (Element = Scalar) and q8_0_paged_kv_cache (Element = block_q8_0, a row
// is kv_dim / 32 blocks). Internal: use paged_kv_cache.hpp.
//
// Block layout: keys (n_layers, block_size, row_elements) then values (the same), so one block is
// block_bytes() contiguous bytes and a block's rows of one layer are contiguous: attention reads
// rows t = 0..n-1 of a layer in order, block_size rows at a time from one place.
//
// Memory grows with the blocks used, not with the pool: blocks live in slabs of about 4 MiB (the
// smallest buffer allocate_buffer aligns to 2 MiB, so it can be backed by huge pages) or of one
// block if a block is larger, allocated the first time one of their blocks is handed out and never
// moved or freed before the cache, so a row pointer stays valid while its block is held. Freed
// blocks are reused most recently freed first, then never-used blocks lowest-numbered first, so
// the memory allocated follows the peak of blocks in use.
//
// Block states: free (never used, or freed), used (refcount > 0), cached (refcount 0 but
// registered in the prefix index: its contents may still be attached by a later sequence). An
// allocation takes a free block first, else evicts the least recently used cached block. A
// released sequence puts its cached blocks into the LRU last block first, so its later blocks are
// evicted before the earlier ones they extend (children before parents).
//
// Not thread-safe: one thread drives the cache. key()/value() only read bookkeeping, so several
// threads may call them (the decoder's attention does) while nothing else runs on the cache.
// Per-block bookkeeping is sized at construction; reserve() allocates only a new slab, and a block
// table grows (amortized) by one entry per block_size positions, never per position.
#pragma once

#include <nexttok/cache/detail/paged_pool_checks.hpp>
#include <nexttok/cache/detail/prefix_index.hpp>
#include <nexttok/cache/kv_planner.hpp>
#include <nexttok/cache/paged_cache_options.hpp>
#include <nexttok/cache/kv_shape.hpp>
#include <nexttok/detail/huge_pages.hpp>
#include <nexttok/detail/memory_limit.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tensor/quant_blocks.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nexttok::detail {

template <class Element>
class paged_storage {
public:
    using element_type = Element;
    // Values per Element: 32 for a q8_0 block, 1 for a scalar.
    static constexpr std::int64_t values_per_element = std::is_same_v<Element, block_q8_0> ? block_q8_0::block_size : 1;
    static constexpr std::size_t slab_target_bytes = 2 * huge_page_size;

    paged_storage(const kv_shape& c, const paged_cache_options& o, const char* kind)
            : kind_(kind),
              n_layers_(c.n_layers),
              kv_dim_(c.kv_dim()),
              block_size_(o.block_size),
              n_blocks_(o.n_blocks),
              max_seq_len_(o.max_seq_len == 0 ? c.max_seq_len : o.max_seq_len),
              prefix_caching_(o.prefix_caching) {
        check_paged_pool<Element>(kind_, c, o, {n_blocks_, block_size_, max_seq_len_, kv_dim_}, pool_remedy());
        row_elements_ = kv_dim_ / values_per_element;
        half_elements_ = n_layers_ * block_size_ * row_elements_;
        block_shift_ = std::has_single_bit(static_cast<std::uint64_t>(block_size_))
                           ? std::countr_zero(static_cast<std::uint64_t>(block_size_))
                           : -1;
        blocks_per_slab_ = std::max<std::int64_t>(1, static_cast<std::int64_t>(slab_target_bytes / block_bytes()));
        slabs_.resize(static_cast<std::size_t>((n_blocks_ + blocks_per_slab_ - 1) / blocks_per_slab_));
        base_.assign(static_cast<std::size_t>(n_blocks_), nullptr);
        refcount_.assign(static_cast<std::size_t>(n_blocks_), 0);
        free_.reserve(static_cast<std::size_t>(n_blocks_));
        lru_prev_.assign(static_cast<std::size_t>(n_blocks_) + 1, sentinel());
        lru_next_.assign(static_cast<std::size_t>(n_blocks_) + 1, sentinel());
        if (prefix_caching_) index_ = prefix_index(n_blocks_, block_size_);
    }

    // Row pointers point into the pool; a moved-to cache keeps them valid. Views (paged_sequence)
    // hold the cache's address, so they do not follow a move.
    paged_storage(const paged_storage&) = delete;
    paged_storage& operator=(const paged_storage&) = delete;
    paged_storage(paged_storage&&) noexcept = default;
    paged_storage& operator=(paged_storage&&) noexcept = default;

    // ---- sequences

    // A new, empty sequence.
    seq_id create() {
        if (!free_ids_.empty()) {
            const seq_id s = free_ids_.back();
            free_ids_.pop_back();
            seqs_[static_cast<std::size_t>(s)].live = true;
            return s;
        }
        if (seqs_.size() >= static_cast<std::size_t>(std::numeric_limits<seq_id>::max()))
            throw cache_full_error(std::string(kind_) + ": too many sequences");
        seqs_.emplace_back().live = true;
        return static_cast<seq_id>(seqs_.size() - 1);
    }

    // A new sequence sharing every block of src (refcount + 1 each, nothing copied), of the same size.
    seq_id fork(seq_id src) {
        const sequence copy = at(src, "fork");  // before create(), which may move seqs_
        const seq_id s = create();
        sequence& q = seqs_[static_cast<std::size_t>(s)];
        q = copy;
        for (std::int32_t b : q.blocks) ++refcount_[static_cast<std::size_t>(b)];
        return s;
    }

    // The sequence ends: its blocks lose a reference; a block at 0 becomes free, or cached if registered.
    void release(seq_id s) {
        sequence& q = at(s, "release");
        for (auto b = q.blocks.rbegin(); b != q.blocks.rend(); ++b) drop_block(*b);
        q.blocks.clear();  // keeps its capacity for the next sequence with this id
        q.size = 0;
        q.n_published = 0;
        q.published_key = prefix_index::root_key;
        q.live = false;
        free_ids_.push_back(s);
    }

    bool contains(seq_id s) const noexcept {
        return s >= 0 && static_cast<std::size_t>(s) < seqs_.size() && seqs_[static_cast<std::size_t>(s)].live;
    }
    std::int64_t size(seq_id s) const { return at(s, "size").size; }
    std::int64_t max_seq_len() const noexcept { return max_seq_len_; }
    std::int64_t n_sequences() const noexcept { return static_cast<std::int64_t>(seqs_.size() - free_ids_.size()); }

    // The blocks reserve(s, n) would take from the pool: new blocks, plus one if the partly filled
    // last block must be copied before it is written (it is shared, or registered in the prefix index).
    std::int64_t blocks_needed(seq_id s, std::int64_t n_positions) const {
        const sequence& q = at(s, "blocks_needed");
        if (n_positions <= q.size) return 0;
        return blocks_for(n_positions) - static_cast<std::int64_t>(q.blocks.size()) + (must_copy_last(q) ? 1 : 0);
    }

    bool can_reserve(seq_id s, std::int64_t n_positions) const {
        return n_positions <= max_seq_len_ && blocks_needed(s, n_positions) <= n_free_blocks();
    }

    // Room for positions [0, n_positions): takes the missing blocks (copy-on-write of the last one
    // when needed); size = max(size, n). Throws cache_full_error, and then changes nothing, when n
    // exceeds max_seq_len() or the pool cannot supply the blocks.
    void reserve(seq_id s, std::int64_t n_positions) {
        sequence& q = at(s, "reserve");
        if (n_positions <= q.size) return;
        if (n_positions > max_seq_len_)
            throw cache_full_error(std::string(kind_) + ": sequence " + std::to_string(s) + ": " +
                                   std::to_string(n_positions) + " positions exceed max_seq_len " +
                                   std::to_string(max_seq_len_));
        const std::int64_t n_new = blocks_for(n_positions) - static_cast<std::int64_t>(q.blocks.size());
        const bool copy = must_copy_last(q);
        const std::int64_t needed = n_new + (copy ? 1 : 0);
        if (needed > n_free_blocks())
            throw cache_full_error(std::string(kind_) + ": sequence " + std::to_string(s) + ": " +
                                   std::to_string(n_positions) + " positions need " + std::to_string(needed) +
                                   " more blocks of " + std::to_string(block_size_) + " positions, " +
                                   std::to_string(n_free_blocks()) + " free of " + std::to_string(n_blocks_));
        // Everything that may throw (bad_alloc) happens before the first change.
        q.blocks.reserve(q.blocks.size() + static_cast<std::size_t>(n_new));
        prepare_blocks(needed);
        // Changes from here on cannot fail. The old last block is dropped after the new ones are
        // taken, so that it is not evicted and reused within this call.
        std::int32_t old = -1;
        if (copy) {
            old = q.blocks.back();
            const std::int32_t b = take_block();
            copy_rows(old, b, q.size - (static_cast<std::int64_t>(q.blocks.size()) - 1) * block_size_);
            q.blocks.back() = b;
        }
        for (std::int64_t i = 0; i < n_new; ++i) q.blocks.push_back(take_block());
        if (old >= 0) drop_block(old);
        q.size = n_positions;
    }

    // Forgets positions >= n_positions (speculative decoding's rollback): blocks wholly beyond are
    // released. A partly kept block that is shared or registered is copied at the next reserve().
    void truncate(seq_id s, std::int64_t n_positions) {
        sequence& q = at(s, "truncate");
        if (n_positions < 0)
            throw invalid_argument_error(std::string(kind_) + ": truncate: sequence " + std::to_string(s) + " to " +
                                         std::to_string(n_positions) + " positions (expected >= 0)");
        if (n_positions >= q.size) return;
        const auto keep = static_cast<std::size_t>(blocks_for(n_positions));
        for (std::size_t i = q.blocks.size(); i > keep; --i) drop_block(q.blocks[i - 1]);
        q.blocks.resize(keep);
        q.size = n_positions;
        if (n_positions / block_size_ < q.n_published) {  // publish() walks the chain again
            q.n_published = 0;
            q.published_key = prefix_index::root_key;
        }
    }

    // ---- rows: for a reserved position of a live sequence (checked in debug builds only)

    Element* key(seq_id s, std::int64_t layer, std::int64_t pos) noexcept { return row(s, layer, pos); }
    Element* value(seq_id s, std::int64_t layer, std::int64_t pos) noexcept {
        return row(s, layer, pos) + half_elements_;
    }
    const Element* key(seq_id s, std::int64_t layer, std::int64_t pos) const noexcept { return row(s, layer, pos); }
    const Element* value(seq_id s, std::int64_t layer, std::int64_t pos) const noexcept {
        return row(s, layer, pos) + half_elements_;
    }

    // ---- prefix caching

    // Attaches to empty sequence s the longest run of registered blocks that hold tokens' leading
    // full blocks after exactly the same prefix (refcount + 1 each; cached ones leave the LRU).
    // Returns the positions attached: a multiple of block_size, <= tokens.size(). To get logits for
    // the last prompt token, pass the prompt without it. 0 with prefix caching off.
    std::int64_t attach_prefix(seq_id s, std::span<const token_id> tokens) {
        sequence& q = at(s, "attach_prefix");
        if (q.size != 0)
            throw invalid_argument_error(std::string(kind_) + ": attach_prefix: sequence " + std::to_string(s) +
                                         " holds " + std::to_string(q.size) +
                                         " positions (expected an empty sequence)");
        if (!prefix_caching_) return 0;
        const auto n_full = static_cast<std::int64_t>(tokens.size()) / block_size_;
        q.blocks.reserve(static_cast<std::size_t>(n_full));
        prefix_index::key_type parent = prefix_index::root_key;
        for (std::int64_t i = 0; i < n_full; ++i) {
            const std::int32_t b = index_.find(parent, block_tokens(tokens, i));
            if (b < 0) break;
            hold_block(b);
            q.blocks.push_back(b);
            parent = index_.key(b);
        }
        const auto n = static_cast<std::int64_t>(q.blocks.size());
        q.size = n * block_size_;
        q.n_published = n;
        q.published_key = parent;
        prefix_hits_ += n;
        return q.size;
    }

    // What attach_prefix(s, tokens) would attach, without attaching or counting anything: the
    // positions, and how many of those blocks are cached (unreferenced: attaching them takes them
    // out of n_free_blocks()). Lets a scheduler decide whether a request fits before it attaches.
    struct prefix_match {
        std::int64_t positions = 0;
        std::int64_t cached_blocks = 0;
    };
    prefix_match match_prefix(std::span<const token_id> tokens) const {
        prefix_match m;
        if (!prefix_caching_) return m;
        const auto n_full = static_cast<std::int64_t>(tokens.size()) / block_size_;
        prefix_index::key_type parent = prefix_index::root_key;
        for (std::int64_t i = 0; i < n_full; ++i) {
            const std::int32_t b = index_.find(parent, block_tokens(tokens, i));
            if (b < 0) break;
            m.positions += block_size_;
            if (refcount_[static_cast<std::size_t>(b)] == 0) ++m.cached_blocks;
            parent = index_.key(b);
        }
        return m;
    }

    // Registers the full blocks among positions [0, tokens.size()) of s, whose keys and values are
    // written, under (the parent block's key, their tokens). A block identical to a registered one
    // stays unregistered (the registered one is kept). Blocks walked by an earlier call are skipped
    // unless a truncate() went below them. No-op with prefix caching off.
    void publish(seq_id s, std::span<const token_id> tokens) {
        sequence& q = at(s, "publish");
        if (static_cast<std::int64_t>(tokens.size()) > q.size)
            throw invalid_argument_error(std::string(kind_) + ": publish: " + std::to_string(tokens.size()) +
                                         " tokens for sequence " + std::to_string(s) + ", which holds " +
                                         std::to_string(q.size) + " positions (expected at most that many)");
        if (!prefix_caching_) return;
        const auto n_full = static_cast<std::int64_t>(tokens.size()) / block_size_;
        for (std::int64_t i = q.n_published; i < n_full; ++i) {
            const std::int32_t b = q.blocks[static_cast<std::size_t>(i)];
            const std::span<const token_id> t = block_tokens(tokens, i);
            if (index_.registered(b)) {
                // Its parent key may differ from ours after an eviction (it was registered after a
                // block identical to ours, now gone); the contents are the same, only tokens can differ.
                if (!index_.same_tokens(b, t))
                    throw invalid_argument_error(std::string(kind_) + ": publish: sequence " + std::to_string(s) +
                                                 ": the tokens at positions [" + std::to_string(i * block_size_) +
                                                 ", " + std::to_string((i + 1) * block_size_) +
                                                 ") differ from those its block " + std::to_string(b) +
                                                 " was registered with");
                q.published_key = index_.key(b);
            } else if (const std::int32_t e = index_.find(q.published_key, t); e >= 0) {
                q.published_key = index_.key(e);
            } else {
                q.published_key = index_.insert(b, q.published_key, t);
            }
            q.n_published = i + 1;
        }
    }

    // ---- statistics

    std::int64_t block_size() const noexcept { return block_size_; }
    std::int64_t n_blocks() const noexcept { return n_blocks_; }
    bool prefix_caching() const noexcept { return prefix_caching_; }
    std::int64_t n_used_blocks() const noexcept { return n_used_; }
    std::int64_t n_cached_blocks() const noexcept { return n_cached_; }
    std::int64_t n_free_blocks() const noexcept { return n_blocks_ - n_used_; }  // free + cached
    std::int64_t peak_used_blocks() const noexcept { return peak_used_; }
    std::int64_t prefix_hit_blocks() const noexcept { return prefix_hits_; }
    std::int64_t n_registered_blocks() const noexcept { return index_.size(); }
    std::int64_t sequence_blocks(seq_id s) const {
        return static_cast<std::int64_t>(at(s, "sequence_blocks").blocks.size());
    }
    // s's block table: entry i is the pool block holding positions [i * block_size, (i + 1) * block_size).
    std::span<const std::int32_t> block_table(seq_id s) const { return at(s, "block_table").blocks; }
    // References to pool block b (0..n_blocks-1): sequences holding it.
    std::int32_t ref_count(std::int32_t b) const noexcept { return refcount_[static_cast<std::size_t>(b)]; }
    std::int64_t blocks_per_slab() const noexcept { return blocks_per_slab_; }
    std::int64_t kv_dim() const noexcept { return kv_dim_; }
    std::size_t block_bytes() const noexcept { return 2 * static_cast<std::size_t>(half_elements_) * sizeof(Element); }
    std::size_t bytes() const noexcept { return bytes_; }
    std::size_t bytes_in_use() const noexcept { return static_cast<std::size_t>(n_used_) * block_bytes(); }

private:
    struct sequence {
        std::vector<std::int32_t> blocks;  // the block table
        std::int64_t size = 0;             // positions held; blocks.size() == ceil(size / block_size)
        std::int64_t n_published = 0;      // leading blocks publish() (or attach_prefix) has walked
        prefix_index::key_type published_key = prefix_index::root_key;  // the key after them
        bool live = false;
    };

    static std::string pool_remedy() {
        return std::string("use fewer blocks (n_blocks, --ctx-size x --parallel)") +
               (std::is_same_v<Element, block_q8_0> ? "" : ", a q8_0 pool (--cache-type q8_0)") +
               " or raise the limit (max_bytes)";
    }

    // s's state, or invalid_argument_error naming the call.
    const sequence& at(seq_id s, const char* call) const {
        if (!contains(s))
            throw invalid_argument_error(std::string(kind_) + ": " + call + ": no sequence " + std::to_string(s) +
                                         " (never created, or released)");
        return seqs_[static_cast<std::size_t>(s)];
    }
    sequence& at(seq_id s, const char* call) { return const_cast<sequence&>(std::as_const(*this).at(s, call)); }

    std::int64_t blocks_for(std::int64_t n_positions) const noexcept {
        return (n_positions + block_size_ - 1) / block_size_;
    }

    // Whether writing past q.size must first copy its partly filled last block.
    bool must_copy_last(const sequence& q) const noexcept {
        if (q.size % block_size_ == 0) return false;
        const std::int32_t b = q.blocks.back();
        return refcount_[static_cast<std::size_t>(b)] > 1 || index_.registered(b);
    }

    std::span<const token_id> block_tokens(std::span<const token_id> tokens, std::int64_t i) const noexcept {
        return tokens.subspan(static_cast<std::size_t>(i * block_size_), static_cast<std::size_t>(block_size_));
    }

    Element* row(seq_id s, std::int64_t layer, std::int64_t pos) const noexcept {
        assert(contains(s) && pos >= 0 && pos < seqs_[static_cast<std::size_t>(s)].size && layer >= 0 &&
               layer < n_layers_);
        const std::int64_t i = block_shift_ >= 0 ? pos >> block_shift_ : pos / block_size_;
        const std::int32_t b = seqs_[static_cast<std::size_t>(s)].blocks[static_cast<std::size_t>(i)];
        return base_[static_cast<std::size_t>(b)] + (layer * block_size_ + (pos - i * block_size_)) * row_elements_;
    }

    // Copies the first n_rows rows of every layer, keys and values, from block `from` to block `to`.
    void copy_rows(std::int32_t from, std::int32_t to, std::int64_t n_rows) noexcept {
        const Element* src = base_[static_cast<std::size_t>(from)];
        Element* dst = base_[static_cast<std::size_t>(to)];
        const auto n = static_cast<std::size_t>(n_rows * row_elements_) * sizeof(Element);
        for (std::int64_t half = 0; half < 2; ++half)
            for (std::int64_t l = 0; l < n_layers_; ++l) {
                const std::int64_t off = half * half_elements_ + l * block_size_ * row_elements_;
                std::memcpy(dst + off, src + off, n);
            }
    }

    // Allocates the slabs of the never-used blocks that the next `count` take_block() calls will
    // hand out (freed and cached blocks already have memory). The only step of an allocation that can fail.
    void prepare_blocks(std::int64_t count) {
        const std::int64_t fresh = std::min(
            count - std::min<std::int64_t>(count, static_cast<std::int64_t>(free_.size())), n_blocks_ - n_touched_);
        if (fresh <= 0) return;
        for (std::int64_t slab = n_touched_ / blocks_per_slab_; slab <= (n_touched_ + fresh - 1) / blocks_per_slab_;
             ++slab) {
            huge_page_array<Element>& a = slabs_[static_cast<std::size_t>(slab)];
            if (a.size() != 0) continue;
            const std::int64_t first = slab * blocks_per_slab_;
            const std::int64_t n = std::min(blocks_per_slab_, n_blocks_ - first);
            const auto n_elements = static_cast<std::size_t>(n * 2 * half_elements_);
            a = allocate_or_throw(std::string(kind_) + ": a slab of " + std::to_string(n) + " blocks",
                                  n_elements * sizeof(Element), pool_remedy(),
                                  [&] { return huge_page_array<Element>(n_elements); });
            for (std::int64_t b = 0; b < n; ++b)
                base_[static_cast<std::size_t>(first + b)] = a.data() + b * 2 * half_elements_;
            bytes_ += a.size() * sizeof(Element);
        }
    }

    // A block with refcount 1: the most recently freed, else the lowest never used (its slab
    // prepared), else the least recently used cached block, unregistered.
    std::int32_t take_block() noexcept {
        std::int32_t b;
        if (!free_.empty()) {
            b = free_.back();
            free_.pop_back();
        } else if (n_touched_ < n_blocks_) {
            b = static_cast<std::int32_t>(n_touched_++);
        } else {
            b = lru_next_[sentinel_index()];
            assert(b != sentinel());
            lru_unlink(b);
            index_.erase(b);
            --n_cached_;
        }
        assert(base_[static_cast<std::size_t>(b)] != nullptr);
        refcount_[static_cast<std::size_t>(b)] = 1;
        peak_used_ = std::max(peak_used_, ++n_used_);
        return b;
    }

    // One more reference to a used or cached block (a cached one leaves the LRU).
    void hold_block(std::int32_t b) noexcept {
        if (refcount_[static_cast<std::size_t>(b)]++ == 0) {
            lru_unlink(b);
            --n_cached_;
            peak_used_ = std::max(peak_used_, ++n_used_);
        }
    }

    // One reference less; at 0 the block is cached (newest in the LRU) if registered, else free.
    void drop_block(std::int32_t b) noexcept {
        if (--refcount_[static_cast<std::size_t>(b)] != 0) return;
        --n_used_;
        if (index_.registered(b)) {
            lru_push_newest(b);
            ++n_cached_;
        } else {
            free_.push_back(b);  // reserved to n_blocks: never allocates
        }
    }

    // The LRU of cached blocks: a circular list through lru_prev_/lru_next_ with a sentinel at
    // index n_blocks; lru_next_[sentinel] is the oldest, lru_prev_[sentinel] the newest.
    std::int32_t sentinel() const noexcept { return static_cast<std::int32_t>(n_blocks_); }
    std::size_t sentinel_index() const noexcept { return static_cast<std::size_t>(n_blocks_); }
    void lru_unlink(std::int32_t b) noexcept {
        const auto i = static_cast<std::size_t>(b);
        lru_next_[static_cast<std::size_t>(lru_prev_[i])] = lru_next_[i];
        lru_prev_[static_cast<std::size_t>(lru_next_[i])] = lru_prev_[i];
    }
    void lru_push_newest(std::int32_t b) noexcept {
        const auto i = static_cast<std::size_t>(b);
        const std::int32_t last = lru_prev_[sentinel_index()];
        lru_prev_[i] = last;
        lru_next_[i] = sentinel();
        lru_next_[static_cast<std::size_t>(last)] = b;
        lru_prev_[sentinel_index()] = b;
    }

    const char* kind_;
    std::int64_t n_layers_;
    std::int64_t kv_dim_;
    std::int64_t block_size_;
    std::int64_t n_blocks_;
    std::int64_t max_seq_len_;
    bool prefix_caching_;
    std::int64_t row_elements_ = 0;   // kv_dim / values_per_element
    std::int64_t half_elements_ = 0;  // n_layers * block_size * row_elements: a block's keys (or values)
    int block_shift_ = -1;            // log2(block_size) when it is a power of two
    std::int64_t blocks_per_slab_ = 1;

    std::vector<huge_page_array<Element>> slabs_;    // (ceil(n_blocks / blocks_per_slab)): empty until first used
    std::vector<Element*> base_;                     // (n_blocks): block b's keys; its values at + half_elements_
    std::vector<std::int32_t> refcount_;             // (n_blocks)
    std::vector<std::int32_t> free_;                 // freed blocks, most recently freed last
    std::int64_t n_touched_ = 0;                     // blocks [0, n_touched_) have been handed out at least once
    std::vector<std::int32_t> lru_prev_, lru_next_;  // (n_blocks + 1)
    prefix_index index_;                             // empty with prefix caching off
    std::vector<sequence> seqs_;                     // indexed by seq_id
    std::vector<seq_id> free_ids_;                   // released ids, reused last released first

    std::int64_t n_used_ = 0;
    std::int64_t n_cached_ = 0;
    std::int64_t peak_used_ = 0;
    std::int64_t prefix_hits_ = 0;
    std::size_t bytes_ = 0;
};

}  // namespace nexttok::detail

// Key and value rows of one sequence, laid out (layer, position, n_kv_heads * head_dim), allocated
// once. Shared by contiguous_kv_cache (kv_cache and no_cache, which differ only in what generate()
// may assume) and by q8_0_kv_cache, whose Element is a block of 32 values (a row is kv_dim / 32
// blocks). Internal.
#pragma once

#include <nexttok/cache/kv_planner.hpp>
#include <nexttok/cache/kv_shape.hpp>
#include <nexttok/detail/huge_pages.hpp>
#include <nexttok/detail/memory_limit.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tensor/quant_blocks.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace nexttok::detail {

template <class Element>
class contiguous_storage {
public:
    // Values per Element: 32 for a q8_0 block, 1 for a scalar.
    static constexpr std::int64_t values_per_element = std::is_same_v<Element, block_q8_0> ? block_q8_0::block_size : 1;

    // max_bytes: the most the keys and values may take (0: the machine's physical memory); checked
    // before allocating, so a context the memory cannot hold is a resource_error, not a crash.
    contiguous_storage(const kv_shape& c, std::int64_t capacity, const char* kind, std::size_t max_bytes = 0)
            : kind_(kind),
              n_layers_(c.n_layers),
              capacity_(capacity == 0 ? c.max_seq_len : capacity),
              kv_dim_(c.kv_dim()),
              row_elements_(kv_dim_ / values_per_element) {
        if (capacity == 0 && capacity_ > max_capacity)
            throw invalid_argument_error(std::string(kind_) + ": the model's context length of " +
                                         std::to_string(capacity_) + " positions (the default capacity) is over " +
                                         std::to_string(max_capacity) + "; pass a smaller capacity (--ctx-size)");
        if (capacity_ <= 0 || capacity_ > max_capacity)
            throw invalid_argument_error(std::string(kind_) + ": capacity " + std::to_string(capacity_) +
                                         " positions (expected 1..16777216)");
        if (kv_dim_ % values_per_element != 0)
            throw invalid_argument_error(std::string(kind_) + ": the model's key and value rows have " +
                                         std::to_string(kv_dim_) +
                                         " values (n_kv_heads x head_dim), expected a multiple of " +
                                         std::to_string(values_per_element) + " (whole blocks)");
        const kv_format format = kv_format_of<Element>();
        // The planner's figure (a contiguous cache is a pool of blocks of one position).
        const std::size_t need = kv_pool_bytes(c, format, 1, capacity_);
        const std::string what = std::string(kind_) + ": keys and values of " + std::to_string(capacity_) +
                                 " positions x " + std::to_string(c.n_layers) + " layers x " +
                                 std::to_string(c.n_kv_heads) + " KV heads x head size " + std::to_string(c.head_dim) +
                                 " in " + to_string(format);
        const std::string remedy = std::string("lower the context size (the capacity, --ctx-size)") +
                                   (format == kv_format::q8_0 ? "" : ", use a q8_0 cache (--cache-type q8_0)") +
                                   " or raise the limit (max_bytes)";
        check_memory_limit(what, need, max_bytes, remedy);
        const std::size_t n = static_cast<std::size_t>(n_layers_ * capacity_ * row_elements_);
        allocate_or_throw(what, need, remedy, [&] {
            k_ = huge_page_array<Element>(n);
            v_ = huge_page_array<Element>(n);
        });
    }

    std::int64_t capacity() const noexcept { return capacity_; }
    std::int64_t size() const noexcept { return size_; }
    std::size_t bytes() const noexcept { return (k_.size() + v_.size()) * sizeof(Element); }
    std::int64_t kv_dim() const noexcept { return kv_dim_; }

    Element* key(std::int64_t layer, std::int64_t pos) noexcept { return k_.data() + offset(layer, pos); }
    Element* value(std::int64_t layer, std::int64_t pos) noexcept { return v_.data() + offset(layer, pos); }
    const Element* key(std::int64_t layer, std::int64_t pos) const noexcept { return k_.data() + offset(layer, pos); }
    const Element* value(std::int64_t layer, std::int64_t pos) const noexcept { return v_.data() + offset(layer, pos); }

    void reserve(std::int64_t n_positions) {
        if (n_positions > capacity_)
            throw cache_full_error(std::string(kind_) + ": " + std::to_string(n_positions) +
                                   " positions do not fit in its capacity of " + std::to_string(capacity_));
        if (n_positions > size_) size_ = n_positions;
    }
    void clear() noexcept { size_ = 0; }
    // Forgets positions >= n_positions (rewinds the sequence).
    void truncate(std::int64_t n_positions) noexcept {
        if (n_positions < size_) size_ = n_positions < 0 ? 0 : n_positions;
    }
    // Forgets positions [first, first + n_positions) and moves the rows of every later position
    // down by n_positions, in every layer; size() shrinks by n_positions. The rows only move: a
    // context shift (decoder::shift_context) re-rotates the moved keys afterwards. Throws
    // invalid_argument_error unless 0 <= first and first + n_positions <= size().
    void discard(std::int64_t first, std::int64_t n_positions) {
        if (first < 0 || n_positions < 0 || first > size_ || n_positions > size_ - first)
            throw invalid_argument_error(std::string(kind_) + ": cannot discard positions [" + std::to_string(first) +
                                         ", " + std::to_string(first + n_positions) + ") of the " +
                                         std::to_string(size_) +
                                         " it holds (expected 0 <= first <= first + count <= size)");
        if (n_positions == 0) return;
        const std::int64_t n_moved = size_ - first - n_positions;
        const std::size_t moved_bytes = static_cast<std::size_t>(n_moved * row_elements_) * sizeof(Element);
        for (std::int64_t l = 0; l < n_layers_; ++l) {
            std::memmove(key(l, first), key(l, first + n_positions), moved_bytes);
            std::memmove(value(l, first), value(l, first + n_positions), moved_bytes);
        }
        size_ -= n_positions;
    }

private:
    static constexpr std::int64_t max_capacity = std::int64_t{1} << 24;

    std::size_t offset(std::int64_t layer, std::int64_t pos) const noexcept {
        return static_cast<std::size_t>((layer * capacity_ + pos) * row_elements_);
    }

    const char* kind_;
    std::int64_t n_layers_;
    std::int64_t capacity_;
    std::int64_t kv_dim_;
    std::int64_t row_elements_;  // kv_dim / values_per_element
    std::int64_t size_ = 0;
    // (n_layers, capacity, row_elements) each, in huge pages where possible: attention reads a
    // head's slice of every cached row, a TLB miss per row with 4 KiB pages.
    huge_page_array<Element> k_;
    huge_page_array<Element> v_;
};

}  // namespace nexttok::detail

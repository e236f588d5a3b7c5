// Key and value rows of one sequence, laid out (layer, position, n_kv_heads * head_dim), allocated
// once. Shared by kv_cache and no_cache, which differ only in what generate() may assume. Internal.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/model/model_config.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nexttok::detail {

template <class Scalar>
class contiguous_storage {
public:
    contiguous_storage(const model_config& c, std::int64_t capacity, const char* kind)
        : kind_(kind), n_layers_(c.n_layers), capacity_(capacity == 0 ? c.max_seq_len : capacity), kv_dim_(c.kv_dim()) {
        if (capacity_ <= 0 || capacity_ > (std::int64_t{1} << 24))
            throw invalid_argument_error(std::string(kind_) + ": capacity " + std::to_string(capacity_) + " positions (expected 1..16777216)");
        const std::size_t n = static_cast<std::size_t>(n_layers_ * capacity_ * kv_dim_);
        k_.resize(n);
        v_.resize(n);
    }

    std::int64_t capacity() const noexcept { return capacity_; }
    std::int64_t size() const noexcept { return size_; }
    std::size_t bytes() const noexcept { return (k_.size() + v_.size()) * sizeof(Scalar); }
    std::int64_t kv_dim() const noexcept { return kv_dim_; }

    Scalar* key(std::int64_t layer, std::int64_t pos) noexcept { return k_.data() + offset(layer, pos); }
    Scalar* value(std::int64_t layer, std::int64_t pos) noexcept { return v_.data() + offset(layer, pos); }
    const Scalar* key(std::int64_t layer, std::int64_t pos) const noexcept { return k_.data() + offset(layer, pos); }
    const Scalar* value(std::int64_t layer, std::int64_t pos) const noexcept { return v_.data() + offset(layer, pos); }

    void reserve(std::int64_t n_positions) {
        if (n_positions > capacity_)
            throw cache_full_error(std::string(kind_) + ": " + std::to_string(n_positions) + " positions do not fit in its capacity of " + std::to_string(capacity_));
        if (n_positions > size_) size_ = n_positions;
    }
    void clear() noexcept { size_ = 0; }
    // Forgets positions >= n_positions (rewinds the sequence).
    void truncate(std::int64_t n_positions) noexcept {
        if (n_positions < size_) size_ = n_positions < 0 ? 0 : n_positions;
    }

private:
    std::size_t offset(std::int64_t layer, std::int64_t pos) const noexcept {
        return static_cast<std::size_t>((layer * capacity_ + pos) * kv_dim_);
    }

    const char* kind_;
    std::int64_t n_layers_;
    std::int64_t capacity_;
    std::int64_t kv_dim_;
    std::int64_t size_ = 0;
    std::vector<Scalar> k_;  // (n_layers, capacity, kv_dim)
    std::vector<Scalar> v_;  // (n_layers, capacity, kv_dim)
};

}  // namespace nexttok::detail

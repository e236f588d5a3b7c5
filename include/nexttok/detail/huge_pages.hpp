// Transparent huge pages for the large read-only buffers that decode streams through: weights
// built in memory and mapped model files. Decode reads every weight once per token; with 4 KiB
// pages that is a TLB miss every 4 KiB (a two-level page walk in a virtual machine), which
// costs a quarter or more of the memory bandwidth with quantized rows. 2 MiB pages remove it.
// Advice only: where the kernel does not support it (or not for file mappings), nothing changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace nexttok::detail {

inline constexpr std::size_t huge_page_size = std::size_t{1} << 21;

// Asks for huge pages on the whole 2 MiB pages inside [p, p + size). Never fails.
inline void advise_huge_pages(const void* p, std::size_t size) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const auto begin = (reinterpret_cast<std::uintptr_t>(p) + huge_page_size - 1) & ~(huge_page_size - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(p) + size) & ~(huge_page_size - 1);
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)p;
    (void)size;
#endif
}

// The alignment for a buffer of `size` bytes: 2 MiB from 4 MiB up (so that it can be made of
// huge pages), else 64 (a cache line).
inline constexpr std::size_t buffer_alignment(std::size_t size) noexcept {
    return size >= 2 * huge_page_size ? huge_page_size : 64;
}

// A buffer of `size` bytes (at least one is allocated), aligned by buffer_alignment(size) and
// advised into huge pages before anything is written to it.
inline std::shared_ptr<std::byte[]> allocate_buffer(std::size_t size) {
    const std::align_val_t align{buffer_alignment(size)};
    std::shared_ptr<std::byte[]> b(new (align) std::byte[size == 0 ? 1 : size],
                                   [align](std::byte* p) { ::operator delete[](p, align); });
    advise_huge_pages(b.get(), size);
    return b;
}

// n zeroed elements of a trivially copyable T in a buffer from allocate_buffer (huge pages for a
// large one): storage that is read through every token, such as a KV cache. Copies are deep.
template <class T>
class huge_page_array {
    static_assert(std::is_trivially_copyable_v<T>);

public:
    huge_page_array() = default;
    explicit huge_page_array(std::size_t n) : n_(n), buffer_(allocate_buffer(n * sizeof(T))) {
        std::memset(buffer_.get(), 0, n * sizeof(T));
    }
    huge_page_array(const huge_page_array& o) : huge_page_array(o.n_) {
        std::memcpy(buffer_.get(), o.buffer_.get(), n_ * sizeof(T));
    }
    huge_page_array& operator=(const huge_page_array& o) {
        if (this == &o) return *this;
        if (n_ != o.n_) *this = huge_page_array(o.n_);
        std::memcpy(buffer_.get(), o.buffer_.get(), n_ * sizeof(T));
        return *this;
    }
    huge_page_array(huge_page_array&& o) noexcept : n_(std::exchange(o.n_, 0)), buffer_(std::move(o.buffer_)) {}
    huge_page_array& operator=(huge_page_array&& o) noexcept {
        if (this != &o) {
            n_ = std::exchange(o.n_, 0);
            buffer_ = std::move(o.buffer_);
        }
        return *this;
    }

    std::size_t size() const noexcept { return n_; }
    T* data() noexcept { return reinterpret_cast<T*>(buffer_.get()); }
    const T* data() const noexcept { return reinterpret_cast<const T*>(buffer_.get()); }

private:
    std::size_t n_ = 0;
    std::shared_ptr<std::byte[]> buffer_;  // owned alone: copies above are deep
};

}  // namespace nexttok::detail

// Transparent huge pages for the large read-only buffers that decode streams through: weights
// built in memory and mapped model files. Decode reads every weight once per token; with 4 KiB
// pages that is a TLB miss every 4 KiB (a two-level page walk in a virtual machine), which
// costs a quarter or more of the memory bandwidth with quantized rows. 2 MiB pages remove it.
// Advice only: where the kernel does not support it (or not for file mappings), nothing changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

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

}  // namespace nexttok::detail

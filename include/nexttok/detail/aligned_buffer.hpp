// std::vector storage aligned to a cache line (64 bytes): for activation rows that SIMD kernels
// load whole vectors from. A large std::vector<float> from malloc starts 16 bytes into a page,
// so every 64-byte load of it would straddle two cache lines.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace nexttok::detail {

template <class T>
struct cache_line_allocator {
    using value_type = T;
    static constexpr std::align_val_t alignment{64};

    cache_line_allocator() noexcept = default;
    template <class U>
    cache_line_allocator(const cache_line_allocator<U>&) noexcept {}

    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment)); }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, alignment); }

    template <class U>
    bool operator==(const cache_line_allocator<U>&) const noexcept {
        return true;
    }
};

template <class T>
using aligned_vector = std::vector<T, cache_line_allocator<T>>;

}  // namespace nexttok::detail

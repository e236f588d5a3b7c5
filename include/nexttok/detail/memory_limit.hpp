// Memory limits for the buffers that scale with a context or a pool (KV caches, the block pool,
// the decoder's per-position scratch): the bytes are checked against a limit before anything is
// allocated, and a std::bad_alloc while allocating becomes the same resource_error, so a context
// size the machine cannot hold is an error that says what to lower, not a crash or an OOM kill
// half-way through a prompt. Internal.
#pragma once

#include <nexttok/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace nexttok::detail {

// The default limit: the machine's physical memory (sysconf(_SC_PHYS_PAGES) * page size). Not
// the free memory, which the page cache and other processes make meaningless as a bound; a
// buffer larger than all of RAM can only be backed by swap or die to the OOM killer, and with
// overcommit its allocation "succeeds" and fails at the first touch, so it is refused up front.
// Where the system does not say, no limit (SIZE_MAX).
inline std::size_t physical_memory_bytes() noexcept {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    std::size_t bytes = 0;
    if (pages > 0 && page > 0 &&
        !__builtin_mul_overflow(static_cast<std::size_t>(pages), static_cast<std::size_t>(page), &bytes))
        return bytes;
#endif
    return SIZE_MAX;
}

// max_bytes as given by an option: 0 means the default, the physical memory.
inline std::size_t effective_memory_limit(std::size_t max_bytes) noexcept {
    return max_bytes == 0 ? physical_memory_bytes() : max_bytes;
}

// "1073741824 bytes (1.00 GiB)".
inline std::string describe_bytes(std::size_t bytes) {
    static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 6) v /= 1024.0, ++u;
    char scaled[32];
    std::snprintf(scaled, sizeof scaled, "%.2f %s", v, units[u]);
    return std::to_string(bytes) + " bytes (" + scaled + ")";
}

// The error for `what` (e.g. "kv_cache: 4096 positions x 32 layers x 8 KV heads x head size 128 in
// f16") needing `bytes` over `limit`, with the advice `remedy`.
inline resource_error memory_limit_error(const std::string& what, std::size_t bytes, std::size_t limit,
                                         const std::string& remedy) {
    return resource_error(what + " need " + describe_bytes(bytes) + ", over the memory limit of " +
                          describe_bytes(limit) + "; " + remedy);
}

// Throws memory_limit_error unless bytes <= the limit (0: physical memory).
inline void check_memory_limit(const std::string& what, std::size_t bytes, std::size_t max_bytes,
                               const std::string& remedy) {
    const std::size_t limit = effective_memory_limit(max_bytes);
    if (bytes > limit) throw memory_limit_error(what, bytes, limit, remedy);
}

// alloc() with a std::bad_alloc turned into the resource_error for `what` needing `bytes`.
template <class Alloc>
decltype(auto) allocate_or_throw(const std::string& what, std::size_t bytes, const std::string& remedy, Alloc&& alloc) {
    try {
        return alloc();
    } catch (const std::bad_alloc&) {
        throw resource_error(what + " need " + describe_bytes(bytes) + ", which the system refused to allocate; " +
                             remedy);
    }
}

// n * m, or SIZE_MAX when it overflows (which no limit admits).
inline std::size_t saturating_mul(std::size_t n, std::size_t m) noexcept {
    std::size_t r;
    return __builtin_mul_overflow(n, m, &r) ? SIZE_MAX : r;
}

}  // namespace nexttok::detail

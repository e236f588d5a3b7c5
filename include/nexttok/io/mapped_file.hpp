// A read-only memory mapping of a whole file. Owns the mapping; move-only (a copy would have to map
// again). The bytes stay valid while the object lives; views into them (tensors, strings) are
// non-owning and must not outlive it. Thread-safe for concurrent reads.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <utility>

namespace nexttok {

class mapped_file {
public:
    mapped_file() = default;

    // Maps the whole file; io_error naming the file when it cannot be opened, read or mapped.
    NEXTTOK_DECL explicit mapped_file(const std::filesystem::path& path);

    mapped_file(const mapped_file&) = delete;
    mapped_file& operator=(const mapped_file&) = delete;
    mapped_file(mapped_file&& other) noexcept { swap(other); }
    mapped_file& operator=(mapped_file&& other) noexcept {
        if (this != &other) {
            mapped_file tmp(std::move(other));
            swap(tmp);
        }
        return *this;
    }
    NEXTTOK_DECL ~mapped_file();

    std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
    const std::byte* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    const std::filesystem::path& path() const noexcept { return path_; }
    // The file name as used in error messages.
    std::string name() const { return path_.filename().string(); }

private:
    void swap(mapped_file& other) noexcept {
        std::swap(path_, other.path_);
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
    }

    std::filesystem::path path_;
    const std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/io/impl/mapped_file.ipp>
#endif

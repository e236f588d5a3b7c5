// A read-only memory mapping of a whole file. Owns the mapping; move-only (a copy would have to map
// again). The bytes stay valid while the object lives; views into them (tensors, strings) are
// non-owning and must not outlive it. Thread-safe for concurrent reads.
#pragma once

#include <nexttok/detail/huge_pages.hpp>
#include <nexttok/error.hpp>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nexttok {

class mapped_file {
public:
    mapped_file() = default;

    explicit mapped_file(const std::filesystem::path& path) : path_(path) {
        const std::string name = path.string();
        const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw io_error(name + ": cannot open: " + std::strerror(errno));
        struct stat st {};
        if (::fstat(fd, &st) != 0) {
            const int e = errno;
            ::close(fd);
            throw io_error(name + ": cannot stat: " + std::strerror(e));
        }
        if (!S_ISREG(st.st_mode)) {
            ::close(fd);
            throw io_error(name + ": not a regular file");
        }
        size_ = static_cast<std::size_t>(st.st_size);
        if (size_ > 0) {
            void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) {
                const int e = errno;
                ::close(fd);
                throw io_error(name + ": cannot map " + std::to_string(size_) + " bytes: " + std::strerror(e));
            }
            data_ = static_cast<const std::byte*>(p);
            detail::advise_huge_pages(data_, size_);  // where the kernel maps file pages as huge ones
        }
        ::close(fd);  // the mapping keeps the file alive
    }

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
    ~mapped_file() {
        if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
    }

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

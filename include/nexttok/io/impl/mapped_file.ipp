// The definitions of mapped_file (mapped_file.hpp): open, map and unmap with the POSIX calls.
#pragma once

#include <nexttok/detail/huge_pages.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/mapped_file.hpp>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nexttok {

NEXTTOK_DECL mapped_file::mapped_file(const std::filesystem::path& path) : path_(path) {
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

NEXTTOK_DECL mapped_file::~mapped_file() {
    if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace nexttok

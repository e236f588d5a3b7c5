// Makes malformed copies of the shared model files in a temporary directory: read the bytes,
// patch or truncate them, write them under a name of the test's choosing.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace nexttok::test {

using bytes = std::vector<char>;

inline bytes read_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path.string());
    return bytes(std::istreambuf_iterator<char>(in), {});
}

// A fresh directory per test process, removed at exit.
class temp_dir {
public:
    temp_dir() {
        path_ = std::filesystem::temp_directory_path() /
                ("nexttok-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
        std::filesystem::create_directories(path_);
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    std::filesystem::path write(const std::string& name, const bytes& content) const {
        const auto p = path_ / name;
        std::ofstream out(p, std::ios::binary);
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        return p;
    }
    const std::filesystem::path& path() const { return path_; }

private:
    static int& counter() {
        static int c = 0;
        return c;
    }
    std::filesystem::path path_;
};

// Offset of the first occurrence of `needle` in `b`, or throws.
inline std::size_t find(const bytes& b, std::string_view needle, std::size_t from = 0) {
    auto it = std::search(b.begin() + static_cast<std::ptrdiff_t>(from), b.end(), needle.begin(), needle.end());
    if (it == b.end()) throw std::runtime_error("pattern not found: " + std::string(needle));
    return static_cast<std::size_t>(it - b.begin());
}

template <class T>
void put(bytes& b, std::size_t offset, T value) {
    std::memcpy(b.data() + offset, &value, sizeof(T));
}

template <class T>
T get(const bytes& b, std::size_t offset) {
    T v;
    std::memcpy(&v, b.data() + offset, sizeof(T));
    return v;
}

}  // namespace nexttok::test

// What every fuzz target shares: a per-process scratch directory where the input bytes become the
// files the readers open (every reader maps a path), and the location of the shared test data.
#pragma once

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include <unistd.h>

namespace nexttok::fuzz {

// One directory per process (libFuzzer's -fork/-jobs workers each get their own), in /dev/shm
// when it exists so that the writes per execution stay in memory. libFuzzer leaves with _Exit
// after a crash or a timeout, so a directory is not always removed at exit: each process removes
// those of processes that are gone when it starts.
inline const std::filesystem::path& scratch_dir() {
    static const std::filesystem::path dir = [] {
        const std::filesystem::path base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
        const std::string prefix = "nexttok-fuzz-";
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(base, ec)) {
            const std::string name = entry.path().filename().string();
            if (name.rfind(prefix, 0) != 0) continue;
            const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
            if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
                std::filesystem::remove_all(entry.path(), ec);
        }
        const std::filesystem::path path = base / (prefix + std::to_string(::getpid()));
        std::filesystem::create_directories(path, ec);
        if (ec) {
            std::fprintf(stderr, "%s: %s\n", path.c_str(), ec.message().c_str());
            std::abort();
        }
        std::atexit([] {
            std::error_code ignored;
            std::filesystem::remove_all(scratch_dir(), ignored);
        });
        return path;
    }();
    return dir;
}

// Writes `bytes` to `relative` inside the scratch directory (replacing it) and returns its path.
inline std::filesystem::path write_file(const std::filesystem::path& relative, std::string_view bytes) {
    const std::filesystem::path path = scratch_dir() / relative;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
        std::perror(path.c_str());
        std::abort();
    }
    return path;
}

inline std::string_view as_chars(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// The shared data folder: $NEXTTOK_DATA when set, else the one the build was configured with.
inline std::filesystem::path data_dir() {
    if (const char* env = std::getenv("NEXTTOK_DATA"); env != nullptr && *env != '\0') return env;
    return NEXTTOK_FUZZ_DATA_DIR;
}

}  // namespace nexttok::fuzz

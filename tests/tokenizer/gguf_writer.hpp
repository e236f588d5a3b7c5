// Writes small GGUF files (metadata only, no tensors) for the loader tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace nexttok::test {

// Writes GGUF v3 metadata: magic, version, tensor count 0, then the key/value pairs.
class gguf_writer {
public:
    void u32(const std::string& key, std::uint32_t v) { scalar(key, 4, v); }
    void i32(const std::string& key, std::int32_t v) { scalar(key, 5, v); }
    void boolean(const std::string& key, bool v) { scalar(key, 7, static_cast<std::uint8_t>(v)); }
    void string(const std::string& key, const std::string& v) {
        begin(key, 8);
        put_string(v);
    }
    void strings(const std::string& key, const std::vector<std::string>& v) {
        begin_array(key, 8, v.size());
        for (const auto& s : v) put_string(s);
    }
    void f32s(const std::string& key, const std::vector<float>& v) {
        begin_array(key, 6, v.size());
        for (const float x : v) put(x);
    }
    void i32s(const std::string& key, const std::vector<std::int32_t>& v) {
        begin_array(key, 5, v.size());
        for (const std::int32_t x : v) put(x);
    }

    void save(const std::filesystem::path& path) const {
        std::string out;
        const auto append = [&](const auto& v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
        append(std::uint32_t{0x46554747});
        append(std::uint32_t{3});
        append(std::uint64_t{0});
        append(n_kv_);
        out += body_;
        std::ofstream(path, std::ios::binary).write(out.data(), static_cast<std::streamsize>(out.size()));
    }

private:
    template <class T>
    void put(T v) { body_.append(reinterpret_cast<const char*>(&v), sizeof v); }
    void put_string(const std::string& s) {
        put(std::uint64_t{s.size()});
        body_ += s;
    }
    void begin(const std::string& key, std::uint32_t type) {
        ++n_kv_;
        put_string(key);
        put(type);
    }
    template <class T>
    void scalar(const std::string& key, std::uint32_t type, T v) {
        begin(key, type);
        put(v);
    }
    void begin_array(const std::string& key, std::uint32_t element_type, std::size_t n) {
        begin(key, 9);
        put(element_type);
        put(std::uint64_t{n});
    }

    std::string body_;
    std::uint64_t n_kv_ = 0;
};

}  // namespace nexttok::test

// Writes safetensors files and Hugging Face directories for tests: the JSON header (built with
// nlohmann::json, padded to 8 bytes as the reference writer does) and the raw data.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace nexttok::test {

struct st_tensor {
    std::string name;
    std::string dtype = "F32";
    std::vector<std::uint64_t> shape;  // row-major, PyTorch order
    std::vector<char> data;
};

inline void write_safetensors(const std::filesystem::path& path, const std::vector<st_tensor>& tensors) {
    nlohmann::json header = nlohmann::json::object();
    header["__metadata__"] = {{"format", "pt"}};
    std::uint64_t offset = 0;
    for (const st_tensor& t : tensors) {
        header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.data.size()}}};
        offset += t.data.size();
    }
    std::string text = header.dump();
    while (text.size() % 8 != 0) text += ' ';
    std::ofstream out(path, std::ios::binary);
    const std::uint64_t n = text.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const st_tensor& t : tensors) out.write(t.data.data(), static_cast<std::streamsize>(t.data.size()));
}

inline void write_json(const std::filesystem::path& path, const nlohmann::json& j) {
    std::ofstream out(path);
    out << j.dump(2);
}

}  // namespace nexttok::test

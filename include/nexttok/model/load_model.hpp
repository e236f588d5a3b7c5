// Opens a model and picks the loader: a directory is a Hugging Face model (config.json +
// safetensors); a file is GGUF (magic "GGUF") or else a llama2.c checkpoint (read as its 28-byte
// header, which the loader validates).
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/model/gguf_loader.hpp>
#include <nexttok/model/hf_loader.hpp>
#include <nexttok/model/llama2c_loader.hpp>
#include <nexttok/model/load_options.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

namespace nexttok {

inline bool is_gguf_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw io_error(path.string() + ": cannot open");
    std::uint32_t magic = 0;
    in.read(reinterpret_cast<char*>(&magic), sizeof magic);
    return in.gcount() == sizeof magic && magic == gguf_magic;
}

// options: what the loader checks (load_options.hpp; by default the weights of models up to 2 GiB
// are scanned for NaN and inf).
inline std::shared_ptr<const model> load_model(const std::filesystem::path& path, const load_options& options = {}) {
    if (std::filesystem::is_directory(path)) return load_hf_model(path, options);
    if (is_gguf_file(path)) return load_gguf_model(path, options);
    try {
        return load_llama2c_model(path, options);
    } catch (const format_error& e) {
        throw format_error(std::string(e.what()) +
                           " (the file does not start with the GGUF magic, so it was read as a llama2.c checkpoint)");
    }
}

}  // namespace nexttok

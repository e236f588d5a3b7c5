// The definitions of load_model.hpp: the choice of the loader by the file's first bytes.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/model/gguf_loader.hpp>
#include <nexttok/model/hf_loader.hpp>
#include <nexttok/model/llama2c_loader.hpp>
#include <nexttok/model/load_model.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

namespace nexttok {

NEXTTOK_DECL bool is_gguf_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw io_error(path.string() + ": cannot open");
    std::uint32_t magic = 0;
    in.read(reinterpret_cast<char*>(&magic), sizeof magic);
    return in.gcount() == sizeof magic && magic == gguf_magic;
}

NEXTTOK_DECL std::shared_ptr<const model> load_model(const std::filesystem::path& path, const load_options& options) {
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

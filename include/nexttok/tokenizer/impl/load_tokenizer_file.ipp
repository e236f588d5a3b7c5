// The definitions of load_tokenizer_file.hpp.
#pragma once

#include <nexttok/tokenizer/load_tokenizer_file.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/tokenizer/gguf_vocab.hpp>
#include <nexttok/tokenizer/hf_tokenizer_file.hpp>
#include <nexttok/tokenizer/llama2c_tokenizer_file.hpp>
#include <nexttok/tokenizer/spm_model_file.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace nexttok {

NEXTTOK_DECL tokenizer load_tokenizer_file(const std::filesystem::path& path) {
    if (std::filesystem::is_directory(path)) {
        if (std::filesystem::exists(path / "tokenizer.json")) return load_hf_tokenizer(path / "tokenizer.json");
        if (std::filesystem::exists(path / "tokenizer.model")) return load_spm_tokenizer(path / "tokenizer.model");
        throw io_error(path.string() + ": neither tokenizer.json nor tokenizer.model is there");
    }
    const std::string name = path.filename().string();
    if (name.ends_with(".json")) return load_hf_tokenizer(path);
    if (name.ends_with(".model")) return load_spm_tokenizer(path);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw io_error(path.string() + ": cannot open");
    std::uint32_t magic = 0;
    in.read(reinterpret_cast<char*>(&magic), sizeof magic);
    if (in.gcount() == sizeof magic && magic == gguf_magic) return load_tokenizer(gguf_file(path));
    return load_llama2c_tokenizer(path);
}

}  // namespace nexttok

// One entry point for "the tokenizer of this path", whatever the format:
// - a directory (a Hugging Face model): its tokenizer.json, else its tokenizer.model;
// - a GGUF file: the vocabulary in its metadata;
// - tokenizer.json (Hugging Face), tokenizer.model (SentencePiece protobuf), by name;
// - anything else: a llama2.c tokenizer.bin.
// The example programs use it for --tokenizer and for models that carry no vocabulary.
#pragma once

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

namespace nexttok {

inline tokenizer load_tokenizer_file(const std::filesystem::path& path) {
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

// One entry point for "the tokenizer of this path", whatever the format:
// - a directory (a Hugging Face model): its tokenizer.json, else its tokenizer.model;
// - a GGUF file: the vocabulary in its metadata;
// - tokenizer.json (Hugging Face), tokenizer.model (SentencePiece protobuf), by name;
// - anything else: a llama2.c tokenizer.bin.
// The example programs use it for --tokenizer and for models that carry no vocabulary.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tokenizer/gguf_vocab.hpp>
#include <nexttok/tokenizer/hf_tokenizer_file.hpp>
#include <nexttok/tokenizer/llama2c_tokenizer_file.hpp>
#include <nexttok/tokenizer/spm_model_file.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include <filesystem>

namespace nexttok {

NEXTTOK_DECL tokenizer load_tokenizer_file(const std::filesystem::path& path);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/load_tokenizer_file.ipp>
#endif

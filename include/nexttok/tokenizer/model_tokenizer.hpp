// The tokenizer that goes with a loaded model: the file or directory given explicitly (any format
// load_tokenizer_file reads), else the vocabulary inside a GGUF file, else the tokenizer.json or
// tokenizer.model of a Hugging Face directory. A llama2.c checkpoint carries none: its
// tokenizer.bin must be given. The vocabulary sizes must agree.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/tokenizer/gguf_vocab.hpp>
#include <nexttok/tokenizer/load_tokenizer_file.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include <filesystem>

namespace nexttok {

NEXTTOK_DECL tokenizer load_model_tokenizer(const model& m, const std::filesystem::path& explicit_path = {});

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/model_tokenizer.ipp>
#endif

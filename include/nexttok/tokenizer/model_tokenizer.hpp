// The tokenizer that goes with a loaded model: the file or directory given explicitly (any format
// load_tokenizer_file reads), else the vocabulary inside a GGUF file, else the tokenizer.json or
// tokenizer.model of a Hugging Face directory. A llama2.c checkpoint carries none: its
// tokenizer.bin must be given. The vocabulary sizes must agree.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/tokenizer/gguf_vocab.hpp>
#include <nexttok/tokenizer/load_tokenizer_file.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include <filesystem>
#include <string>

namespace nexttok {

inline tokenizer load_model_tokenizer(const model& m, const std::filesystem::path& explicit_path = {}) {
    auto checked = [&](tokenizer tok) {
        if (static_cast<std::int64_t>(tok.vocab_size()) != m.config().vocab_size)
            throw invalid_argument_error("the tokenizer has " + std::to_string(tok.vocab_size()) + " tokens but " +
                                         m.file_name() + " has a vocabulary of " +
                                         std::to_string(m.config().vocab_size));
        return tok;
    };
    if (!explicit_path.empty()) return checked(load_tokenizer_file(explicit_path));
    if (const gguf_file* g = m.gguf()) return checked(load_tokenizer(*g));
    if (m.format() == model_file_format::hf_directory) return checked(load_tokenizer_file(m.path()));
    throw invalid_argument_error(
        m.file_name() +
        ": the model carries no vocabulary: give its tokenizer (a llama2.c checkpoint needs its tokenizer.bin)");
}

}  // namespace nexttok

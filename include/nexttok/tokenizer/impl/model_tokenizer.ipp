// The definitions of model_tokenizer.hpp.
#pragma once

#include <nexttok/tokenizer/model_tokenizer.hpp>
#include <nexttok/error.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/tokenizer/gguf_vocab.hpp>
#include <nexttok/tokenizer/load_tokenizer_file.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

namespace nexttok {

NEXTTOK_DECL tokenizer load_model_tokenizer(const model& m, const std::filesystem::path& explicit_path) {
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

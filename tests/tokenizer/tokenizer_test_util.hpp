// Shared helpers of the tokenizer tests: the data files, loaded once per test program, and the
// reader of llama.cpp's tokenizer test vectors.
#pragma once

#include <nexttok/io/gguf.hpp>
#include <nexttok/tokenizer.hpp>

#include "test_data.hpp"

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace nexttok::test {

inline const char* const llama_spm_vocab = "tokenizers/llama.cpp-vectors/ggml-vocab-llama-spm.gguf";
inline const char* const tok512_bin = "models/stories260K/tok512.bin";
inline const char* const tok512_model = "models/stories260K/tok512.model";
inline const char* const stories260k_gguf = "models/stories260K/stories260K.gguf";
// Byte-level BPE.
inline const char* const gpt2_vocab = "tokenizers/llama.cpp-vectors/ggml-vocab-gpt-2.gguf";
inline const char* const llama_bpe_vectors =
    "tokenizers/llama.cpp-vectors/ggml-vocab-llama-bpe.gguf";  // .inp/.out only
inline const char* const gpt2_encoder = "tokenizers/gpt2/encoder.json";
inline const char* const gpt2_merges = "tokenizers/gpt2/vocab.bpe";
inline const char* const llama3_encoder = "tokenizers/llama3/encoder.json";
inline const char* const llama3_merges = "tokenizers/llama3/vocab.bpe";
inline const char* const tiny_qwen2_gguf = "models/random/tiny-qwen2-f32.gguf";

// Loaded on first use; callers check NEXTTOK_REQUIRE_DATA first.
inline const tokenizer& llama_spm_tokenizer() {
    static const tokenizer t = load_tokenizer(gguf_file(data_path(llama_spm_vocab)));
    return t;
}
inline const tokenizer& tok512_tokenizer() {
    static const tokenizer t = load_llama2c_tokenizer(data_path(tok512_bin));
    return t;
}
inline const tokenizer& stories260k_gguf_tokenizer() {
    static const tokenizer t = load_tokenizer(gguf_file(data_path(stories260k_gguf)));
    return t;
}
// GPT-2 from llama.cpp's vocabulary-only GGUF.
inline const tokenizer& gpt2_gguf_tokenizer() {
    static const tokenizer t = load_tokenizer(gguf_file(data_path(gpt2_vocab)));
    return t;
}
// Llama 3 from encoder.json + vocab.bpe, with <|begin_of_text|> = 128000 and <|end_of_text|> = 128001.
inline const tokenizer& llama3_files_tokenizer() {
    static const tokenizer t =
        load_gpt2_tokenizer(data_path(llama3_encoder), data_path(llama3_merges), pre_tokenizer_kind::llama3);
    return t;
}

inline std::string read_file_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct vocab_test_case {
    std::string text;
    std::vector<token_id> expected;
};

// llama.cpp's test-tokenizer-0 format: the .inp texts are separated by "\n__ggml_vocab_test__\n"
// (so a text excludes the newline that ends its last line); the .out has one line of
// space-separated ids per text, in the same order.
inline std::vector<vocab_test_case> read_vocab_test_cases(const std::filesystem::path& vocab_file) {
    const std::string inp = read_file_bytes(vocab_file.string() + ".inp");
    const std::string separator = "\n__ggml_vocab_test__\n";
    std::vector<std::string> texts;
    for (std::size_t pos = 0; pos < inp.size();) {
        const std::size_t next = inp.find(separator, pos);
        if (next == std::string::npos) {
            texts.push_back(inp.substr(pos));
            break;
        }
        texts.push_back(inp.substr(pos, next - pos));
        pos = next + separator.size();
    }

    std::ifstream out(vocab_file.string() + ".out");
    std::vector<std::vector<token_id>> ids;
    for (std::string line; std::getline(out, line);) {
        std::istringstream fields(line);
        std::vector<token_id> row;
        for (token_id id; fields >> id;) row.push_back(id);
        ids.push_back(std::move(row));
    }

    std::vector<vocab_test_case> cases;
    if (texts.size() != ids.size()) return cases;  // the caller asserts a non-empty result
    for (std::size_t i = 0; i < texts.size(); ++i) cases.push_back({texts[i], ids[i]});
    return cases;
}

inline std::string format_ids(const std::vector<token_id>& ids) {
    std::string s;
    for (const token_id id : ids) {
        if (!s.empty()) s += ' ';
        s += std::to_string(id);
    }
    return s;
}

}  // namespace nexttok::test

// A llama2.c tokenizer.bin (int32 max_token_length, then per token: float score, int32 length,
// bytes), read with the vocabulary size taken from the file and with a given one (the model's).
#include <nexttok/tokenizer/llama2c_tokenizer_file.hpp>

#include "fuzz_support.hpp"
#include "tokenizer_check.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto path = nexttok::fuzz::write_file("tokenizer.bin", nexttok::fuzz::as_chars(data, size));
    try {
        nexttok::fuzz::exercise_tokenizer(nexttok::load_llama2c_tokenizer(path));
    } catch (const nexttok::error&) {
    }
    try {
        (void)nexttok::load_llama2c_tokenizer(path, std::size_t{512});
    } catch (const nexttok::error&) {
    }
    return 0;
}

// A Hugging Face tokenizer.json (alone in its folder: no tokenizer_config.json beside it). A file
// the reader accepts must then encode and decode a short text.
#include <nexttok/tokenizer/hf_tokenizer_file.hpp>

#include "fuzz_support.hpp"
#include "tokenizer_check.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto path = nexttok::fuzz::write_file("tokenizer.json", nexttok::fuzz::as_chars(data, size));
    try {
        nexttok::fuzz::exercise_tokenizer(nexttok::load_hf_tokenizer(path));
    } catch (const nexttok::error&) {
    }
    return 0;
}

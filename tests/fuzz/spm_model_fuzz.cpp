// A SentencePiece model protobuf (tokenizer.model) through the protobuf and model readers, then a
// short encode/decode with a tokenizer they accept.
#include <nexttok/tokenizer/spm_model_file.hpp>

#include "fuzz_support.hpp"
#include "tokenizer_check.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto path = nexttok::fuzz::write_file("tokenizer.model", nexttok::fuzz::as_chars(data, size));
    try {
        nexttok::fuzz::exercise_tokenizer(nexttok::load_spm_tokenizer(path));
    } catch (const nexttok::error&) {
    }
    return 0;
}

// GGUF bytes through the file reader, the tokenizer built from its vocabulary (a short encode and
// decode), the model loader and, for models small enough, one decoder step with a small cache.
// Bad input must be a nexttok::error; anything else (a crash, a sanitizer report, another
// exception type) is a finding.
#include <nexttok/io/gguf.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/tokenizer/gguf_vocab.hpp>

#include "decoder_step.hpp"
#include "fuzz_support.hpp"
#include "tokenizer_check.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto path = nexttok::fuzz::write_file("model.gguf", nexttok::fuzz::as_chars(data, size));
    try {
        const nexttok::gguf_file g(path);
        nexttok::fuzz::exercise_tokenizer(nexttok::load_tokenizer(g));
    } catch (const nexttok::error&) {
    }
    try {
        nexttok::fuzz::decoder_step(nexttok::load_model(path), size > 0 ? data[size - 1] : 0);
    } catch (const nexttok::error&) {
    }
    return 0;
}

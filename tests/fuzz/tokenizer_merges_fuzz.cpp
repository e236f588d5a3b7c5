// GPT-2 style encoder.json + vocab.bpe from one input: bytes [0, 3) are the length n of
// encoder.json (little-endian, capped by what remains), then encoder.json, then vocab.bpe; the
// input's last byte picks the pre-tokenizer.
#include <nexttok/tokenizer/gpt2_tokenizer_files.hpp>

#include "fuzz_support.hpp"
#include "tokenizer_check.hpp"

#include <algorithm>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 3) return 0;
    const std::string_view in = nexttok::fuzz::as_chars(data, size);
    const std::size_t n =
        std::min<std::size_t>(data[0] | (std::size_t{data[1]} << 8) | (std::size_t{data[2]} << 16), size - 3);
    const auto encoder = nexttok::fuzz::write_file("encoder.json", in.substr(3, n));
    const auto merges = nexttok::fuzz::write_file("vocab.bpe", in.substr(3 + n));
    const auto& kinds = nexttok::detail::pre_tokenizer_rows;
    const auto kind = kinds[data[size - 1] % std::size(kinds)].kind;
    try {
        nexttok::fuzz::exercise_tokenizer(nexttok::load_gpt2_tokenizer(encoder, merges, kind));
    } catch (const nexttok::error&) {
    }
    return 0;
}

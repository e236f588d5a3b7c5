// llama2.c's tokenizer.bin (written by its tokenizer.py export):
//   int32 max_token_length
//   then per token: float32 score, int32 length, `length` bytes of text
// with a space written as ' ' rather than "▁", and "\n<s>\n" / "\n</s>\n" as the texts of BOS/EOS.
// The file has no token count (llama2.c takes it from the model) and no token types; we read to the
// end of the file (or exactly vocab_size tokens when given) and derive the types as llama.cpp's
// convert-llama2c-to-ggml does: id 0 is <unk> (unknown), 1 is <s> and 2 is </s> (control), an
// empty text is control, "<0xNN>" is a byte token, the rest normal; spaces become "▁". bos = 1,
// eos = 2, unk = 0; the dummy-prefix space is added (llama2.c's encode does).
//
// The file is untrusted: a negative length, a length above max_token_length or past the end of the
// file is a format_error naming the file, the offset and the token index, before any allocation
// that the length would size.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tokenizer/spm_tokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>

namespace nexttok {

// The vocabulary of a llama2.c tokenizer.bin. vocab_size: read exactly that many tokens (extra bytes
// are ignored, as llama2.c does); nullopt: read tokens up to the end of the file.
NEXTTOK_DECL vocabulary load_llama2c_vocabulary(const std::filesystem::path& path,
                                                std::optional<std::size_t> vocab_size = std::nullopt);

NEXTTOK_DECL tokenizer load_llama2c_tokenizer(const std::filesystem::path& path,
                                              std::optional<std::size_t> vocab_size = std::nullopt);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/llama2c_tokenizer_file.ipp>
#endif

// SentencePiece's tokenizer.model: a serialized ModelProto (sentencepiece_model.proto), read with
// the wire-format reader of detail/protobuf_reader.hpp. The fields we use:
//   ModelProto      1 pieces (repeated SentencePiece), 2 trainer_spec, 3 normalizer_spec
//   SentencePiece   1 piece (string), 2 score (float), 3 type (NORMAL 1, UNKNOWN 2, CONTROL 3,
//                   USER_DEFINED 4, UNUSED 5, BYTE 6; default NORMAL: our token_type values)
//   TrainerSpec     3 model_type (UNIGRAM 1 (default), BPE 2, WORD 3, CHAR 4), 40 unk_id (default 0),
//                   41 bos_id (default 1), 42 eos_id (default 2); -1 means none
//   NormalizerSpec  1 name, 3 add_dummy_prefix (default true)
// Every other field is skipped. Only BPE models are implemented (spm_tokenizer): another
// model_type is unsupported_error.
//
// Not applied, as in llama.cpp: the normalizer's rule (the name and its precompiled character map;
// Llama 2 and llama2.c's models use "identity") and remove_extra_whitespaces (default true in
// SentencePiece, which would collapse runs of spaces; llama2.c's encoder does not).
//
// The file is untrusted: format_error naming the file, the offset and the field for truncated or
// malformed protobuf, a piece type outside 1..6, a byte piece whose text is not <0xNN>, a special
// id outside the pieces.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tokenizer/spm_tokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

namespace nexttok {

namespace detail {

struct spm_model {
    vocabulary vocab;
    spm_options options;
};

// The model in `bytes` (the content of file_name).
NEXTTOK_DECL spm_model parse_spm_model(std::span<const std::byte> bytes, const std::string& file_name);

}  // namespace detail

// The vocabulary of a SentencePiece BPE tokenizer.model.
NEXTTOK_DECL vocabulary load_spm_vocabulary(const std::filesystem::path& path);

// The tokenizer of a SentencePiece BPE tokenizer.model: the dummy prefix as the model says, BOS
// before prompts, no EOS.
NEXTTOK_DECL tokenizer load_spm_tokenizer(const std::filesystem::path& path);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/spm_model_file.ipp>
#endif

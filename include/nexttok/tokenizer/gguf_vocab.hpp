// The tokenizer stored in a GGUF file's metadata (tokenizer.ggml.*), as llama.cpp reads it:
//   tokens       array of strings (required), one per id
//   scores       array of f32 (optional, default 0), token_type array of i32 (optional, default normal)
//   bos_token_id, eos_token_id, unknown_token_id (optional; defaults 1, 2, 0 for SentencePiece;
//                -1 / 0xFFFFFFFF means "none")
//   add_bos_token, add_eos_token, add_space_prefix (optional; defaults true, false, true)
// and for tokenizer.ggml.model = "gpt2" (byte-level BPE):
//   merges       array of strings "left right" (required), in rank order
//   pre          the pre-tokenizer (optional, "default" when absent, as llama.cpp): any byte-level
//                name llama.cpp knows (gguf_pre_tokenizers.hpp), which also chooses ignore_merges
//                and the default of add_bos_token; any other name is unsupported_error naming it
//                and listing the known ones
//   bos/eos/unknown_token_id (optional; default none), add_bos_token (default: the name's, e.g.
//                true for Llama 3 and Tekken), add_eos_token (default false)
// tokenizer.ggml.model = "llama" (SentencePiece BPE) and "gpt2" are implemented; other models are
// unsupported_error. Every array length, type value and id is checked: format_error naming the file,
// the key, its offset and what was expected.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/tokenizer/bpe_tokenizer.hpp>
#include <nexttok/tokenizer/spm_tokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>

namespace nexttok {

// The token table of any GGUF tokenizer (the model type is not checked here). `defaults`: the
// special ids when their keys are absent (llama.cpp's SentencePiece defaults: bos 1, eos 2, unk 0).
NEXTTOK_DECL vocabulary load_gguf_vocabulary(const gguf_file& file, special_token_ids defaults = {1, 2, 0});

// The byte-level BPE tokenizer of a GGUF file whose tokenizer.ggml.model is "gpt2" (not checked here).
NEXTTOK_DECL bpe_tokenizer load_gguf_bpe_tokenizer(const gguf_file& file);

// The tokenizer of a GGUF model, by tokenizer.ggml.model: "llama" (SentencePiece BPE) or "gpt2"
// (byte-level BPE); unsupported_error for another model.
NEXTTOK_DECL tokenizer load_tokenizer(const gguf_file& file);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/gguf_vocab.ipp>
#endif

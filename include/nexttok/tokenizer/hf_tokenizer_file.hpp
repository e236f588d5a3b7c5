// A Hugging Face tokenizer.json with a byte-level BPE model (GPT-2, Llama 3, Qwen2, ...):
//   model            type "BPE" (or no type, with vocab and merges), vocab {text: id}, merges as
//                    "left right" strings or [left, right] pairs, ignore_merges, unk_token;
//                    byte_fallback, continuing_subword_prefix and end_of_word_suffix are not
//                    supported (unsupported_error)
//   added_tokens     [{id, content, special}]: special -> control (matched only with parse_special),
//                    otherwise user-defined (always matched, decoded as plain text)
//   pre_tokenizer    ByteLevel (use_regex: GPT-2's expression), or a Sequence of Splits (pattern
//                    Regex or String, behaviour "Isolated"), Digits (individual_digits: \p{N}, else
//                    \p{N}+) and one ByteLevel, applied in their order (DeepSeek, StarCoder);
//                    add_prefix_space is not supported
//   normalizer       none, or NFC (Qwen2), which is not applied: see below
//   post_processor   TemplateProcessing that starts (ends) with a special token: that token is BOS
//                    (EOS) and is added to prompts (Llama 3)
// and, when a tokenizer_config.json lies beside it, its bos_token / eos_token / add_bos_token /
// add_eos_token, which take precedence. Without either, an added "<|endoftext|>" is EOS (the GPT-2
// and Qwen2 convention).
//
// Not reproduced: NFC normalization (text that is not in NFC can tokenize differently from HF;
// llama.cpp does not normalize either), added tokens' lstrip / rstrip / single_word flags.
//
// The file is untrusted: format_error naming the file and the field ("model.merges[12]"), or the
// byte offset of a JSON syntax error; unsupported_error naming what is not implemented.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include <filesystem>

namespace nexttok {

// The byte-level BPE tokenizer of a Hugging Face tokenizer.json (and the tokenizer_config.json
// beside it, if any).
NEXTTOK_DECL tokenizer load_hf_tokenizer(const std::filesystem::path& tokenizer_json);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/hf_tokenizer_file.ipp>
#endif

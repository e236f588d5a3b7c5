// GPT-2's original tokenizer files, also the "slow" Hugging Face format (vocab.json + merges.txt):
//   encoder.json  a JSON object, byte-level token text -> id, the ids 0..n-1 each once
//   vocab.bpe     one merge "left right" per line in rank order; an optional first line
//                 "#version: ..." is a header. Only the first line can be one: GPT-2 has 8 genuine
//                 merges that begin with '#' ("# #", "## ##", ...), so no other '#' line is skipped.
// The files name no special tokens; the caller says which texts are control tokens (an existing
// entry becomes one, a new text is appended after the last id), and which are BOS and EOS.
// gpt2_files_defaults(kind) gives each model family's choice.
//
// Both files are untrusted: format_error naming the file and, for vocab.bpe, the line and its
// offset; io_error when one cannot be read.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tokenizer/pre_tokenizer_kind.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace nexttok {

struct gpt2_files_options {
    pre_tokenizer_kind pre = pre_tokenizer_kind::gpt2;  // llama3 also turns on ignore_merges
    std::vector<std::string> control_tokens;            // texts of the control tokens, in id order when appended
    std::string bos;                                    // text of BOS among the tokens; empty: none
    std::string eos;                                    // text of EOS among the tokens; empty: none
    bool add_bos = false;                               // the model's default for prompts
};

// Each family's special tokens, as its model files define them:
//   gpt2    <|endoftext|> (id 50256 in GPT-2's encoder.json) is control, BOS and EOS
//   llama3  <|begin_of_text|> (BOS, added to prompts) and <|end_of_text|> (EOS), which Llama 3's
//           encoder.json lacks: appended as 128000 and 128001, as ollama does. (The released
//           tokenizer.json has 256 specials 128000..128255; pass them in control_tokens if needed.)
//   qwen2   <|endoftext|> (EOS), <|im_start|>, <|im_end|>: 151643..151645 after Qwen2's vocab.json
NEXTTOK_DECL gpt2_files_options gpt2_files_defaults(pre_tokenizer_kind kind);

NEXTTOK_DECL tokenizer load_gpt2_tokenizer(const std::filesystem::path& encoder_json,
                                           const std::filesystem::path& vocab_bpe, const gpt2_files_options& options);

// With the special tokens of the family `pre` names (gpt2_files_defaults).
NEXTTOK_DECL tokenizer load_gpt2_tokenizer(const std::filesystem::path& encoder_json,
                                           const std::filesystem::path& vocab_bpe,
                                           pre_tokenizer_kind pre = pre_tokenizer_kind::gpt2);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/gpt2_tokenizer_files.ipp>
#endif

// Byte-level BPE as GPT-2, Llama 3 and Qwen2 use it (OpenAI's encoder.py, HF tokenizers' BPE model
// with the ByteLevel pre-tokenizer, llama.cpp's llm_tokenizer_bpe).
//
// Encoding a text:
//   1. special texts are cut out first (detail/special_partition.hpp): user-defined tokens always,
//      control tokens ("<|endoftext|>", "<|begin_of_text|>") only when parse_special is set;
//   2. each remaining fragment is cut into pre-tokens by the model's regular expression
//      (pre_tokenizer.hpp);
//   3. with ignore_merges (Llama 3), a pre-token whose byte-level spelling is a whole normal token
//      is that token;
//   4. otherwise each byte of the pre-token becomes the token of its byte-level character ("Ġ" for
//      ' ') and the ranked merges run (detail/bpe_merge.hpp).
// No Unicode normalization is applied (llama.cpp applies none either; see hf_tokenizer_file.hpp).
//
// Decoding: normal tokens go back through the inverse byte table ("Ġworld" -> " world", "Ã©" -> the
// two bytes of "é"), user-defined tokens are their own text, control tokens produce nothing. The
// result is raw bytes; a token can end in the middle of a UTF-8 character (GPT-2 spells "👋" with
// two tokens), which the streaming detokenizer holds back. No clean-up of spaces before punctuation
// (llama.cpp's clean_spaces, HF's clean_up_tokenization_spaces): decode(encode(text)) == text.
//
// Thread-safety: immutable after construction; concurrent calls are safe.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tokenizer/bpe_merge.hpp>
#include <nexttok/tokenizer/detail/piece_tokenizer.hpp>
#include <nexttok/tokenizer/pre_tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

struct bpe_options {
    bool ignore_merges = false;  // Llama 3: a pre-token that is a whole normal token is emitted as is
    bool add_bos = false;        // the model's default for prompts (tokenizer.ggml.add_bos_token)
    bool add_eos = false;        // the model's default at the end of a prompt (tokenizer.ggml.add_eos_token)
};

namespace detail {
class bpe_word_merger;
}  // namespace detail

// decode_piece, decode, token_to_piece and vocab() are those of detail::piece_tokenizer: normal tokens
// through the inverse byte table, added tokens as their text, control tokens as nothing.
class bpe_tokenizer : public detail::piece_tokenizer {
public:
    // merges: in rank order (the first merges first). invalid_argument_error when a rule names an id
    // outside the vocabulary or its result is not the concatenation of its two parts. Loaders check
    // their files first and report the same problems as format_error with the file and position.
    // A rule whose result is a control, unknown or byte token is ignored: plain text never turns
    // into those by merging.
    NEXTTOK_DECL bpe_tokenizer(vocabulary vocab, const std::vector<bpe_merge>& merges, pre_tokenizer pre,
                               bpe_options options);

    // Token ids of `text`, with BOS first when add_bos (invalid_argument_error when there is no BOS).
    // Any byte string encodes, invalid UTF-8 included, when the vocabulary has the 256 byte-level
    // characters (every GPT-2 style vocabulary does); a byte without one becomes <unk> if there is
    // one and is dropped otherwise, as HF and llama.cpp do.
    NEXTTOK_DECL std::vector<token_id> encode(std::string_view text, bool add_bos, bool parse_special = false) const;

    const bpe_options& options() const noexcept { return options_; }
    const pre_tokenizer& pre() const noexcept { return pre_; }
    // The number of distinct merge rules in use.
    NEXTTOK_DECL std::size_t n_merges() const noexcept;

private:
    static bool is_mergeable(token_type t) noexcept {
        return t == token_type::normal || t == token_type::user_defined || t == token_type::unused;
    }

    struct merge_ranks;  // the ranks of the usable rules, by token id pair (impl/bpe_tokenizer.ipp)

    NEXTTOK_DECL static std::shared_ptr<const merge_ranks> checked(const vocabulary& vocab,
                                                                   const std::vector<bpe_merge>& merges);
    NEXTTOK_DECL static std::string make_piece(const token_data& t);
    NEXTTOK_DECL void encode_word(std::string_view word, detail::bpe_word_merger& merger, std::string& spelled,
                                  std::vector<token_id>& out) const;

    std::shared_ptr<const merge_ranks> ranks_;  // shared by copies (immutable)
    pre_tokenizer pre_;
    bpe_options options_;
    std::array<token_id, 256> byte_symbols_{};  // byte -> the token of its byte-level character, or no_token
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/bpe_tokenizer.ipp>
#endif

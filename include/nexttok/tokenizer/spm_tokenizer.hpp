// SentencePiece-style BPE as Llama 2 (and llama2.c) uses it, following llama.cpp's SPM tokenizer
// (llm_tokenizer_spm in src/llama-vocab.cpp) for encoding and SentencePiece's decoder for decoding.
//
// Encoding a text:
//   1. special texts are cut out first (llama.cpp's tokenizer_st_partition): user-defined tokens
//      always, control and unknown tokens ("<s>", "</s>", "<unk>") only when parse_special is set;
//   2. each remaining fragment gets the dummy-prefix space when add_space_prefix is set and it is the
//      first fragment or follows a special token (llama.cpp's is_prev_special), has ' ' replaced by
//      U+2581, and is merged (detail/spm_merge.hpp).
// No Unicode normalization is applied (llama.cpp applies none either).
//
// Decoding: each token's piece (U+2581 -> ' ', <0xNN> -> that byte, control -> nothing, <unk> ->
// " ⁇ " as SentencePiece shows it), with the dummy-prefix space dropped from the first piece that
// produces text (see decode_state). The result is raw bytes; it is not valid UTF-8 when byte tokens
// spell an incomplete character.
//
// Thread-safety: immutable after construction; concurrent calls are safe.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tokenizer/detail/piece_tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

struct spm_options {
    bool add_space_prefix = true;  // SentencePiece add_dummy_prefix: "Hello" is encoded as " Hello"
    bool add_bos = true;           // the model's default for prompts (tokenizer.ggml.add_bos_token)
    bool add_eos = false;          // the model's default at the end of a prompt (tokenizer.ggml.add_eos_token)
};

// decode_piece, decode, token_to_piece and vocab() are those of detail::piece_tokenizer, with the
// dummy-prefix rule when add_space_prefix is set.
class spm_tokenizer : public detail::piece_tokenizer {
public:
    // The escaped space: SentencePiece's "▁" (U+2581 LOWER ONE EIGHTH BLOCK).
    static constexpr std::string_view space_symbol = "\xE2\x96\x81";
    // What SentencePiece prints for <unk>: " ⁇ " (U+2047 between spaces).
    static constexpr std::string_view unknown_surface = " \xE2\x81\x87 ";

    NEXTTOK_DECL spm_tokenizer(vocabulary vocab, spm_options options);

    // Token ids of `text`, with BOS first when add_bos (invalid_argument_error when there is no BOS).
    // Invalid UTF-8 is encoded byte by byte through the byte-fallback tokens.
    NEXTTOK_DECL std::vector<token_id> encode(std::string_view text, bool add_bos, bool parse_special = false) const;

    const spm_options& options() const noexcept { return options_; }

private:
    // The text starts with "▁" that decode may drop (a text token, not a byte, control or <unk>).
    NEXTTOK_DECL static bool has_dummy_prefix(const token_data& t) noexcept;
    NEXTTOK_DECL static std::string make_piece(const token_data& t);

    spm_options options_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/spm_tokenizer.ipp>
#endif

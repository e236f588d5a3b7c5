// The one tokenizer type that generate(), the stopping criteria and the examples use: text <-> token
// ids, whatever the model's tokenizer family: SentencePiece-BPE (Llama 2, llama2.c) or byte-level
// BPE (GPT-2, Llama 3, Qwen2), held in a variant behind one interface. Build one with
// load_tokenizer(gguf_file), load_llama2c_tokenizer(path), load_spm_tokenizer(tokenizer.model),
// load_hf_tokenizer(tokenizer.json) or load_gpt2_tokenizer(encoder.json, vocab.bpe, kind).
//
// Ownership: owns its vocabulary; a copy duplicates it (tens of thousands of strings), so pass it by
// reference. Thread-safety: immutable; concurrent calls are safe.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/tokenizer/bpe_tokenizer.hpp>
#include <nexttok/tokenizer/decode_state.hpp>
#include <nexttok/tokenizer/spm_tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace nexttok {

class tokenizer {
public:
    NEXTTOK_DECL explicit tokenizer(spm_tokenizer impl);
    NEXTTOK_DECL explicit tokenizer(bpe_tokenizer impl);

    // Token ids of `text`, BOS first when add_bos. Texts of control tokens ("<s>", "<|endoftext|>")
    // are matched as those tokens only when parse_special; otherwise they are plain text. Any byte
    // string encodes (invalid UTF-8 goes through byte-fallback tokens, or byte-level symbols).
    NEXTTOK_DECL std::vector<token_id> encode(std::string_view text, bool add_bos, bool parse_special = false) const;

    // The text of a whole sequence: the concatenation of the pieces, with the tokenizer's
    // start-of-text rule (SentencePiece drops the dummy-prefix space of the first piece). Raw bytes:
    // may be invalid UTF-8 when byte tokens end in the middle of a character. invalid_argument_error
    // for an id outside the vocabulary.
    NEXTTOK_DECL std::string decode(std::span<const token_id> tokens) const;

    // Decodes one more token of a sequence: appends its text to out. decode() is this in a loop;
    // the streaming detokenizer uses it directly.
    NEXTTOK_DECL void decode_piece(token_id id, decode_state& state, std::string& out) const;

    // The raw bytes of one token ("▁Hello" -> " Hello", "<0x0A>" -> "\n", "Ġworld" -> " world",
    // control tokens -> "").
    NEXTTOK_DECL std::string token_to_piece(token_id id) const;

    token_id bos() const noexcept { return vocab().bos(); }
    token_id eos() const noexcept { return vocab().eos(); }
    token_id unk() const noexcept { return vocab().unk(); }
    std::size_t vocab_size() const noexcept { return vocab().size(); }

    // True for control tokens (BOS, EOS, ...): they have no text. invalid_argument_error for an id
    // outside the vocabulary.
    bool is_control(token_id id) const { return vocab().at(id).type == token_type::control; }

    // Whether the model asks for BOS before a prompt and EOS after it (GGUF add_bos_token / add_eos_token).
    NEXTTOK_DECL bool default_add_bos() const noexcept;
    NEXTTOK_DECL bool default_add_eos() const noexcept;

    NEXTTOK_DECL const vocabulary& vocab() const noexcept;

    // The implementation, for what only one family has (the BPE pre-tokenizer); nullptr for the other.
    const spm_tokenizer* spm() const noexcept { return std::get_if<spm_tokenizer>(&impl_); }
    const bpe_tokenizer* bpe() const noexcept { return std::get_if<bpe_tokenizer>(&impl_); }

private:
    std::variant<spm_tokenizer, bpe_tokenizer> impl_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/tokenizer.ipp>
#endif

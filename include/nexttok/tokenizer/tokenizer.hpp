// The one tokenizer type that generate(), the stopping criteria and the examples use: text <-> token
// ids, whatever the model's tokenizer family. Today it holds the SentencePiece-BPE implementation
// (Llama 2, llama2.c); byte-level BPE (GPT-2, Llama 3, Qwen2) joins the variant behind the same
// interface. Build one with load_tokenizer(gguf_file) or load_llama2c_tokenizer(path).
//
// Ownership: owns its vocabulary; a copy duplicates it (tens of thousands of strings), so pass it by
// reference. Thread-safety: immutable; concurrent calls are safe.
#pragma once

#include <nexttok/tokenizer/decode_state.hpp>
#include <nexttok/tokenizer/spm_tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace nexttok {

class tokenizer {
public:
    explicit tokenizer(spm_tokenizer impl) : impl_(std::move(impl)) {}

    // Token ids of `text`, BOS first when add_bos. Texts of control tokens ("<s>") are matched as
    // those tokens only when parse_special; otherwise they are plain text. Any byte string encodes
    // (invalid UTF-8 goes through byte-fallback tokens).
    std::vector<token_id> encode(std::string_view text, bool add_bos, bool parse_special = false) const {
        return std::visit([&](const auto& t) { return t.encode(text, add_bos, parse_special); }, impl_);
    }

    // The text of a whole sequence: the concatenation of the pieces, with the tokenizer's
    // start-of-text rule (SentencePiece drops the dummy-prefix space of the first piece). Raw bytes:
    // may be invalid UTF-8 when byte tokens end in the middle of a character. invalid_argument_error
    // for an id outside the vocabulary.
    std::string decode(std::span<const token_id> tokens) const {
        return std::visit([&](const auto& t) { return t.decode(tokens); }, impl_);
    }

    // Decodes one more token of a sequence: appends its text to out. decode() is this in a loop;
    // the streaming detokenizer uses it directly.
    void decode_piece(token_id id, decode_state& state, std::string& out) const {
        std::visit([&](const auto& t) { t.decode_piece(id, state, out); }, impl_);
    }

    // The raw bytes of one token ("▁Hello" -> " Hello", "<0x0A>" -> "\n", control tokens -> "").
    std::string token_to_piece(token_id id) const {
        return std::visit([&](const auto& t) { return t.token_to_piece(id); }, impl_);
    }

    token_id bos() const noexcept { return vocab().bos(); }
    token_id eos() const noexcept { return vocab().eos(); }
    token_id unk() const noexcept { return vocab().unk(); }
    std::size_t vocab_size() const noexcept { return vocab().size(); }

    // True for control tokens (BOS, EOS, ...): they have no text. invalid_argument_error for an id
    // outside the vocabulary.
    bool is_control(token_id id) const { return vocab().at(id).type == token_type::control; }

    // Whether the model asks for BOS before a prompt and EOS after it (GGUF add_bos_token / add_eos_token).
    bool default_add_bos() const noexcept {
        return std::visit([](const auto& t) { return t.options().add_bos; }, impl_);
    }
    bool default_add_eos() const noexcept {
        return std::visit([](const auto& t) { return t.options().add_eos; }, impl_);
    }

    const vocabulary& vocab() const noexcept {
        return std::visit([](const auto& t) -> const vocabulary& { return t.vocab(); }, impl_);
    }

private:
    std::variant<spm_tokenizer> impl_;
};

}  // namespace nexttok

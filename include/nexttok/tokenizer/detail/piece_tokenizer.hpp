// What bpe_tokenizer and spm_tokenizer share, written once: the vocabulary, the decoded bytes of
// every token (made when the tokenizer is built) and everything that follows from them: decoding
// (check the id, append its piece, advance decode_state), token_to_piece, and the BOS that starts an
// encoding. Both derive from it, so these are their public members. They differ only in what they
// give the constructor: how a token's text becomes bytes, and which pieces start with the ' ' of
// SentencePiece's dummy prefix, dropped from the first piece that produces text (none in byte-level
// BPE).
//
// Thread-safety: immutable after construction; concurrent calls are safe.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/tokenizer/decode_state.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace nexttok::detail {

class piece_tokenizer {
public:
    // Appends the bytes of `id` to out and advances state. invalid_argument_error for an id outside
    // the vocabulary, before out or state change.
    void decode_piece(token_id id, decode_state& state, std::string& out) const {
        vocab_.check_id(id);
        const auto i = static_cast<std::size_t>(id);
        const std::string& piece = pieces_[i];
        if (state.at_start && drops_space_[i]) {
            out.append(piece, 1);  // the piece starts with the ' ' that was "▁"
            state.at_start = false;
            return;
        }
        out += piece;
        if (!piece.empty()) state.at_start = false;
    }

    std::string decode(std::span<const token_id> tokens) const { return decode_tokens(*this, tokens); }

    // The bytes of one token, without the start-of-text rule: " world" for byte-level "Ġworld",
    // " Hello" for SentencePiece's "▁Hello", "" for a control token.
    std::string token_to_piece(token_id id) const {
        vocab_.check_id(id);
        return pieces_[static_cast<std::size_t>(id)];
    }

    const vocabulary& vocab() const noexcept { return vocab_; }

protected:
    // make_piece(const token_data&) -> std::string: the bytes of a token.
    // drops_space(const token_data&) -> bool: its piece starts with a dummy-prefix ' ' that decoding
    // drops at the start of a text.
    template <class MakePiece, class DropsSpace>
    piece_tokenizer(vocabulary vocab, MakePiece make_piece, DropsSpace drops_space) : vocab_(std::move(vocab)) {
        pieces_.reserve(vocab_.size());
        drops_space_.reserve(vocab_.size());
        for (std::size_t i = 0; i < vocab_.size(); ++i) {
            const token_data& t = vocab_[static_cast<token_id>(i)];
            pieces_.push_back(make_piece(t));
            drops_space_.push_back(drops_space(t));
        }
    }

    // The start of an encoding: BOS when add_bos (invalid_argument_error when there is no BOS).
    std::vector<token_id> bos_prefix(bool add_bos) const {
        std::vector<token_id> out;
        if (add_bos) {
            if (vocab_.bos() == no_token)
                throw invalid_argument_error("encode: add_bos, but the vocabulary has no BOS token");
            out.push_back(vocab_.bos());
        }
        return out;
    }

    vocabulary vocab_;

private:
    std::vector<std::string> pieces_;  // (vocab_size) decoded bytes of each token
    std::vector<bool> drops_space_;    // (vocab_size) the piece starts with a ' ' dropped at the start
};

}  // namespace nexttok::detail

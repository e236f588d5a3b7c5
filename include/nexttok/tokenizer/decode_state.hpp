// What decoding has to remember from one token to the next, so that decoding token by token (the
// streaming detokenizer) gives exactly what decoding the whole sequence at once gives.
#pragma once

#include <nexttok/types.hpp>

#include <span>
#include <string>

namespace nexttok {

struct decode_state {
    // SentencePiece drops the space of the dummy prefix ("▁Hello" -> "Hello") from the first piece
    // that produces text. True until a piece has produced text or had its leading space dropped;
    // control tokens (BOS) produce nothing and leave it set. Byte-level BPE has no such rule and
    // only clears it.
    bool at_start = true;
};

// The text of a whole sequence: tok.decode_piece for each token, from a fresh state. The decode()
// of every tokenizer, so that it is by construction what the streaming detokenizer gives.
template <class Tokenizer>
std::string decode_tokens(const Tokenizer& tok, std::span<const token_id> tokens) {
    std::string out;
    decode_state state;
    for (const token_id id : tokens) tok.decode_piece(id, state, out);
    return out;
}

}  // namespace nexttok

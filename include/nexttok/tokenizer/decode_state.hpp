// What decoding has to remember from one token to the next, so that decoding token by token (the
// streaming detokenizer) gives exactly what decoding the whole sequence at once gives.
#pragma once

namespace nexttok {

struct decode_state {
    // SentencePiece drops the space of the dummy prefix ("▁Hello" -> "Hello") from the first piece
    // that produces text. True until a piece has produced text or had its leading space dropped;
    // control tokens (BOS) produce nothing and leave it set. Byte-level BPE has no such rule and
    // only clears it.
    bool at_start = true;
};

}  // namespace nexttok

// Streaming detokenization: turns tokens, one at a time, into text that is safe to show now.
//
// push() returns only whole UTF-8 characters. Byte-fallback tokens can spell one character over 2-4
// tokens ("é" = <0xC3> <0xA9>), and a byte-level BPE token can end inside a character (GPT-2 spells
// "👋" as "ĠðŁĳ" + "ĭ"); the bytes of a character that is not complete yet are held back until
// the next token completes it. Bytes that can never become a well-formed character are replaced by
// U+FFFD at once (one per maximal ill-formed subpart), so every push() result is valid UTF-8.
// flush() returns what is held back, an incomplete character becoming U+FFFD.
//
// The concatenation of all push() results and flush() equals tokenizer::decode() of the same tokens
// whenever that decode() is valid UTF-8 (both apply the same start-of-text rule, through decode_state).
//
// Ownership: refers to the tokenizer, which must outlive it. Not thread-safe: one per sequence.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/tokenizer/decode_state.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/types.hpp>

#include <span>
#include <string>

namespace nexttok {

class detokenizer {
public:
    explicit detokenizer(const tokenizer& tok) : tok_(&tok) {}

    // The text that token `id` completes. invalid_argument_error for an id outside the vocabulary
    // (the detokenizer is then unchanged).
    NEXTTOK_DECL std::string push(token_id id);

    // Everything still held back; an incomplete trailing character becomes U+FFFD. The detokenizer
    // then continues the same text (push() after flush() does not start a new one: see reset()).
    NEXTTOK_DECL std::string flush();

    // Feeds tokens whose text has been shown already (a prompt), so that the first token pushed next
    // is decoded as the continuation it is: SentencePiece's start-of-text rule applies once, to the
    // first piece of the whole text. Their complete text is discarded; an incomplete trailing
    // character stays held back for the next push().
    NEXTTOK_DECL void prime(std::span<const token_id> tokens);

    // Starts a new text.
    void reset() {
        state_ = decode_state{};
        pending_.clear();
    }

private:
    NEXTTOK_DECL std::string take(bool keep_incomplete_tail);

    const tokenizer* tok_;  // non-owning
    decode_state state_;
    std::string pending_;  // decoded bytes not returned yet: at most an incomplete character (<= 3 bytes) between calls
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/detokenizer.ipp>
#endif

// The definitions of detokenizer.hpp.
#pragma once

#include <nexttok/tokenizer/detokenizer.hpp>
#include <nexttok/detail/utf8.hpp>

#include <cstddef>
#include <span>
#include <string>

namespace nexttok {

NEXTTOK_DECL std::string detokenizer::push(token_id id) {
    tok_->decode_piece(id, state_, pending_);  // checks id before changing anything
    return take(true);
}

NEXTTOK_DECL std::string detokenizer::flush() { return take(false); }

NEXTTOK_DECL void detokenizer::prime(std::span<const token_id> tokens) {
    for (const token_id id : tokens) push(id);
}

NEXTTOK_DECL std::string detokenizer::take(bool keep_incomplete_tail) {
    std::string out;
    const std::size_t held = detail::append_sanitized_utf8(pending_, out, keep_incomplete_tail);
    pending_.erase(0, pending_.size() - held);
    return out;
}

}  // namespace nexttok

// What every tokenizer-file target does with a tokenizer its reader accepted: encode a short fixed
// text (with and without special-token parsing), decode the ids back, stream them through the
// detokenizer, and decode every id of a small vocabulary. Any id the encoder emits must decode.
#pragma once

#include <nexttok/tokenizer/detokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include <string>
#include <vector>

namespace nexttok::fuzz {

inline constexpr const char* sample_text =
    "Hello world! 123  <s></s><|endoftext|> h\xc3\xa9llo \xf0\x9f\x91\x8b\n\tend";

inline void exercise_tokenizer(const tokenizer& tok) {
    for (const bool special : {false, true}) {
        const std::vector<token_id> ids = tok.encode(sample_text, tok.default_add_bos(), special);
        for (const token_id id : ids)
            if (id < 0 || static_cast<std::size_t>(id) >= tok.vocab_size()) __builtin_trap();
        const std::string text = tok.decode(ids);
        detokenizer stream(tok);
        std::string streamed;
        for (const token_id id : ids) streamed += stream.push(id);
        streamed += stream.flush();
        (void)text;
        (void)streamed;
    }
    if (tok.vocab_size() <= 4096)
        for (std::size_t id = 0; id < tok.vocab_size(); ++id) (void)tok.token_to_piece(static_cast<token_id>(id));
}

}  // namespace nexttok::fuzz

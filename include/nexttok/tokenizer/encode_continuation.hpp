// The tokens of a text that continues a prompt, for score(): the text is tokenized as part of
// prompt + text (as it would be in the whole string: "there" after a space is one token with its
// space, not " " + "there"), and the prompt's tokens are the longest common prefix of encode(prompt)
// and encode(prompt + text). Encoding the text on its own instead gives it a leading-space token
// the model never saw there, and a much worse score (on stories260K, ", there was a little girl named
// Lily." after "Once upon a time": perplexity 1.12 this way, 7.5 the other way).
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/types.hpp>

#include <string_view>
#include <vector>

namespace nexttok {

struct prompt_and_continuation {
    std::vector<token_id> prompt;        // BOS first when add_bos; never empty
    std::vector<token_id> continuation;  // never empty
};

// `add_bos`: prepend BOS (the tokenizer's default_add_bos() for the model's own habit). With an empty
// prompt the continuation follows BOS alone. invalid_argument_error when nothing can condition the
// text (no BOS and an empty prompt) or the text adds no token. Cost: two encodes.
NEXTTOK_DECL prompt_and_continuation encode_continuation(const tokenizer& tok, std::string_view prompt,
                                                         std::string_view text, bool add_bos);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/tokenizer/impl/encode_continuation.ipp>
#endif

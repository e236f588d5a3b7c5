// The tokens of a text that continues a prompt, for score(): the text is tokenized as part of
// prompt + text (as it would be in the whole string: "there" after a space is one token with its
// space, not " " + "there"), and the prompt's tokens are the longest common prefix of encode(prompt)
// and encode(prompt + text). Encoding the text on its own instead gives it a leading-space token
// the model never saw there, and a much worse score (on stories260K, ", there was a little girl named
// Lily." after "Once upon a time": perplexity 1.12 this way, 7.5 the other way).
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include <cstddef>
#include <string>
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
inline prompt_and_continuation encode_continuation(const tokenizer& tok, std::string_view prompt, std::string_view text,
                                                   bool add_bos) {
    const std::vector<token_id> whole = tok.encode(std::string(prompt) + std::string(text), add_bos);
    const std::vector<token_id> head = tok.encode(prompt, add_bos);
    std::size_t n_prompt = 0;
    while (n_prompt < head.size() && n_prompt < whole.size() && head[n_prompt] == whole[n_prompt]) ++n_prompt;
    if (n_prompt == 0) {
        if (!add_bos || whole.empty())
            throw invalid_argument_error(
                "encode_continuation: the prompt is empty and no BOS is added: nothing conditions the text");
        n_prompt = 1;
    }
    if (n_prompt >= whole.size())
        throw invalid_argument_error("encode_continuation: the text adds no token to the prompt");
    return {std::vector<token_id>(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n_prompt)),
            std::vector<token_id>(whole.begin() + static_cast<std::ptrdiff_t>(n_prompt), whole.end())};
}

}  // namespace nexttok

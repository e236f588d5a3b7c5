// The definitions of encode_continuation.hpp.
#pragma once

#include <nexttok/tokenizer/encode_continuation.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

NEXTTOK_DECL prompt_and_continuation encode_continuation(const tokenizer& tok, std::string_view prompt,
                                                         std::string_view text, bool add_bos) {
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

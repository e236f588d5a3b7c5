// Which tokens a KV cache holds: the record that lets the next generation on the same cache skip the
// prefix it shares with the tokens already there (generate_reusing, generate_reusing.hpp). A chat
// renders the whole conversation again at every turn; everything up to the previous answer is
// already in the cache, so only the new user turn needs a prefill (llama.cpp's -cnv and its server
// do the same).
//
// Invariant (kept by generate_reusing): positions [0, tokens.size()) of the cache hold the keys and
// values of `tokens`, in order, each run at its index. The record knows nothing of the cache itself:
// pair one record with one cache, and clear() it whenever something else writes to that cache.
// A plain value: copy it with the cache (kv_cache is a value too) to branch a conversation.
#pragma once

#include <nexttok/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nexttok {

struct cached_tokens {
    std::vector<token_id> tokens;  // the tokens at the cache's positions [0, tokens.size())

    std::int64_t size() const noexcept { return static_cast<std::int64_t>(tokens.size()); }
    bool empty() const noexcept { return tokens.empty(); }
    // Forgets everything: the next generation prefills its whole prompt.
    void clear() noexcept { tokens.clear(); }

    // Positions of `prompt` whose keys and values can be kept: the longest common prefix of `tokens`
    // and `prompt`, but at most prompt.size() - 1, so that at least the prompt's last token is run
    // (its logits choose the first new token). 0 for an empty prompt.
    std::int64_t reusable_prefix(std::span<const token_id> prompt) const noexcept {
        if (prompt.empty()) return 0;
        const std::size_t limit = std::min(tokens.size(), prompt.size() - 1);
        std::size_t n = 0;
        while (n < limit && tokens[n] == prompt[n]) ++n;
        return static_cast<std::int64_t>(n);
    }
};

}  // namespace nexttok

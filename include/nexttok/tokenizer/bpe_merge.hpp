// One merge rule of byte-level BPE, by token ids: what bpe_tokenizer is built from and what the
// loaders read from merges.txt, vocab.bpe, tokenizer.json and GGUF (detail/merge_rules.hpp).
#pragma once

#include <nexttok/types.hpp>

namespace nexttok {

// One merge rule: the adjacent symbols `left` `right` become `result`. Its rank (priority, lower
// merges first) is its position in the list given to bpe_tokenizer.
struct bpe_merge {
    token_id left = no_token;
    token_id right = no_token;
    token_id result = no_token;
    friend bool operator==(const bpe_merge&, const bpe_merge&) = default;
};

}  // namespace nexttok

// Cutting the texts of special tokens out of an input before it is split and merged, as llama.cpp's
// tokenizer_st_partition does: user-defined tokens always, control and unknown tokens only when
// parse_special is set (so "<|endoftext|>" typed by a user stays plain text unless asked).
// Longest special text first, each occurrence left to right; the rest is raw text.
//
// Cost: O(n_special_texts * text size) per call; encoding is not in the token loop.
#pragma once

#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <string_view>
#include <vector>

namespace nexttok::detail {

// A piece of the input: raw text [begin, begin + length), or a special token matched whole.
struct text_fragment {
    std::size_t begin = 0, length = 0;
    token_id id = no_token;  // no_token: raw text
};

inline std::vector<text_fragment> partition_special(const vocabulary& vocab, std::string_view text,
                                                    bool parse_special) {
    std::vector<text_fragment> fragments{{0, text.size(), no_token}};
    std::vector<text_fragment> next;
    for (const token_id special : vocab.special_texts()) {
        const token_data& t = vocab[special];
        if (!parse_special && t.type != token_type::user_defined) continue;
        next.clear();
        for (const text_fragment& f : fragments) {
            if (f.id != no_token) {
                next.push_back(f);
                continue;
            }
            const std::string_view raw = text.substr(f.begin, f.length);
            std::size_t pos = 0;
            for (std::size_t hit; (hit = raw.find(t.text, pos)) != std::string_view::npos; pos = hit + t.text.size()) {
                if (hit > pos) next.push_back({f.begin + pos, hit - pos, no_token});
                next.push_back({f.begin + hit, t.text.size(), special});
            }
            if (pos < raw.size()) next.push_back({f.begin + pos, raw.size() - pos, no_token});
        }
        fragments.swap(next);
    }
    return fragments;
}

}  // namespace nexttok::detail

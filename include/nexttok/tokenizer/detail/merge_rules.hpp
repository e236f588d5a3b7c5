// Reading BPE merge rules as the files spell them ("Ġ t" in vocab.bpe / merges.txt, GGUF's
// tokenizer.ggml.merges and older tokenizer.json files; ["Ġ", "t"] in newer tokenizer.json files)
// and resolving them against a vocabulary. The loaders turn a problem into a format_error that
// names their file and the rule's position.
#pragma once

#include <nexttok/tokenizer/bpe_merge.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace nexttok::detail {

// "left right" split at the first space after the first byte (llama.cpp's rule: byte-level texts
// never contain a raw space, so the space is the separator). nullopt when there is none.
inline std::optional<std::pair<std::string_view, std::string_view>> split_merge_line(std::string_view line) {
    const std::size_t space = line.find(' ', 1);
    if (space == std::string_view::npos) return std::nullopt;
    return std::pair{line.substr(0, space), line.substr(space + 1)};
}

// The rule that merges `left` and `right`; nullopt with `problem` set when a part or the result is
// not a token of vocab.
inline std::optional<bpe_merge> resolve_bpe_merge(const vocabulary& vocab, std::string_view left,
                                                  std::string_view right, std::string& problem) {
    const auto quoted = [](std::string_view s) {
        std::string q(1, '\'');
        q.append(s).push_back('\'');
        return q;
    };
    bpe_merge m;
    m.left = vocab.find(left);
    m.right = vocab.find(right);
    if (m.left == no_token || m.right == no_token) {
        problem = (m.left == no_token ? quoted(left) : quoted(right)) + " is not a token of the vocabulary";
        return std::nullopt;
    }
    std::string joined;
    joined.reserve(left.size() + right.size());
    joined.append(left).append(right);
    m.result = vocab.find(joined);
    if (m.result == no_token || left.empty() || right.empty()) {
        problem = "the merged text " + quoted(joined) + " is not a token of the vocabulary";
        return std::nullopt;
    }
    return m;
}

}  // namespace nexttok::detail

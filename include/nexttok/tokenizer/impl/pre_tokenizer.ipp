// The definitions of pre_tokenizer.hpp.
#pragma once

#include <nexttok/tokenizer/pre_tokenizer.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tokenizer/detail/pcre2_regex.hpp>
#include <nexttok/tokenizer/pre_tokenizer_kind.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

NEXTTOK_DECL pre_tokenizer::pre_tokenizer(pre_tokenizer_kind kind) : kind_(kind) {
    if (kind == pre_tokenizer_kind::custom)
        throw invalid_argument_error("pre_tokenizer: a custom pre-tokenizer needs its patterns (from_pattern)");
    for (const std::string_view p : pre_tokenizer_patterns(kind)) regexes_.emplace_back(std::string(p));
}

NEXTTOK_DECL pre_tokenizer pre_tokenizer::from_pattern(std::string pattern) {
    std::vector<std::string> one;
    one.push_back(std::move(pattern));
    return from_patterns(std::move(one));
}

NEXTTOK_DECL pre_tokenizer pre_tokenizer::from_patterns(std::vector<std::string> patterns) {
    if (patterns.empty()) throw invalid_argument_error("pre_tokenizer: no expression to split with");
    for (const auto& row : built_in_pre_tokenizers())
        if (std::equal(patterns.begin(), patterns.end(), row.patterns.begin(), row.patterns.end()))
            return pre_tokenizer(row.kind);
    return pre_tokenizer(std::move(patterns));
}

NEXTTOK_DECL std::vector<std::string_view> pre_tokenizer::split(std::string_view text) const {
    std::vector<std::string_view> pieces;
    scratch md;
    for_each_piece(text, md, [&](std::string_view p) { pieces.push_back(p); });
    return pieces;
}

NEXTTOK_DECL pre_tokenizer::pre_tokenizer(std::vector<std::string> patterns) : kind_(pre_tokenizer_kind::custom) {
    for (std::string& p : patterns) regexes_.emplace_back(std::move(p));
}

}  // namespace nexttok

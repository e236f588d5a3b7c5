// The definitions of bpe_tokenizer.hpp.
#pragma once

#include <nexttok/tokenizer/bpe_tokenizer.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tokenizer/detail/bpe_merge.hpp>
#include <nexttok/tokenizer/detail/byte_level.hpp>
#include <nexttok/tokenizer/detail/piece_tokenizer.hpp>
#include <nexttok/tokenizer/detail/special_partition.hpp>
#include <nexttok/tokenizer/pre_tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

struct bpe_tokenizer::merge_ranks {
    detail::bpe_ranks ranks;
};

NEXTTOK_DECL bpe_tokenizer::bpe_tokenizer(vocabulary vocab, const std::vector<bpe_merge>& merges, pre_tokenizer pre,
                                          bpe_options options)
        : piece_tokenizer(std::move(vocab), make_piece, [](const token_data&) { return false; }),
          ranks_(checked(vocab_, merges)),
          pre_(std::move(pre)),
          options_(options) {
    const auto& table = detail::byte_level_table::get();
    for (unsigned b = 0; b < 256; ++b) {
        const token_id id = vocab_.find(table.symbol(static_cast<unsigned char>(b)));
        byte_symbols_[b] = id != no_token && is_mergeable(vocab_[id].type) ? id : no_token;
    }
}

NEXTTOK_DECL std::vector<token_id> bpe_tokenizer::encode(std::string_view text, bool add_bos,
                                                         bool parse_special) const {
    std::vector<token_id> out = bos_prefix(add_bos);
    if (text.empty()) return out;

    detail::bpe_word_merger merger(ranks_->ranks);
    pre_tokenizer::scratch scratch;  // allocated by the first fragment that needs it
    std::string spelled;             // ignore_merges: the byte-level spelling of a pre-token
    for (const detail::text_fragment& f : detail::partition_special(vocab_, text, parse_special)) {
        if (f.id != no_token) {
            out.push_back(f.id);
            continue;
        }
        pre_.for_each_piece(text.substr(f.begin, f.length), scratch,
                            [&](std::string_view word) { encode_word(word, merger, spelled, out); });
    }
    return out;
}

NEXTTOK_DECL std::size_t bpe_tokenizer::n_merges() const noexcept { return ranks_ ? ranks_->ranks.size() : 0; }

NEXTTOK_DECL std::shared_ptr<const bpe_tokenizer::merge_ranks> bpe_tokenizer::checked(
    const vocabulary& vocab, const std::vector<bpe_merge>& merges) {
    std::vector<bpe_merge> usable;
    usable.reserve(merges.size());
    for (std::size_t i = 0; i < merges.size(); ++i) {
        const bpe_merge& m = merges[i];
        if (!vocab.contains(m.left) || !vocab.contains(m.right) || !vocab.contains(m.result))
            throw invalid_argument_error("bpe_tokenizer: merge " + std::to_string(i) +
                                         " names a token id outside the vocabulary");
        const std::string_view l = vocab[m.left].text, r = vocab[m.right].text, result = vocab[m.result].text;
        if (l.empty() || r.empty() || result.size() != l.size() + r.size() || !result.starts_with(l) ||
            !result.ends_with(r))
            throw invalid_argument_error("bpe_tokenizer: merge " + std::to_string(i) + " ('" + std::string(l) + "' '" +
                                         std::string(r) + "') does not make token " + std::to_string(m.result) + " ('" +
                                         std::string(result) + "')");
        // Unusable rules keep their rank slot so that ranks stay the positions in the list.
        usable.push_back(is_mergeable(vocab[m.result].type) ? m : bpe_merge{no_token, no_token, no_token});
    }
    return std::make_shared<const merge_ranks>(merge_ranks{detail::bpe_ranks(usable)});
}

NEXTTOK_DECL std::string bpe_tokenizer::make_piece(const token_data& t) {
    switch (t.type) {
        case token_type::control:
            return {};
        case token_type::user_defined:
        case token_type::unknown:
            return t.text;  // added tokens are stored as plain text, not byte-level
        case token_type::byte:
            if (const auto b = detail::parse_byte_token(t.text)) return std::string(1, static_cast<char>(*b));
            return t.text;
        default:
            return detail::byte_level_table::get().decode(t.text);
    }
}

NEXTTOK_DECL void bpe_tokenizer::encode_word(std::string_view word, detail::bpe_word_merger& merger,
                                             std::string& spelled, std::vector<token_id>& out) const {
    if (options_.ignore_merges) {
        spelled.clear();
        detail::byte_level_table::get().append_encoded(word, spelled);
        const token_id id = vocab_.find(spelled);
        if (id != no_token && vocab_[id].type == token_type::normal) {
            out.push_back(id);
            return;
        }
    }
    merger.clear();
    for (const char c : word) {
        const token_id id = byte_symbols_[static_cast<unsigned char>(c)];
        if (id != no_token) {
            merger.push(id);
        } else if (vocab_.unk() != no_token) {
            merger.push(vocab_.unk());
        }
    }
    merger.merge_into(out);
}

}  // namespace nexttok

// Byte-level BPE as GPT-2, Llama 3 and Qwen2 use it (OpenAI's encoder.py, HF tokenizers' BPE model
// with the ByteLevel pre-tokenizer, llama.cpp's llm_tokenizer_bpe).
//
// Encoding a text:
//   1. special texts are cut out first (detail/special_partition.hpp): user-defined tokens always,
//      control tokens ("<|endoftext|>", "<|begin_of_text|>") only when parse_special is set;
//   2. each remaining fragment is cut into pre-tokens by the model's regular expression
//      (pre_tokenizer.hpp);
//   3. with ignore_merges (Llama 3), a pre-token whose byte-level spelling is a whole normal token
//      is that token;
//   4. otherwise each byte of the pre-token becomes the token of its byte-level character ("Ġ" for
//      ' ') and the ranked merges run (detail/bpe_merge.hpp).
// No Unicode normalization is applied (llama.cpp applies none either; see hf_tokenizer_file.hpp).
//
// Decoding: normal tokens go back through the inverse byte table ("Ġworld" -> " world", "Ã©" -> the
// two bytes of "é"), user-defined tokens are their own text, control tokens produce nothing. The
// result is raw bytes; a token can end in the middle of a UTF-8 character (GPT-2 spells "👋" with
// two tokens), which the streaming detokenizer holds back. No clean-up of spaces before punctuation
// (llama.cpp's clean_spaces, HF's clean_up_tokenization_spaces): decode(encode(text)) == text.
//
// Thread-safety: immutable after construction; concurrent calls are safe.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/tokenizer/detail/bpe_merge.hpp>
#include <nexttok/tokenizer/detail/byte_level.hpp>
#include <nexttok/tokenizer/detail/piece_tokenizer.hpp>
#include <nexttok/tokenizer/detail/special_partition.hpp>
#include <nexttok/tokenizer/pre_tokenizer.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

struct bpe_options {
    bool ignore_merges = false;  // Llama 3: a pre-token that is a whole normal token is emitted as is
    bool add_bos = false;        // the model's default for prompts (tokenizer.ggml.add_bos_token)
    bool add_eos = false;        // the model's default at the end of a prompt (tokenizer.ggml.add_eos_token)
};

// decode_piece, decode, token_to_piece and vocab() are those of detail::piece_tokenizer: normal tokens
// through the inverse byte table, added tokens as their text, control tokens as nothing.
class bpe_tokenizer : public detail::piece_tokenizer {
public:
    // merges: in rank order (the first merges first). invalid_argument_error when a rule names an id
    // outside the vocabulary or its result is not the concatenation of its two parts. Loaders check
    // their files first and report the same problems as format_error with the file and position.
    // A rule whose result is a control, unknown or byte token is ignored: plain text never turns
    // into those by merging.
    bpe_tokenizer(vocabulary vocab, const std::vector<bpe_merge>& merges, pre_tokenizer pre, bpe_options options)
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

    // Token ids of `text`, with BOS first when add_bos (invalid_argument_error when there is no BOS).
    // Any byte string encodes, invalid UTF-8 included, when the vocabulary has the 256 byte-level
    // characters (every GPT-2 style vocabulary does); a byte without one becomes <unk> if there is
    // one and is dropped otherwise, as HF and llama.cpp do.
    std::vector<token_id> encode(std::string_view text, bool add_bos, bool parse_special = false) const {
        std::vector<token_id> out = bos_prefix(add_bos);
        if (text.empty()) return out;

        detail::bpe_word_merger merger(ranks_);
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

    const bpe_options& options() const noexcept { return options_; }
    const pre_tokenizer& pre() const noexcept { return pre_; }
    // The number of distinct merge rules in use.
    std::size_t n_merges() const noexcept { return ranks_.size(); }

private:
    static bool is_mergeable(token_type t) noexcept {
        return t == token_type::normal || t == token_type::user_defined || t == token_type::unused;
    }

    static detail::bpe_ranks checked(const vocabulary& vocab, const std::vector<bpe_merge>& merges) {
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
                throw invalid_argument_error("bpe_tokenizer: merge " + std::to_string(i) + " ('" + std::string(l) +
                                             "' '" + std::string(r) + "') does not make token " +
                                             std::to_string(m.result) + " ('" + std::string(result) + "')");
            // Unusable rules keep their rank slot so that ranks stay the positions in the list.
            usable.push_back(is_mergeable(vocab[m.result].type) ? m : bpe_merge{no_token, no_token, no_token});
        }
        return detail::bpe_ranks(usable);
    }

    static std::string make_piece(const token_data& t) {
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

    void encode_word(std::string_view word, detail::bpe_word_merger& merger, std::string& spelled,
                     std::vector<token_id>& out) const {
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

    detail::bpe_ranks ranks_;
    pre_tokenizer pre_;
    bpe_options options_;
    std::array<token_id, 256> byte_symbols_{};  // byte -> the token of its byte-level character, or no_token
};

}  // namespace nexttok

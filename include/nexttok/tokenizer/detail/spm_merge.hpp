// The SentencePiece-BPE merge of one text fragment, as llama.cpp's llm_tokenizer_spm and
// SentencePiece's bpe_model do it:
//   1. split the (already escaped) text into characters; a byte that does not start a well-formed
//      UTF-8 character is a symbol of its own;
//   2. repeatedly merge the adjacent pair whose concatenation is a vocabulary piece of the highest
//      score (ties: the leftmost pair);
//   3. emit each final symbol: its piece id, or, for a symbol that is no emittable piece, its
//      byte-fallback tokens <0xNN> (or one <unk> per run when the vocabulary has no byte tokens).
// Unused pieces may be merged through but are never emitted: they are split back into the two
// symbols they were made of (SentencePiece's resegmentation).
//
// Cost: O(n log n) for n characters. Allocates its node and queue storage per call; encoding is not
// in the token loop.
#pragma once

#include <nexttok/detail/utf8.hpp>
#include <nexttok/error.hpp>
#include <nexttok/tokenizer/vocabulary.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok::detail {

// Pieces that take part in merges. Control, unknown and byte tokens never do, so plain text can
// not turn into "<s>" or "<0x41>" by merging.
inline bool is_mergeable(token_type t) noexcept {
    return t == token_type::normal || t == token_type::user_defined || t == token_type::unused;
}

class spm_merge {
public:
    spm_merge(const vocabulary& vocab, std::string_view text) : vocab_(vocab), text_(text) {}

    // Appends the ids of the whole text to out.
    void run(std::vector<token_id>& out) {
        if (text_.empty()) return;
        split_characters();
        for (std::size_t i = 0; i + 1 < nodes_.size(); ++i) push_pair(i, i + 1);
        merge_all();
        for (std::size_t i = head_; i != npos; i = nodes_[i].next) emit(i, out);
    }

private:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

    // A symbol of the current segmentation, or one that was merged away (alive == false). A merge
    // appends a new node whose children are the two merged ones: the tree re-segmentation walks.
    struct node {
        std::size_t begin = 0, length = 0;  // its bytes in text_
        std::size_t prev = npos, next = npos;
        std::size_t left = npos, right = npos;
        token_id id = no_token;  // the mergeable piece with exactly this text, if any
        bool alive = true;
    };

    struct candidate {
        float score;
        std::size_t position;  // byte offset of the left symbol: the tie-break (leftmost first)
        std::size_t left, right;
        token_id id;  // the piece the pair would become
    };
    struct lower_priority {
        bool operator()(const candidate& a, const candidate& b) const noexcept {
            if (a.score != b.score) return a.score < b.score;
            return a.position > b.position;
        }
    };

    token_id mergeable_id(std::string_view piece) const {
        const token_id id = vocab_.find(piece);
        return id != no_token && is_mergeable(vocab_[id].type) ? id : no_token;
    }

    void split_characters() {
        nodes_.reserve(2 * text_.size());
        for (std::size_t offset = 0; offset < text_.size();) {
            const utf8_scan c = scan_utf8(text_.substr(offset));
            const std::size_t length = c.status == utf8_status::valid ? c.length : 1;
            node n;
            n.begin = offset;
            n.length = length;
            n.prev = nodes_.empty() ? npos : nodes_.size() - 1;
            n.id = mergeable_id(text_.substr(offset, length));
            if (!nodes_.empty()) nodes_.back().next = nodes_.size();
            nodes_.push_back(n);
            offset += length;
        }
        head_ = 0;
    }

    void push_pair(std::size_t left, std::size_t right) {
        if (left == npos || right == npos) return;
        const node& l = nodes_[left];
        const token_id id = mergeable_id(text_.substr(l.begin, l.length + nodes_[right].length));
        if (id == no_token) return;
        queue_.push({vocab_[id].score, l.begin, left, right, id});
    }

    void merge_all() {
        while (!queue_.empty()) {
            const candidate c = queue_.top();
            queue_.pop();
            // Stale: one side was merged with another neighbour since this pair was queued. While
            // both are alive they are still adjacent, since only a merge changes adjacency.
            if (!nodes_[c.left].alive || !nodes_[c.right].alive) continue;

            node merged;
            merged.begin = nodes_[c.left].begin;
            merged.length = nodes_[c.left].length + nodes_[c.right].length;
            merged.prev = nodes_[c.left].prev;
            merged.next = nodes_[c.right].next;
            merged.left = c.left;
            merged.right = c.right;
            merged.id = c.id;
            const std::size_t m = nodes_.size();
            nodes_.push_back(merged);  // may reallocate: no references into nodes_ are held here
            nodes_[c.left].alive = false;
            nodes_[c.right].alive = false;
            if (merged.prev != npos)
                nodes_[merged.prev].next = m;
            else
                head_ = m;
            if (merged.next != npos) nodes_[merged.next].prev = m;

            push_pair(merged.prev, m);
            push_pair(m, merged.next);
        }
    }

    void emit(std::size_t i, std::vector<token_id>& out) {
        const node& n = nodes_[i];  // nodes_ no longer grows: the reference stays valid
        if (n.id != no_token && vocab_[n.id].type != token_type::unused) {
            out.push_back(n.id);
            last_was_unk_ = false;
        } else if (n.left != npos) {
            emit(n.left, out);
            emit(n.right, out);
        } else {
            fall_back(text_.substr(n.begin, n.length), out);
        }
    }

    void fall_back(std::string_view bytes, std::vector<token_id>& out) {
        if (vocab_.has_byte_fallback()) {
            for (const char b : bytes) out.push_back(vocab_.byte_token(static_cast<unsigned char>(b)));
            last_was_unk_ = false;
            return;
        }
        if (vocab_.unk() == no_token)
            throw invalid_argument_error(
                "text at byte " + std::to_string(bytes.data() - text_.data()) +
                " cannot be encoded: the vocabulary has neither byte-fallback tokens nor <unk>");
        // SentencePiece merges a run of unknown symbols into one <unk>.
        if (!last_was_unk_) out.push_back(vocab_.unk());
        last_was_unk_ = true;
    }

    const vocabulary& vocab_;
    std::string_view text_;
    std::vector<node> nodes_;
    std::size_t head_ = npos;
    std::priority_queue<candidate, std::vector<candidate>, lower_priority> queue_;
    bool last_was_unk_ = false;
};

}  // namespace nexttok::detail

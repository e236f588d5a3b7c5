// No-repeat-n-gram (Paulus et al. 2018, "A Deep Reinforced Model for Abstractive Summarization"; the
// rule of fairseq and Hugging Face's NoRepeatNGramLogitsProcessor): no n-gram may occur twice. Before
// each draw, every token t such that (last n-1 tokens, t) already occurs in the context is removed.
// With n = 1 every token of the context is removed. Nothing is removed while the context is shorter
// than n tokens. n = 0 disables the stage.
//
// Context: HF matches over prompt + generated tokens. Here the context is the accepted tokens; those
// accepted before the first apply() are the prompt (penalties.hpp) and count when include_prompt (the
// default, as HF). Removing candidates can empty the set (a tiny vocabulary): the chain then throws
// sampling_error. Cost per apply: O(context * n). The context grows with the sequence (amortized).
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/id_mask.hpp>
#include <nexttok/sampling/detail/token_history.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>

namespace nexttok {

class no_repeat_ngram {
public:
    // Throws invalid_argument_error for n < 0.
    NEXTTOK_DECL explicit no_repeat_ngram(std::int32_t n, bool include_prompt = true);

    NEXTTOK_DECL void apply(candidates& c);

    void accept(token_id t) {
        if (n_ == 0 || (in_prompt_ && !include_prompt_)) return;
        context_.push(t);
    }

    void reset() {
        context_.clear();
        in_prompt_ = true;
    }

    std::int32_t n() const noexcept { return n_; }

private:
    std::int32_t n_;
    bool include_prompt_;
    bool in_prompt_ = true;
    detail::token_history context_;  // every accepted token (unbounded)
    detail::id_mask banned_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/no_repeat_ngram.ipp>
#endif

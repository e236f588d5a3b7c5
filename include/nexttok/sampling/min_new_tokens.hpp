// Min-new-tokens (Hugging Face's MinNewTokensLengthLogitsProcessor): the end-of-sequence ids are
// removed from the candidates until n tokens have been generated, so generation cannot end earlier
// through EOS (stop strings and other criteria still can). Generated tokens are those accepted after
// the first apply() (the prompt is accepted before it, see penalties.hpp): at the draw of the k-th
// generated token (k = 0, 1, ...) EOS is masked while k < n, as HF's new_tokens_length < min_new_tokens.
// A set of EOS ids alone becomes empty: the chain then throws sampling_error.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nexttok {

class min_new_tokens {
public:
    // Negative ids (no_token) are ignored. Throws invalid_argument_error for n < 0.
    NEXTTOK_DECL min_new_tokens(std::int64_t n, std::vector<token_id> eos_ids);

    NEXTTOK_DECL void apply(candidates& c);

    void accept(token_id) {
        if (!in_prompt_) ++n_generated_;
    }

    void reset() {
        in_prompt_ = true;
        n_generated_ = 0;
    }

    std::int64_t n() const noexcept { return n_; }
    std::int64_t n_generated() const noexcept { return n_generated_; }

private:
    std::int64_t n_;
    std::vector<token_id> eos_;
    bool in_prompt_ = true;
    std::int64_t n_generated_ = 0;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/min_new_tokens.ipp>
#endif

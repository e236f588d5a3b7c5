// Min-new-tokens (Hugging Face's MinNewTokensLengthLogitsProcessor): the end-of-sequence ids are
// removed from the candidates until n tokens have been generated, so generation cannot end earlier
// through EOS (stop strings and other criteria still can). Generated tokens are those accepted after
// the first apply() (the prompt is accepted before it, see penalties.hpp): at the draw of the k-th
// generated token (k = 0, 1, ...) EOS is masked while k < n, as HF's new_tokens_length < min_new_tokens.
// A set of EOS ids alone becomes empty: the chain then throws sampling_error.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nexttok {

class min_new_tokens {
public:
    // Negative ids (no_token) are ignored. Throws invalid_argument_error for n < 0.
    min_new_tokens(std::int64_t n, std::vector<token_id> eos_ids) : n_(n), eos_(std::move(eos_ids)) {
        if (n < 0) throw invalid_argument_error("min_new_tokens: n = " + std::to_string(n) + ": must be >= 0");
        std::erase_if(eos_, [](token_id t) { return t < 0; });
    }

    void apply(candidates& c) {
        in_prompt_ = false;
        if (n_generated_ >= n_ || eos_.empty()) return;
        c.keep_if([&](std::size_t i) { return std::find(eos_.begin(), eos_.end(), c.ids[i]) == eos_.end(); });
    }

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

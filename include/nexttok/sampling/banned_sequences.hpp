// Banned token sequences (Hugging Face's NoBadWordsLogitsProcessor, bad_words_ids): a sequence
// s_1..s_m may never be generated. A one-token sequence removes s_1 from every draw; a longer one
// removes s_m when the context ends with s_1..s_(m-1). The context is every accepted token, prompt
// included (as HF, which matches over the whole input_ids), so a sequence that straddles the end of
// the prompt is banned too. Like HF this bans only the completion: it cannot steer away from a prefix
// that is already there. Removing candidates can empty the set: the chain then throws sampling_error.
// Cost per apply: O(total length of the sequences).
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/id_mask.hpp>
#include <nexttok/sampling/detail/token_history.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nexttok {

class banned_sequences {
public:
    // Throws invalid_argument_error for an empty sequence or a negative id.
    NEXTTOK_DECL explicit banned_sequences(std::vector<std::vector<token_id>> sequences);

    NEXTTOK_DECL void apply(candidates& c);

    void accept(token_id t) { context_.push(t); }
    void reset() { context_.clear(); }

    const std::vector<std::vector<token_id>>& sequences() const noexcept { return sequences_; }

private:
    NEXTTOK_DECL static std::int64_t longest_prefix_(const std::vector<std::vector<token_id>>& sequences);

    std::vector<std::vector<token_id>> sequences_;
    detail::token_history context_;  // the last (longest sequence - 1) accepted tokens
    detail::id_mask banned_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/banned_sequences.ipp>
#endif

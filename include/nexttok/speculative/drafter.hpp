// The drafter concept: what proposes the tokens speculative decoding verifies. Two kinds satisfy it:
// model_drafter (a smaller model with the same vocabulary, its own decoder and cache) and
// ngram_drafter (prompt lookup: the tokens that followed an earlier occurrence of the context's last
// n-gram). A round of generate_speculative() calls
//
//   d.propose(sequence, k, pick, out)   append at most k tokens to `out` (empty on entry) continuing
//                                       `sequence` (prompt + generated so far). Either every token
//                                       comes from pick(logits), a callable that turns the draft
//                                       model's logits (vocab_size, for the position after the tokens
//                                       so far) into a token and records the distribution q it was
//                                       drawn from; or none does, and the drafter is deterministic:
//                                       q is one-hot on the token it proposes.
//   d.rollback(n)                       the verification kept the sequence's first n tokens as the
//                                       ones whose positions are cached (the target's cache holds
//                                       exactly [0, n)); anything the drafter holds beyond is stale.
//
// and before the first round d.check_vocabulary(target_vocab_size, target_name) (throws
// invalid_argument_error naming both models when the drafter cannot propose ids of that vocabulary)
// and d.begin(prompt) (a new generation starts).
#pragma once

#include <nexttok/types.hpp>

#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

namespace detail {

// The pick a drafter is given (the generation loop's is detail::draft_picker): logits in, token out.
struct draft_pick_archetype {
    token_id operator()(std::span<const float> logits);
};

// The model file a decoder runs, for messages ("<decoder>" for a decoder type that does not say).
template <class Decoder>
std::string decoder_name(const Decoder& dec) {
    if constexpr (requires { dec.get_model()->file_name(); })
        return dec.get_model()->file_name();
    else
        return "<decoder>";
}

}  // namespace detail

template <class D>
concept drafter = requires(D& d, const D& cd, std::span<const token_id> sequence, std::int64_t n,
                           detail::draft_pick_archetype& pick, std::vector<token_id>& out, std::string_view name) {
    cd.check_vocabulary(n, name);
    d.begin(sequence);
    d.propose(sequence, n, pick, out);
    d.rollback(n);
};

}  // namespace nexttok

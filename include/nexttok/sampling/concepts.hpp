// The concepts of the sampling module, after llama.cpp's sampler interface (apply + optional accept
// and reset) with the selector made a separate role:
//   logits -> candidates -> logits_processor::apply ... -> token_selector::select -> token
// A `sampler` is the whole pipeline seen from generate(): logits in, one token out.
#pragma once

#include <nexttok/sampling/candidates.hpp>
#include <nexttok/types.hpp>

#include <concepts>
#include <span>

namespace nexttok {

// Transforms the candidate set in place: filters it, rescales or biases logits, computes probs.
template <class P>
concept logits_processor = requires(P& p, candidates& c) { p.apply(c); };

// Ends a chain: picks one token of the (non-empty) candidate set. May compute probs on the way.
template <class S>
concept token_selector = requires(S& s, candidates& c) {
    { s.select(c) } -> std::same_as<token_id>;
};

// A stage with state fed by the chosen token (repetition penalties, grammars, mirostat).
//
// The prompt convention: generate() feeds the prompt's tokens through accept() before the first
// draw. A stage that treats prompt and generated tokens differently (penalties with include_prompt =
// false, min_new_tokens) counts a token accepted before its first apply() since construction or
// reset() as a prompt token, and every later one as generated. So reset() a sampler between two
// generations that should not share history.
template <class T>
concept accepts_tokens = requires(T& t, token_id id) { t.accept(id); };

// A stage whose state can be returned to its initial value (an RNG reseeds, a history clears).
template <class T>
concept resets_state = requires(T& t) { t.reset(); };

// The whole pipeline, as generate() uses it. sample() draws a token and accepts it; accept() feeds a
// token without sampling (prompt tokens); last_logprob() is the log-probability of the last sampled
// token under the distribution it was drawn from.
template <class S>
concept sampler = requires(S& s, const S& cs, std::span<const float> logits, token_id id) {
    { s.sample(logits) } -> std::same_as<token_id>;
    s.accept(id);
    s.reset();
    { cs.last_logprob() } -> std::convertible_to<float>;
};

namespace detail {

template <class T>
void accept_if_supported(T& stage, token_id id) {
    if constexpr (accepts_tokens<T>) stage.accept(id);
}

template <class T>
void reset_if_supported(T& stage) {
    if constexpr (resets_state<T>) stage.reset();
}

}  // namespace detail
}  // namespace nexttok

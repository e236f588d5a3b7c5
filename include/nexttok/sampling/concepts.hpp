// The concepts of the sampling module, after llama.cpp's sampler interface (apply + optional accept
// and reset) with the selector made a separate role:
//   logits -> candidates -> logits_processor::apply ... -> token_selector::select -> token
// A `sampler` is the whole pipeline seen from generate(): logits in, one token out.
#pragma once

#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/token_distribution.hpp>
#include <nexttok/types.hpp>

#include <concepts>
#include <span>

namespace nexttok {

// Transforms the candidate set in place: filters it, rescales or biases logits, computes probs.
template <class P>
concept logits_processor = requires(P& p, candidates& c) {
    p.apply(c);
};

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
concept accepts_tokens = requires(T& t, token_id id) {
    t.accept(id);
};

// A stage whose state can be returned to its initial value (an RNG reseeds, a history clears).
template <class T>
concept resets_state = requires(T& t) {
    t.reset();
};

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

// A selector whose choice has a distribution that can be stated without drawing: distribution(c)
// returns, for the candidate set it would select from, the probability of each token of being
// selected (categorical: the softmax; greedy: 1 for the argmax). Mirostat has none: the set it draws
// from depends on a state that select() updates with the drawn token's surprise.
template <class S>
concept distribution_selector = token_selector<S> && requires(S& s, candidates& c) {
    { s.distribution(c) } -> std::same_as<token_distribution>;
};

// A processor whose apply() draws random numbers (XTC) says so with
// `static constexpr bool draws_random_numbers = true;`: its output is then not a function of the
// candidates and the accepted tokens, so a chain holding it cannot state its distribution.
template <class P>
inline constexpr bool draws_random_numbers_v = requires {
    requires P::draws_random_numbers;
};

// A sampler that can state the distribution it would draw from, and take a token drawn elsewhere
// (speculative decoding: the verification draws by rejection sampling from that distribution).
//   distribution(logits)  applies the processors as sample() does, without selecting or accepting;
//                         the view is valid until the next call (throws unsupported_error when
//                         has_distribution() is false)
//   choose(id)            ends the step as sample() would have with `id`: every stage accepts it and
//                         last_logprob() reports it (under the candidates distribution() left)
//   has_distribution()    false when a stage cannot state it (a type-erased chain knows at run time)
// distribution(logits) then choose(id) with id drawn from it is, in distribution and in the state it
// leaves, exactly sample(logits).
template <class S>
concept distribution_sampler = sampler<S> && requires(S& s, const S& cs, std::span<const float> logits, token_id id) {
    { s.distribution(logits) } -> std::same_as<token_distribution>;
    s.choose(id);
    { cs.has_distribution() } -> std::convertible_to<bool>;
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

// Whether stage.apply() draws random numbers: the stage's own answer when it knows it only at run
// time from what it holds (any_processor, a chain used as a processor), else draws_random_numbers_v.
template <class P>
bool draws_random_numbers(const P& stage) noexcept {
    if constexpr (requires {
                      { stage.draws_random_numbers() } -> std::convertible_to<bool>;
                  })
        return stage.draws_random_numbers();
    else
        return draws_random_numbers_v<P>;
}

}  // namespace detail
}  // namespace nexttok

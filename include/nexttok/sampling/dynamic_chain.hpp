// A sampler chain assembled at run time: a vector of type-erased processors and one type-erased
// selector, with exactly the semantics of sampler_chain (same order of apply, select, logprob,
// accept), so the same stages give the same tokens either way. It satisfies `sampler`.
//
//   dynamic_chain chain({top_k{40}, top_p{0.95f}, temperature{0.8f}}, categorical{seed});
//
// Owns its stages and its candidates buffer; the only per-token costs over the static chain are one
// virtual call per stage. Copyable (clones every stage with its state); not thread-safe.
// distribution() + choose() split sample() in two as sampler_chain's do; has_distribution() says at
// run time whether the stages allow it (a selector with a distribution, no processor drawing).
//
// Like sampler_chain, it is itself a processor: apply(c) runs its processors in order on c, so a
// dynamic_chain can be one of the processors of another dynamic_chain or of a sampler_chain, and
// either kind can be one of its processors, with the results of the flat chain. The nested chain's
// selector is not used; accept() and reset() reach it all the same (see sampler_chain.hpp).
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/sampling/any_processor.hpp>
#include <nexttok/sampling/any_selector.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/logprob.hpp>
#include <nexttok/sampling/sampling_error.hpp>
#include <nexttok/sampling/token_distribution.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace nexttok {

class dynamic_chain {
public:
    dynamic_chain(std::vector<any_processor> processors, any_selector selector)
            : processors_(std::move(processors)), selector_(std::move(selector)) {}

    // As a processor of another chain: every processor of this chain, in order, on c (the selector
    // is not used; last_candidates() and last_logprob() are left as they were).
    NEXTTOK_DECL void apply(candidates& c);

    // Throws invalid_argument_error for empty logits, sampling_error when the processors removed every
    // candidate.
    NEXTTOK_DECL token_id sample(std::span<const float> logits);

    bool has_distribution() const noexcept { return selector_.has_distribution() && !draws_random_numbers(); }

    // Whether a processor draws random numbers in apply() (XTC, or a nested chain holding one).
    NEXTTOK_DECL bool draws_random_numbers() const noexcept;

    // See sampler_chain::distribution. Throws unsupported_error unless has_distribution().
    NEXTTOK_DECL token_distribution distribution(std::span<const float> logits);

    // See sampler_chain::choose.
    void choose(token_id token) {
        last_.chose(token);
        accept(token);
    }

    NEXTTOK_DECL void accept(token_id token);

    NEXTTOK_DECL void reset();

    // See sampler_chain::last_logprob (lazy, cached) and last_candidates.
    float last_logprob() const noexcept { return last_.logprob(); }
    const candidates& last_candidates() const noexcept { return last_.set; }

    std::size_t n_processors() const noexcept { return processors_.size(); }

private:
    std::vector<any_processor> processors_;
    any_selector selector_;
    detail::last_sample last_;  // its candidate set, the chosen token, the lazy log-probability
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/dynamic_chain.ipp>
#endif

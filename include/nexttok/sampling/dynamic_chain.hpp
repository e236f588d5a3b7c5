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

#include <nexttok/error.hpp>
#include <nexttok/sampling/any_processor.hpp>
#include <nexttok/sampling/any_selector.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/logprob.hpp>
#include <nexttok/sampling/sampling_error.hpp>
#include <nexttok/sampling/token_distribution.hpp>
#include <nexttok/types.hpp>

#include <cassert>
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
    void apply(candidates& c) {
        for (auto& p : processors_) p.apply(c);
    }

    // Throws invalid_argument_error for empty logits, sampling_error when the processors removed every
    // candidate.
    token_id sample(std::span<const float> logits) {
        const token_id token = selector_.select(last_.process(
            logits, [this](candidates& c) { apply(c); }, "dynamic_chain", "sample"));
        assert(token != no_token && "a selector must pick a token of a non-empty set");
        last_.chose(token);
        accept(token);
        return token;
    }

    bool has_distribution() const noexcept { return selector_.has_distribution() && !draws_random_numbers(); }

    // Whether a processor draws random numbers in apply() (XTC, or a nested chain holding one).
    bool draws_random_numbers() const noexcept {
        for (const auto& p : processors_)
            if (p.draws_random_numbers()) return true;
        return false;
    }

    // See sampler_chain::distribution. Throws unsupported_error unless has_distribution().
    token_distribution distribution(std::span<const float> logits) {
        if (!selector_.has_distribution())
            throw unsupported_error(
                "dynamic_chain::distribution: the selector has no distribution that can be stated without drawing "
                "(e.g. mirostat)");
        return selector_.distribution(last_.process(
            logits, [this](candidates& c) { apply(c); }, "dynamic_chain", "distribution", draws_random_numbers()));
    }

    // See sampler_chain::choose.
    void choose(token_id token) {
        last_.chose(token);
        accept(token);
    }

    void accept(token_id token) {
        for (auto& p : processors_) p.accept(token);
        selector_.accept(token);
    }

    void reset() {
        for (auto& p : processors_) p.reset();
        selector_.reset();
        last_.reset();
    }

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

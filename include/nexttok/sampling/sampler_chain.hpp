// A sampler built at compile time from processors and one selector (llama.cpp's sampler chain, with
// the stages as value members instead of a vector of pointers):
//
//   auto s = make_sampler_chain(top_k{40}, top_p{0.95f}, min_p{0.05f}, temperature{0.8f},
//                               categorical{seed});
//   token_id t = s.sample(logits);   // logits: (vocab_size) floats, read only
//
// sample(): the chain's candidates buffer is loaded with the logits (no allocation after the first
// call of the same vocabulary size), every processor is applied in order, the selector picks a token,
// and accept(token) is called on every stage that has it (processors and selector), as
// llama_sampler_sample does. last_logprob() then reports the token's log-probability. Owns its stages and its buffer; movable and copyable when
// the stages are; not thread-safe.
//
// distribution() + choose() (distribution_sampler, concepts.hpp) split sample() in two for speculative
// decoding; they exist when the selector states its distribution and no processor draws random numbers.
// A processor that knows only at run time whether it draws (any_processor, a nested chain) is asked
// by distribution(), which throws unsupported_error when it does.
//
// A chain is itself a processor, so chains nest as llama.cpp's do (a chain is a sampler there too):
//
//   auto truncate = make_sampler_chain(top_k{40}, top_p{0.95f}, greedy{});
//   auto s = make_sampler_chain(penalties{64, 1.1f, 0.0f, 0.0f}, truncate, temperature{0.8f},
//                               categorical{seed});
//
// apply(c) runs the chain's processors in order on c, exactly as the flat chain (penalties, top_k,
// top_p, temperature, categorical) would: same candidates, same tokens, same state. The nested chain's
// selector is not used (greedy{} above only completes its type); accept() and reset() still reach
// every stage of the nested chain, its selector included, which changes nothing the outer chain draws.
// A sampler_chain and a dynamic_chain nest in each other the same way (dynamic_chain.hpp).
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/sampling/detail/logprob.hpp>
#include <nexttok/sampling/sampling_error.hpp>
#include <nexttok/types.hpp>

#include <cassert>
#include <cstddef>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

namespace nexttok {

namespace detail {

// Stages... = processors..., selector.
template <class... Stages>
constexpr bool is_sampler_chain() {
    if constexpr (sizeof...(Stages) == 0) {
        return false;
    } else {
        using tuple = std::tuple<Stages...>;
        constexpr std::size_t n = sizeof...(Stages);
        return []<std::size_t... I>(std::index_sequence<I...>) {
            return (logits_processor<std::tuple_element_t<I, tuple>> && ...);
        }
        (std::make_index_sequence<n - 1>{}) && token_selector<std::tuple_element_t<n - 1, tuple>>;
    }
}

}  // namespace detail

template <class... Stages>
requires(detail::is_sampler_chain<Stages...>()) class sampler_chain {
public:
    static constexpr std::size_t n_processors = sizeof...(Stages) - 1;
    using selector_type = std::tuple_element_t<n_processors, std::tuple<Stages...>>;

    static constexpr bool has_distribution() noexcept {
        return distribution_selector<selector_type>&&[]<std::size_t... I>(std::index_sequence<I...>) {
            return (!draws_random_numbers_v<std::tuple_element_t<I, std::tuple<Stages...>>> && ...);
        }
        (std::make_index_sequence<n_processors>{});
    }

    explicit sampler_chain(Stages... stages) : stages_(std::move(stages)...) {}

    // As a processor of another chain: every processor of this chain, in order, on c (the selector
    // is not used; last_candidates() and last_logprob() are left as they were).
    void apply(candidates& c) { apply_processors_(c, std::make_index_sequence<n_processors>{}); }

    // Whether a processor draws random numbers in apply(): the static trait, or the run-time answer
    // of an any_processor or a nested chain. Then the chain cannot state its distribution.
    bool draws_random_numbers() const noexcept {
        return [this]<std::size_t... I>(std::index_sequence<I...>) {
            return (detail::draws_random_numbers(std::get<I>(stages_)) || ...);
        }
        (std::make_index_sequence<n_processors>{});
    }

    // Throws invalid_argument_error for empty logits, sampling_error when the processors removed every
    // candidate.
    token_id sample(std::span<const float> logits) {
        const token_id token = std::get<n_processors>(stages_).select(last_.process(
            logits, [this](candidates& c) { apply(c); }, "sampler_chain", "sample"));
        assert(token != no_token && "a selector must pick a token of a non-empty set");
        last_.chose(token);
        accept(token);
        return token;
    }

    // The distribution sample(logits) would draw from: the processors run as in sample(), then the
    // selector states its distribution over the survivors; nothing is selected or accepted. Throws
    // as sample() does, and unsupported_error when a processor that decides at run time (any_processor,
    // a nested chain) draws random numbers.
    token_distribution distribution(std::span<const float> logits) requires(has_distribution()) {
        return std::get<n_processors>(stages_).distribution(last_.process(
            logits, [this](candidates& c) { apply(c); }, "sampler_chain", "distribution", draws_random_numbers()));
    }

    // Ends the step distribution() began with `token` (drawn from that distribution by the caller):
    // as sample() after its selection, every stage accepts it and last_logprob() reports it.
    void choose(token_id token) requires(has_distribution()) {
        last_.chose(token);
        accept(token);
    }

    // Feeds a token to every stage that accepts tokens, without sampling (e.g. the prompt).
    void accept(token_id token) {
        std::apply([token](auto&... stage) { (detail::accept_if_supported(stage, token), ...); }, stages_);
    }

    // Returns every resettable stage to its initial state (the selector reseeds).
    void reset() {
        std::apply([](auto&... stage) { (detail::reset_if_supported(stage), ...); }, stages_);
        last_.reset();
    }

    // Log-probability of the last sampled token under the distribution the selector drew from: the
    // softmax of the surviving candidates' processed logits; 0 when one candidate survived, and 0
    // before any sample(). Computed on the first call after a sample() (O(survivors)), then cached.
    float last_logprob() const noexcept { return last_.logprob(); }

    // The candidate set as the selector saw it at the last sample() (probs may not be valid).
    const candidates& last_candidates() const noexcept { return last_.set; }

    template <std::size_t I>
    auto& stage() noexcept {
        return std::get<I>(stages_);
    }
    template <std::size_t I>
    const auto& stage() const noexcept {
        return std::get<I>(stages_);
    }

private:
    template <std::size_t... I>
    void apply_processors_(candidates& c, std::index_sequence<I...>) {
        (std::get<I>(stages_).apply(c), ...);
    }

    std::tuple<Stages...> stages_;
    detail::last_sample last_;  // its candidate set, the chosen token, the lazy log-probability
};

// make_sampler_chain(p1, ..., pn, selector): the stages are copied or moved in.
template <class... Stages>
requires(detail::is_sampler_chain<std::decay_t<Stages>...>())
    sampler_chain<std::decay_t<Stages>...> make_sampler_chain(Stages&&... stages) {
    return sampler_chain<std::decay_t<Stages>...>(std::forward<Stages>(stages)...);
}

}  // namespace nexttok

// Builds a sampler chain from sampling_options, as llama.cpp's common_sampler_init does:
//
//   constraints: logit_bias -> banned_sequences -> (extra processors given by the caller)
//   then, mirostat == 0: the stages of options.sampler_order that are enabled, in that order, e.g.
//     penalties -> no_repeat_ngram -> dry -> top_n_sigma -> top_k -> typical_p -> top_p -> min_p ->
//     epsilon -> eta -> xtc -> temperature (dynamic when dynatemp_range > 0) -> categorical(seed)
//   mirostat == 1 or 2: temperature -> mirostat(tau, eta, seed) (llama.cpp runs nothing else then).
//
// A stage is left out when its parameters disable it (top_k 0, top_p 1, ...), so the default options
// give the chain llama.cpp runs by default: top_k(40) -> top_p(0.95) -> min_p(0.05) -> temperature(0.8)
// -> categorical. temperature == 0 (with dynatemp_range == 0) is greedy: the stages that may change
// which token is the most likely still run (penalties, DRY, no-repeat-n-gram, typical, XTC), the
// filters that always keep it (top-k, top-p, min-p, top-n-sigma, epsilon, eta) are skipped, then
// temperature(0) keeps only the maximum and the greedy selector returns it: exactly llama.cpp's token
// (its full chain ends the same way), with a log-probability of 0 and no randomness consumed
// (XTC excepted, which draws as in llama.cpp).
//
// Seeds: the categorical and mirostat draws use options.seed; XTC uses a seed derived from it
// (detail::xtc_seed) so that its stream is independent of the draw's.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/sampling/any_processor.hpp>
#include <nexttok/sampling/any_sampler.hpp>
#include <nexttok/sampling/banned_sequences.hpp>
#include <nexttok/sampling/categorical.hpp>
#include <nexttok/sampling/dry.hpp>
#include <nexttok/sampling/dynamic_chain.hpp>
#include <nexttok/sampling/dynamic_temperature.hpp>
#include <nexttok/sampling/epsilon_cutoff.hpp>
#include <nexttok/sampling/eta_cutoff.hpp>
#include <nexttok/sampling/greedy.hpp>
#include <nexttok/sampling/logit_bias.hpp>
#include <nexttok/sampling/min_p.hpp>
#include <nexttok/sampling/mirostat.hpp>
#include <nexttok/sampling/mirostat_v2.hpp>
#include <nexttok/sampling/no_repeat_ngram.hpp>
#include <nexttok/sampling/penalties.hpp>
#include <nexttok/sampling/rng.hpp>
#include <nexttok/sampling/sampler_order.hpp>
#include <nexttok/sampling/sampling_options.hpp>
#include <nexttok/sampling/temperature.hpp>
#include <nexttok/sampling/top_k.hpp>
#include <nexttok/sampling/top_n_sigma.hpp>
#include <nexttok/sampling/top_p.hpp>
#include <nexttok/sampling/typical_p.hpp>
#include <nexttok/sampling/xtc.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace nexttok {

namespace detail {

// XTC's seed: one splitmix64 step from the options' seed, so its stream differs from the draw's.
inline std::uint64_t xtc_seed(std::uint64_t seed) noexcept {
    std::uint64_t state = seed ^ 0x58544300ULL;  // "XTC"
    return splitmix64_next(state);
}

}  // namespace detail

// Validates the options (throws invalid_argument_error) and builds the chain. `extra` processors
// (e.g. min_new_tokens, from generation_options) run right after the constraints, before the stages.
NEXTTOK_DECL dynamic_chain make_dynamic_chain(const sampling_options& options, std::vector<any_processor> extra = {});

// The same chain behind the type-erased sampler interface generate() takes.
NEXTTOK_DECL any_sampler make_sampler(const sampling_options& options, std::vector<any_processor> extra = {});

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/make_sampler.ipp>
#endif

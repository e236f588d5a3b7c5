// Builds llama.cpp's default sampler chain from sampling_options (common_sampler_init with the default
// sampler order, penalties and the rarely used samplers left out):
//
//   top_k(top_k) -> top_p(top_p, min_keep) -> min_p(min_p, min_keep) -> temperature(t) -> categorical(seed)
//
// temperature == 0 is greedy: the chain is temperature(0) -> greedy, which returns exactly the argmax
// token (ties: lowest id), consumes no randomness, and reports a log-probability of 0. llama.cpp runs
// the full chain there, but top-k, top-p and min-p always keep the maximum, and temperature 0 then
// removes everything else, so the token is the same; skipping them skips their sorts.
//
// The same stages built statically, make_sampler_chain(top_k{..}, top_p{..}, min_p{..},
// temperature{..}, categorical{seed}), give the same tokens and log-probabilities.
#pragma once

#include <nexttok/sampling/any_sampler.hpp>
#include <nexttok/sampling/categorical.hpp>
#include <nexttok/sampling/dynamic_chain.hpp>
#include <nexttok/sampling/greedy.hpp>
#include <nexttok/sampling/min_p.hpp>
#include <nexttok/sampling/sampling_options.hpp>
#include <nexttok/sampling/temperature.hpp>
#include <nexttok/sampling/top_k.hpp>
#include <nexttok/sampling/top_p.hpp>

#include <cstdint>
#include <vector>

namespace nexttok {

// Validates the options (throws invalid_argument_error) and builds the chain.
inline dynamic_chain make_dynamic_chain(const sampling_options& options) {
    options.validate();
    std::vector<any_processor> processors;
    if (options.temperature == 0.0f) {
        processors.emplace_back(temperature(0.0f));
        return dynamic_chain(std::move(processors), greedy{});
    }
    processors.reserve(4);
    processors.emplace_back(top_k(static_cast<std::int32_t>(options.top_k)));
    processors.emplace_back(top_p(options.top_p, options.min_keep));
    processors.emplace_back(min_p(options.min_p, options.min_keep));
    processors.emplace_back(temperature(options.temperature));
    return dynamic_chain(std::move(processors), categorical(options.seed));
}

// The same chain behind the type-erased sampler interface generate() takes.
inline any_sampler make_sampler(const sampling_options& options) { return any_sampler(make_dynamic_chain(options)); }

}  // namespace nexttok

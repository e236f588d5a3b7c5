// The sampling module: logits -> candidates -> processors -> selector -> token.
//   candidates, concepts (logits_processor, token_selector, sampler), xoshiro256ss,
//   processors top_k, top_p, min_p, temperature; selectors greedy, categorical;
//   sampler_chain (static), dynamic_chain + any_processor/any_selector (runtime), any_sampler,
//   sampling_options + make_sampler (llama.cpp's default chain).
#pragma once

#include <nexttok/sampling/any_processor.hpp>
#include <nexttok/sampling/any_sampler.hpp>
#include <nexttok/sampling/any_selector.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/categorical.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/sampling/dynamic_chain.hpp>
#include <nexttok/sampling/greedy.hpp>
#include <nexttok/sampling/make_sampler.hpp>
#include <nexttok/sampling/min_p.hpp>
#include <nexttok/sampling/rng.hpp>
#include <nexttok/sampling/sampler_chain.hpp>
#include <nexttok/sampling/sampling_options.hpp>
#include <nexttok/sampling/temperature.hpp>
#include <nexttok/sampling/top_k.hpp>
#include <nexttok/sampling/top_p.hpp>

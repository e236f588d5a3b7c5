// The sampling module: logits -> candidates -> processors -> selector -> token.
//   candidates, concepts (logits_processor, token_selector, sampler), xoshiro256ss, sampling_error;
//   processors: temperature, dynamic_temperature, top_k, top_p, min_p, typical_p, top_n_sigma, xtc,
//     epsilon_cutoff, eta_cutoff, penalties (repetition / frequency / presence), dry, no_repeat_ngram,
//     logit_bias, banned_sequences, min_new_tokens;
//   selectors: greedy, categorical, mirostat, mirostat_v2;
//   sampler_chain (static), dynamic_chain + any_processor/any_selector (runtime), any_sampler; a
//     chain is also a processor, so chains nest;
//   sampling_options + sampler_order + make_sampler (llama.cpp's chain and order, HF's as an option).
#pragma once

#include <nexttok/sampling/any_processor.hpp>
#include <nexttok/sampling/any_sampler.hpp>
#include <nexttok/sampling/any_selector.hpp>
#include <nexttok/sampling/banned_sequences.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/categorical.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/sampling/dry.hpp>
#include <nexttok/sampling/dynamic_chain.hpp>
#include <nexttok/sampling/dynamic_temperature.hpp>
#include <nexttok/sampling/epsilon_cutoff.hpp>
#include <nexttok/sampling/eta_cutoff.hpp>
#include <nexttok/sampling/greedy.hpp>
#include <nexttok/sampling/logit_bias.hpp>
#include <nexttok/sampling/make_sampler.hpp>
#include <nexttok/sampling/min_new_tokens.hpp>
#include <nexttok/sampling/min_p.hpp>
#include <nexttok/sampling/mirostat.hpp>
#include <nexttok/sampling/mirostat_v2.hpp>
#include <nexttok/sampling/no_repeat_ngram.hpp>
#include <nexttok/sampling/penalties.hpp>
#include <nexttok/sampling/rng.hpp>
#include <nexttok/sampling/sampler_chain.hpp>
#include <nexttok/sampling/sampler_order.hpp>
#include <nexttok/sampling/sampling_error.hpp>
#include <nexttok/sampling/sampling_options.hpp>
#include <nexttok/sampling/temperature.hpp>
#include <nexttok/sampling/top_k.hpp>
#include <nexttok/sampling/top_n_sigma.hpp>
#include <nexttok/sampling/top_p.hpp>
#include <nexttok/sampling/typical_p.hpp>
#include <nexttok/sampling/xtc.hpp>

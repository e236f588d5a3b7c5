// Speculative decoding: a drafter proposes k tokens, the target scores them in one forward call, and
// modified rejection sampling keeps a prefix so that the output is distributed exactly as the
// target's own sampling. generate_speculative() (generate() with a drafter), speculative_generator
// (its rounds one at a time), the drafters model_drafter and ngram_drafter behind the drafter
// concept, speculative_options and the result with its statistics; quantized_copy(), a model's
// weights stored as q8_0 or q4_0 (the self-speculation draft).
#pragma once

#include <nexttok/speculative/drafter.hpp>
#include <nexttok/speculative/generate_speculative.hpp>
#include <nexttok/speculative/model_drafter.hpp>
#include <nexttok/speculative/ngram_drafter.hpp>
#include <nexttok/speculative/quantized_copy.hpp>
#include <nexttok/speculative/speculative_generator.hpp>
#include <nexttok/speculative/speculative_options.hpp>
#include <nexttok/speculative/speculative_result.hpp>

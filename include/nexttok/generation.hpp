// generation/: the generate() loop and its result, generation_options and the policies built from it,
// generate_n() (n samples on one prefill), generate_reusing() (on a cache that holds a prefix of the
// prompt, recorded by cached_tokens), score() (log-probability and perplexity of a text), and
// sequence_generator (generate()'s per-sequence logic without the forward call, for schedulers).
#pragma once

#include <nexttok/generation/cached_tokens.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/generation/generate_n.hpp>
#include <nexttok/generation/generate_reusing.hpp>
#include <nexttok/generation/generation_options.hpp>
#include <nexttok/generation/generation_result.hpp>
#include <nexttok/generation/make_generation.hpp>
#include <nexttok/generation/score.hpp>
#include <nexttok/generation/sequence_generator.hpp>
#include <nexttok/generation/token_decoder.hpp>
#include <nexttok/generation/token_event.hpp>

// The stopping module: criteria that look at the sequence after each step and say why to stop.
//   finish_reason + to_string, generation_state, the stopping_criterion concept (+ the optional text
//   interface: hold_back, text_cut), eos_criterion, max_new_tokens, max_length, stop_tokens,
//   stop_token_sequences, stop_strings, deadline, cancellation, stop_when (a predicate),
//   any_of / all_of (static), any_criterion + any_of_criteria / all_of_criteria (runtime).
#pragma once

#include <nexttok/stopping/all_of.hpp>
#include <nexttok/stopping/all_of_criteria.hpp>
#include <nexttok/stopping/any_criterion.hpp>
#include <nexttok/stopping/any_of.hpp>
#include <nexttok/stopping/any_of_criteria.hpp>
#include <nexttok/stopping/cancellation.hpp>
#include <nexttok/stopping/concepts.hpp>
#include <nexttok/stopping/deadline.hpp>
#include <nexttok/stopping/eos_criterion.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>
#include <nexttok/stopping/max_length.hpp>
#include <nexttok/stopping/max_new_tokens.hpp>
#include <nexttok/stopping/stop_strings.hpp>
#include <nexttok/stopping/stop_token_sequences.hpp>
#include <nexttok/stopping/stop_tokens.hpp>
#include <nexttok/stopping/stop_when.hpp>

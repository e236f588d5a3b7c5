// The stopping module: criteria that look at the sequence after each step and say why to stop.
//   finish_reason + to_string, generation_state, the stopping_criterion concept,
//   eos_criterion, max_new_tokens, stop_tokens, any_of (static), any_criterion + any_of_criteria (runtime).
#pragma once

#include <nexttok/stopping/any_criterion.hpp>
#include <nexttok/stopping/any_of.hpp>
#include <nexttok/stopping/any_of_criteria.hpp>
#include <nexttok/stopping/concepts.hpp>
#include <nexttok/stopping/eos_criterion.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>
#include <nexttok/stopping/max_new_tokens.hpp>
#include <nexttok/stopping/stop_tokens.hpp>

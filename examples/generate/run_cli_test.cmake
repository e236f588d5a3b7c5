# The command line of the example programs (command_line.hpp): llama.cpp's flags, -f, escapes,
# --version, exit statuses and the random default seed. Skips itself, without failing, when the
# model file is absent.
#
#   -DPROGRAM=...           the program
#   -DMODEL=...             a model file, given as --model unless NO_MODEL is set; a missing one skips
#   -DWORK_DIR=...          where prompt files go
#   -DMODE=run              one run: FLAGS ('|' separates them; @PROMPT_FILE@ is a file holding
#                           PROMPT_TEXT), exit status EXPECT_RC (default 0), EXPECT_STDOUT /
#                           EXPECT_STDERR / REJECT_STDERR regular expressions (each optional)
#   -DMODE=seeds            sampling without --seed, twice: each run prints its seed, the seeds and
#                           the texts differ, and --seed with the first seed gives the first text again
cmake_minimum_required(VERSION 3.19...3.25)

if(NOT NO_MODEL AND NOT EXISTS "${MODEL}")
  message("[cli test skipped: no model file ${MODEL}]")
  return()
endif()
file(MAKE_DIRECTORY "${WORK_DIR}")
set(model_flags)
if(NOT NO_MODEL)
  set(model_flags --model "${MODEL}")
endif()

# Runs PROGRAM with the model and the given flags; sets <prefix>_rc, _out, _err.
function(run prefix)
  execute_process(COMMAND ${PROGRAM} ${model_flags} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${prefix}_rc "${rc}" PARENT_SCOPE)
  set(${prefix}_out "${out}" PARENT_SCOPE)
  set(${prefix}_err "${err}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "run")
  set(prompt_file "${WORK_DIR}/prompt.txt")
  file(WRITE "${prompt_file}" "${PROMPT_TEXT}")
  string(REPLACE "@PROMPT_FILE@" "${prompt_file}" flags "${FLAGS}")
  string(REPLACE "|" ";" flags "${flags}")
  run(r ${flags})
  if(NOT DEFINED EXPECT_RC)
    set(EXPECT_RC 0)
  endif()
  set(shown "${PROGRAM} ${flags}")
  if(NOT r_rc STREQUAL "${EXPECT_RC}")
    message(FATAL_ERROR "${shown}: exit status ${r_rc}, expected ${EXPECT_RC}\nstdout: ${r_out}\nstderr: ${r_err}")
  endif()
  if(DEFINED EXPECT_STDOUT AND NOT r_out MATCHES "${EXPECT_STDOUT}")
    message(FATAL_ERROR "${shown}: stdout does not match '${EXPECT_STDOUT}':\n${r_out}")
  endif()
  if(DEFINED EXPECT_STDERR AND NOT r_err MATCHES "${EXPECT_STDERR}")
    message(FATAL_ERROR "${shown}: stderr does not match '${EXPECT_STDERR}':\n${r_err}")
  endif()
  if(DEFINED REJECT_STDERR AND r_err MATCHES "${REJECT_STDERR}")
    message(FATAL_ERROR "${shown}: stderr matches '${REJECT_STDERR}':\n${r_err}")
  endif()
  message("${shown}:\nstdout: ${r_out}\nstderr: ${r_err}")
elseif(MODE STREQUAL "seeds")
  # 40 tokens at temperature 1 from stories260K: two runs with different seeds give the same text with
  # a probability far below 1e-6 (the model's next-token distributions are not that peaked).
  set(flags --prompt "Once upon a time" -n 40 --temperature 1)
  set(seeds)
  foreach(k IN ITEMS a b)
    run(${k} ${flags})
    if(NOT ${k}_rc EQUAL 0 OR NOT ${k}_err MATCHES "seed: ([0-9]+) \\(drawn at random; --seed ([0-9]+) repeats this run\\)")
      message(FATAL_ERROR "run ${k}: exit status ${${k}_rc}, no seed line on stderr:\n${${k}_err}")
    endif()
    list(APPEND seeds "${CMAKE_MATCH_1}")
  endforeach()
  list(GET seeds 0 seed_a)
  list(GET seeds 1 seed_b)
  if(seed_a STREQUAL seed_b OR a_out STREQUAL b_out)
    message(FATAL_ERROR "two runs without --seed: seeds ${seed_a} and ${seed_b}, texts:\n${a_out}\n${b_out}")
  endif()
  run(again ${flags} --seed ${seed_a})
  if(NOT again_out STREQUAL a_out OR again_err MATCHES "drawn at random")
    message(FATAL_ERROR "--seed ${seed_a} does not repeat the run:\n${a_out}\n${again_out}\n${again_err}")
  endif()
  message("seeds ${seed_a} and ${seed_b}: different texts; --seed ${seed_a} repeats the first")
else()
  message(FATAL_ERROR "run_cli_test.cmake: unknown MODE '${MODE}'")
endif()

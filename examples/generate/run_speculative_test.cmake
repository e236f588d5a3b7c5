# The acceptance of generate's speculative decoding: with a drafter (SPEC_FLAGS) and greedy flags,
# generate prints on stdout exactly the bytes it prints without one, and its stderr reports the
# speculation. Or, with EXPECT_ERROR, that generate fails with exit status 1, a message on stderr
# matching it, and nothing on stdout.
#
#   -DGENERATE=...          the program
#   -DMODEL=...             the target model; empty: the built-in demo model; a missing file skips the test
#   -DDRAFT=...             the --draft-model file, if any; a missing file skips the test
#   -DFLAGS=a|b|...         flags of both runs ('|' separates them)
#   -DSPEC_FLAGS=a|b|...    flags of the speculative run only (--draft-model DRAFT is added when DRAFT is set)
#   -DEXPECT_STDERR=regex   the speculative run's stderr must match
#   -DSAME_STDOUT=OFF       do not compare with the run without a drafter (sampling: equal in
#                           distribution, not draw for draw)
#   -DEXPECT_ERROR=regex    error mode: generate runs once, with FLAGS and SPEC_FLAGS
cmake_minimum_required(VERSION 3.19...3.25)

foreach(file IN ITEMS "${MODEL}" "${DRAFT}")
  if(file AND NOT EXISTS "${file}")
    message("[generate test skipped: no model file ${file}]")
    return()
  endif()
endforeach()
set(model_args)
if(MODEL)
  set(model_args --model "${MODEL}")
endif()
string(REPLACE "|" ";" flags "${FLAGS}")
string(REPLACE "|" ";" spec_flags "${SPEC_FLAGS}")
if(DRAFT)
  list(PREPEND spec_flags --draft-model "${DRAFT}")
endif()
string(REPLACE ";" " " shown "${flags} ${spec_flags}")  # for messages

execute_process(COMMAND ${GENERATE} ${model_args} ${flags} ${spec_flags}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(DEFINED EXPECT_ERROR)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "${EXPECT_ERROR}" OR NOT out STREQUAL "")
    message(FATAL_ERROR "generate ${shown}: expected exit status 1, an error matching '${EXPECT_ERROR}' "
                        "and no output, got ${rc}:\nstdout: ${out}\nstderr: ${err}")
  endif()
  message("generate ${shown}: ${err}")
  return()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generate ${shown} failed (${rc}):\n${err}")
endif()
if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "generate ${shown}: stderr does not match '${EXPECT_STDERR}':\n${err}")
endif()
if(NOT DEFINED SAME_STDOUT OR SAME_STDOUT)
  execute_process(COMMAND ${GENERATE} ${model_args} ${flags}
                  RESULT_VARIABLE plain_rc OUTPUT_VARIABLE plain ERROR_VARIABLE plain_err)
  if(NOT plain_rc EQUAL 0)
    message(FATAL_ERROR "generate without the drafter failed (${plain_rc}):\n${plain_err}")
  endif()
  if(NOT out STREQUAL plain)
    message(FATAL_ERROR "generate ${shown} prints other text than without the drafter\n"
                        "without:\n${plain}\nwith:\n${out}")
  endif()
endif()
message("generate ${shown}:\n${out}${err}")

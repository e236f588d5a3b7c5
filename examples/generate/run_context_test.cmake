# One run of generate (or score) whose stderr must match a regular expression, with exit status 0:
# the tests of the context's end (issue 22), where what matters is what the program reports on
# stderr (the token count, the finish reason, the message about the full context, the warning),
# not the text on stdout. Skips itself, without failing, when the model file is absent.
#
#   -DPROGRAM=...           the program
#   -DMODEL=...             the --model file; a missing file skips the test
#   -DFLAGS=a|b|...         further flags ('|' separates them)
#   -DEXPECT_STDERR=regex   stderr must match
#   -DREJECT_STDERR=regex   stderr must not match (optional)
cmake_minimum_required(VERSION 3.19...3.25)

if(NOT EXISTS "${MODEL}")
  message("[context test skipped: no model file ${MODEL}]")
  return()
endif()
string(REPLACE "|" ";" flags "${FLAGS}")
string(REPLACE ";" " " shown "${flags}")
execute_process(COMMAND ${PROGRAM} --model "${MODEL}" ${flags} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} ${shown} failed (${rc}):\n${err}")
endif()
if(NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "${PROGRAM} ${shown}: stderr does not match '${EXPECT_STDERR}':\n${err}")
endif()
if(DEFINED REJECT_STDERR AND err MATCHES "${REJECT_STDERR}")
  message(FATAL_ERROR "${PROGRAM} ${shown}: stderr matches '${REJECT_STDERR}':\n${err}")
endif()
message("${PROGRAM} ${shown}:\nstderr: ${err}")

# The acceptance of examples/batch: on a file of prompts (with an empty line, which is skipped, and a
# CRLF line end, which is dropped), batch prints for each prompt exactly what generate prints for it
# alone with the same flags, whether it reads the file by name or from standard input. Or, with
# EXPECT_ERROR, that batch fails with exit status 1 and a message on stderr matching it.
#
#   -DBATCH=... -DGENERATE=...  the programs
#   -DMODEL=...                 a model file; empty: the built-in demo model; a missing file skips the test
#   -DWORK_DIR=...              scratch directory (prompts.txt and blank.txt are written there)
#   -DFLAGS=a|b|...             flags given to both programs ('|' separates them)
#   -DBATCH_FLAGS=a|b|...       flags given to batch only
#   -DEXPECT_STDERR=regex       batch's stderr must match (e.g. preemptions happened)
#   -DEXPECT_ERROR=regex        error mode: batch runs with BATCH_FLAGS only, in WORK_DIR
cmake_minimum_required(VERSION 3.19...3.25)

if(MODEL AND NOT EXISTS "${MODEL}")
  message("[batch test skipped: no model file ${MODEL}]")
  return()
endif()
set(model_args)
if(MODEL)
  set(model_args --model "${MODEL}")
endif()
string(REPLACE "|" ";" flags "${FLAGS}")
string(REPLACE "|" ";" batch_flags "${BATCH_FLAGS}")

# Prompts without ';' (a CMake list separator). The two long ones share their first 20 or so tokens,
# so that the second attaches the first one's full blocks from the prefix cache.
set(prompts
  "Once upon a time"
  "The cat sat on the mat."
  "Once upon a time, there was a little girl named Lily. She loved to play outside in the park."
  "Once upon a time, there was a little girl named Lily. She loved to play with her toys."
  "Tom and Sue went to the park"
  "One day, a big dog")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(file_text "")
set(line 0)
set(line_numbers)
foreach(p IN LISTS prompts)
  math(EXPR line "${line} + 1")
  if(line EQUAL 2)  # an empty line, which batch skips
    string(APPEND file_text "\n")
    math(EXPR line "${line} + 1")
  endif()
  list(APPEND line_numbers ${line})
  if(line EQUAL 3)  # a Windows line end: the '\r' is not part of the prompt
    string(APPEND file_text "${p}\r\n")
  else()
    string(APPEND file_text "${p}\n")
  endif()
endforeach()
file(WRITE "${WORK_DIR}/prompts.txt" "${file_text}")
file(WRITE "${WORK_DIR}/blank.txt" "\n\r\n\n")

if(DEFINED EXPECT_ERROR)
  execute_process(COMMAND ${BATCH} ${batch_flags} WORKING_DIRECTORY "${WORK_DIR}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "${EXPECT_ERROR}")
    message(FATAL_ERROR "batch ${batch_flags}: expected exit status 1 and an error matching '${EXPECT_ERROR}', got ${rc}:\n${err}")
  endif()
  return()
endif()

# What generate prints for each prompt alone, under batch's header line.
set(expected "")
set(i 0)
foreach(p IN LISTS prompts)
  list(GET line_numbers ${i} line)
  execute_process(COMMAND ${GENERATE} ${model_args} --prompt "${p}" ${flags}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "generate --prompt \"${p}\" ${flags} failed (${rc}):\n${err}")
  endif()
  string(APPEND expected "--- prompt ${i} (line ${line}) ---\n${out}")
  math(EXPR i "${i} + 1")
endforeach()

# Runs batch with the given --file and, when `input` is not empty, that file on standard input.
function(check_batch file input)
  set(input_args)
  if(input)
    set(input_args INPUT_FILE "${input}")
  endif()
  execute_process(COMMAND ${BATCH} ${model_args} ${flags} ${batch_flags} --file "${file}" ${input_args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "batch --file ${file} failed (${rc}):\n${err}")
  endif()
  if(NOT out STREQUAL expected)
    file(WRITE "${WORK_DIR}/expected.txt" "${expected}")
    file(WRITE "${WORK_DIR}/actual.txt" "${out}")
    message(FATAL_ERROR "batch --file ${file} differs from generate run per prompt (${WORK_DIR}/expected.txt, actual.txt)\n"
                        "expected:\n${expected}\nactual:\n${out}")
  endif()
  if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
    message(FATAL_ERROR "batch --file ${file}: stderr does not match '${EXPECT_STDERR}':\n${err}")
  endif()
  message("batch --file ${file}: the same text as generate for each of the ${i} prompts\n${err}")
endfunction()
check_batch("${WORK_DIR}/prompts.txt" "")
check_batch("-" "${WORK_DIR}/prompts.txt")

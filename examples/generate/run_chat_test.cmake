# generate --chat, the real binary with stdin from a file. Skips itself, without failing, when a
# data file is absent.
#
#   -DGENERATE=...          the generate program
#   -DADD_TEMPLATE=...      the add_chat_template helper
#   -DMODEL=...             a GGUF model without a template (stories260K.gguf)
#   -DTEMPLATE=...          a template (.json of ../shared/data/chat_templates) for the copy of MODEL
#   -DWORK_DIR=...          where the copy and the input files go
#   -DMODE=two_turns        the acceptance test: two turns on the copy with the template; turn 2 keeps
#                           everything turn 1 ran (its prompt + its tokens but the last) and prefills
#                           the rest, and answers as a fresh run of the whole turn-2 prompt (given as
#                           --prompt with --special, so that </s> is the token) does
#   -DMODE=run|error        one run on MODEL (WITH_TEMPLATE=ON: on the copy), stdin lines INPUT
#                           ('|' separates them), flags FLAGS ('|' separates them); exit status 0
#                           (run) or not (error, with nothing on stdout); stderr must match EXPECT_STDERR
cmake_minimum_required(VERSION 3.19...3.25)

foreach(file IN ITEMS "${MODEL}" "${TEMPLATE}")
  if(NOT EXISTS "${file}")
    message("[chat test skipped: no data file ${file}]")
    return()
  endif()
endforeach()
file(MAKE_DIRECTORY "${WORK_DIR}")
set(copy "${WORK_DIR}/stories260K-with-template.gguf")
execute_process(COMMAND ${ADD_TEMPLATE} "${MODEL}" "${copy}" "${TEMPLATE}" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "add_chat_template failed (${rc}): ${err}")
endif()

# Runs generate with stdin from `input` (a list of lines); sets <prefix>_rc, _out, _err.
function(run_generate prefix input)
  set(text "")
  foreach(line IN LISTS input)
    string(APPEND text "${line}\n")
  endforeach()
  set(input_file "${WORK_DIR}/${prefix}.stdin")
  file(WRITE "${input_file}" "${text}")
  execute_process(COMMAND ${GENERATE} ${ARGN} INPUT_FILE "${input_file}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${prefix}_rc "${rc}" PARENT_SCOPE)
  set(${prefix}_out "${out}" PARENT_SCOPE)
  set(${prefix}_err "${err}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "two_turns")
  set(user1 "Tell me a story.")
  set(user2 "What did the dog do?")
  set(common --model "${copy}" --chat -n 12 --temperature 0 --threads 1)
  # Turn 1 alone: its answer (stdout is the answer and a newline).
  run_generate(one "${user1}" ${common})
  run_generate(two "${user1};${user2}" ${common})
  foreach(p IN ITEMS one two)
    if(NOT ${p}_rc EQUAL 0)
      message(FATAL_ERROR "generate --chat failed (${${p}_rc}):\n${${p}_err}")
    endif()
  endforeach()
  message("stderr of the two-turn run:\n${two_err}")
  string(REGEX REPLACE "\n$" "" answer1 "${one_out}")
  string(LENGTH "${one_out}" n1)
  string(SUBSTRING "${two_out}" 0 ${n1} head)
  if(NOT head STREQUAL one_out)
    message(FATAL_ERROR "turn 1 answers differently in the two runs:\n'${one_out}'\n'${two_out}'")
  endif()
  string(SUBSTRING "${two_out}" ${n1} -1 answer2)
  string(REGEX REPLACE "\n$" "" answer2 "${answer2}")
  if(answer1 STREQUAL "" OR answer2 STREQUAL "")
    message(FATAL_ERROR "expected two answers, got '${answer1}' and '${answer2}'")
  endif()

  # The statistics lines.
  set(number "([0-9]+)")
  if(NOT two_err MATCHES "turn 1: prompt: ${number} tokens \\(0 reused, ${number} new\\), [0-9.]+ tokens/s \\| generated: ${number} tokens")
    message(FATAL_ERROR "no statistics line for turn 1")
  endif()
  set(p1 ${CMAKE_MATCH_1})
  set(g1 ${CMAKE_MATCH_3})
  if(NOT two_err MATCHES "turn 2: prompt: ${number} tokens \\(${number} reused, ${number} new\\), [0-9.]+ tokens/s \\| generated: [0-9]+ tokens, [0-9.]+ tokens/s \\| finish: [a-z_]+\n")
    message(FATAL_ERROR "no statistics line for turn 2")
  endif()
  set(p2 ${CMAKE_MATCH_1})
  set(reused ${CMAKE_MATCH_2})
  set(new ${CMAKE_MATCH_3})
  math(EXPR held "${p1} + ${g1} - 1")  # the last token of turn 1 was never run
  math(EXPR rest "${p2} - ${reused}")
  if(NOT reused EQUAL held OR NOT new EQUAL rest OR NOT reused GREATER 0)
    message(FATAL_ERROR "turn 2: ${reused} reused and ${new} new of ${p2}; expected ${held} reused (turn 1: ${p1} prompt + ${g1} generated - 1) and ${rest} new")
  endif()

  # The oracle: the whole turn-2 prompt in one fresh run, as Mistral's template renders it (BOS is
  # added by the tokenizer; --special makes </s> the EOS token, as the template's own text is).
  set(prompt2 "[INST]${user1}[/INST]${answer1}</s>[INST]${user2}[/INST]")
  run_generate(fresh "" --model "${copy}" --special --prompt "${prompt2}" -n 12 --temperature 0 --threads 1)
  if(NOT fresh_rc EQUAL 0)
    message(FATAL_ERROR "the fresh run failed (${fresh_rc}):\n${fresh_err}")
  endif()
  if(NOT fresh_err MATCHES "prompt: ${p2} tokens,")
    message(FATAL_ERROR "the fresh run's prompt is not the ${p2} tokens of turn 2:\n${fresh_err}")
  endif()
  if(NOT fresh_out STREQUAL "${prompt2}${answer2}\n")
    message(FATAL_ERROR "turn 2 answered '${answer2}'; the fresh run of its prompt gives:\n${fresh_out}")
  endif()
  message("turn 2: ${reused} reused, ${new} new; answers '${answer1}' and '${answer2}' (the fresh run agrees)")
  return()
endif()

set(model "${MODEL}")
if(WITH_TEMPLATE)
  set(model "${copy}")
endif()
string(REPLACE "|" ";" input "${INPUT}")
string(REPLACE "|" ";" flags "${FLAGS}")
run_generate(single "${input}" --model "${model}" ${flags})
if(MODE STREQUAL "error")
  if(single_rc EQUAL 0 OR NOT single_out STREQUAL "")
    message(FATAL_ERROR "expected an error and nothing on stdout, got status ${single_rc}:\nstdout: ${single_out}\nstderr: ${single_err}")
  endif()
elseif(NOT single_rc EQUAL 0)
  message(FATAL_ERROR "generate failed (${single_rc}):\n${single_err}")
endif()
if(NOT single_err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_STDERR}':\n${single_err}")
endif()
message("stdout: ${single_out}\nstderr: ${single_err}")

# Runs FIRST and SECOND (the minimal example header-only and against nexttok::compiled) on MODEL and
# fails unless both succeed and print the same bytes: the two ways of compiling nexttok give the
# same tokens, texts and numbers.
foreach(program IN ITEMS FIRST SECOND)
  execute_process(COMMAND ${${program}} ${MODEL} RESULT_VARIABLE rc OUTPUT_VARIABLE out_${program}
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${${program}} ${MODEL} failed (${rc}):\n${out_${program}}\n${err}")
  endif()
endforeach()
if(NOT out_FIRST STREQUAL out_SECOND)
  message(FATAL_ERROR "the outputs differ:\n--- ${FIRST}\n${out_FIRST}\n--- ${SECOND}\n${out_SECOND}")
endif()
string(LENGTH "${out_FIRST}" n)
message(STATUS "the same ${n} bytes from both")

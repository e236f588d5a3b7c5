# Fails, naming the files, when a C++ source of the project does not follow .clang-format.
# Run: cmake -DCLANG_FORMAT=clang-format -DSOURCE_DIR=<project> -P clang_format.cmake
# To fix: clang-format -i <file> (the whole tree: git ls-files '*.hpp' '*.cpp' | xargs clang-format -i).
file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/include/*.hpp ${SOURCE_DIR}/include/*.ipp ${SOURCE_DIR}/tests/*.hpp
     ${SOURCE_DIR}/tests/*.cpp ${SOURCE_DIR}/benchmarks/*.hpp ${SOURCE_DIR}/benchmarks/*.cpp ${SOURCE_DIR}/examples/*.hpp
     ${SOURCE_DIR}/examples/*.cpp)
list(LENGTH sources n)
execute_process(COMMAND ${CLANG_FORMAT} --dry-run --Werror ${sources} WORKING_DIRECTORY ${SOURCE_DIR}
                RESULT_VARIABLE result ERROR_VARIABLE errors)
if(NOT result EQUAL 0)
  string(REGEX MATCHALL "[^\n]*: error: code should be clang-formatted" lines "${errors}")
  set(files "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE ":[0-9]+:[0-9]+: error: code should be clang-formatted.*" "" file "${line}")
    list(APPEND files ${file})
  endforeach()
  list(REMOVE_DUPLICATES files)
  string(REPLACE ";" "\n  " shown "${files}")
  message(FATAL_ERROR "not formatted as .clang-format says (clang-format -i fixes it):\n  ${shown}")
endif()
message(STATUS "${n} sources follow .clang-format")

# Fails when a header under include/ (or a file of definitions, impl/*.ipp) has more than 500 lines
# (the house style: files stay under about 500 lines; a longer one is two files).
# Run: cmake -DNEXTTOK_INCLUDE_DIR=include -P tests/structure/header_lengths.cmake
get_filename_component(root "${NEXTTOK_INCLUDE_DIR}" ABSOLUTE)
file(GLOB_RECURSE headers RELATIVE "${root}" "${root}/*.hpp" "${root}/*.ipp")
set(longest 0)
set(too_long "")
foreach(header IN LISTS headers)
  file(READ "${root}/${header}" text)  # file(STRINGS) skips empty lines: count newlines instead
  string(REGEX REPLACE "[^\n]" "" newlines "${text}")
  string(LENGTH "${newlines}" n)
  if(n GREATER longest)
    set(longest ${n})
    set(longest_header ${header})
  endif()
  if(n GREATER 500)
    string(APPEND too_long "  ${header}: ${n} lines\n")
  endif()
endforeach()
if(too_long)
  message(FATAL_ERROR "headers over 500 lines (split them):\n${too_long}")
endif()
list(LENGTH headers count)
message(STATUS "${count} headers, the longest ${longest_header} with ${longest} lines")

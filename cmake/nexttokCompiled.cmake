# nexttok::compiled: nexttok with the definitions of its functions that are not templates compiled
# once, into a static library, instead of in every translation unit that includes the headers (see
# include/nexttok/detail/config.hpp). Linking it defines NEXTTOK_SEPARATE_COMPILATION for the
# program; every file of the program must then see that definition. The library is compiled with
# the flags of the project that links it, and only when something links it.
# Used by nexttok's CMakeLists.txt and by the installed package (nexttokConfig.cmake).
function(nexttok_add_compiled_library)
  if(TARGET nexttok_compiled)
    return()
  endif()
  set(source "${CMAKE_CURRENT_BINARY_DIR}/nexttok_compiled.cpp")
  set(content "#include <nexttok/impl/src.hpp>\n")
  set(old "")
  if(EXISTS "${source}")
    file(READ "${source}" old)
  endif()
  if(NOT old STREQUAL content)  # rewritten only when it changes, so that it is not rebuilt each time
    file(WRITE "${source}" "${content}")
  endif()
  add_library(nexttok_compiled STATIC EXCLUDE_FROM_ALL "${source}")
  target_link_libraries(nexttok_compiled PUBLIC nexttok::nexttok)
  target_compile_definitions(nexttok_compiled PUBLIC NEXTTOK_SEPARATE_COMPILATION)
  add_library(nexttok::compiled ALIAS nexttok_compiled)
endfunction()

# Prints the dependency graph of the folders under include/nexttok/ and fails when it runs against
# the data path of DESIGN.md. Run by ctest (structure.folder_dependencies), or by hand:
#   cmake -DNEXTTOK_INCLUDE_DIR=include -P tests/structure/folder_dependencies.cmake
#
# The layers, lowest first. A header may include its own folder, any folder before it, and the
# core (the top-level headers error.hpp, types.hpp, version.hpp and the shared internals in
# detail/); never a folder after it (so the graph has no cycle), and never another folder's
# detail/ (internals shared by several folders live in the top-level detail/). A folder
# x/ and its module header x.hpp are one node, with the definitions of x/impl/*.ipp (separate
# compilation); nexttok.hpp, the umbrella, and impl/src.hpp, the compiled part, include everything.
#   tensor: what a weight tensor is (types, views, block layouts), which io, model and kernels share;
#   then DESIGN.md's data path: io, model, tokenizer, chat, kernels, cache, decoder, sampling,
#   stopping, generation, batching, speculative.
cmake_policy(VERSION 3.16)

set(layers core tensor io model tokenizer chat kernels cache decoder sampling stopping generation batching
    speculative)
set(core_names detail error types version)

if(NOT NEXTTOK_INCLUDE_DIR)
  message(FATAL_ERROR "set NEXTTOK_INCLUDE_DIR to the include/ directory")
endif()
get_filename_component(root "${NEXTTOK_INCLUDE_DIR}/nexttok" ABSOLUTE)

function(node_of relative out)  # "sampling/dry.hpp" -> sampling, "error.hpp" -> core
  string(REGEX REPLACE "^([a-z_0-9]+).*$" "\\1" first "${relative}")
  if(first IN_LIST core_names)
    set(${out} core PARENT_SCOPE)
  else()
    set(${out} ${first} PARENT_SCOPE)
  endif()
endfunction()

file(GLOB_RECURSE headers RELATIVE "${root}" "${root}/*.hpp" "${root}/*.ipp")
list(SORT headers)
set(problems "")
foreach(header IN LISTS headers)
  if(header STREQUAL "nexttok.hpp" OR header STREQUAL "impl/src.hpp")
    continue()
  endif()
  node_of("${header}" from)
  list(FIND layers ${from} from_rank)
  if(from_rank EQUAL -1)
    string(APPEND problems "  ${header}: folder '${from}' is not a layer of this script (add it where DESIGN.md puts it)\n")
    continue()
  endif()
  file(STRINGS "${root}/${header}" includes REGEX "^#include <nexttok/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include <nexttok/([^>]+)>.*$" "\\1" target "${line}")
    node_of("${target}" to)
    if(NOT to STREQUAL from)
      list(APPEND edges_${from} ${to})
      list(FIND layers ${to} to_rank)
      if(to_rank EQUAL -1)
        string(APPEND problems "  ${header} includes ${target}: '${to}' is not a layer\n")
      elseif(to_rank GREATER from_rank)
        string(APPEND problems "  ${header} includes ${target}: ${from} may not depend on ${to}, which comes after it\n")
      endif()
      if(NOT to STREQUAL "core" AND target MATCHES "/detail/")
        string(APPEND problems "  ${header} includes ${target}: the internals of another folder\n")
      endif()
    endif()
  endforeach()
endforeach()

message(STATUS "folder dependencies (lowest layer first):")
foreach(layer IN LISTS layers)
  if(DEFINED edges_${layer})
    list(REMOVE_DUPLICATES edges_${layer})
    set(ordered "")
    foreach(other IN LISTS layers)  # in layer order
      if(other IN_LIST edges_${layer})
        list(APPEND ordered ${other})
      endif()
    endforeach()
    string(REPLACE ";" " " shown "${ordered}")
    message(STATUS "  ${layer} -> ${shown}")
  else()
    message(STATUS "  ${layer}")
  endif()
endforeach()

if(problems)
  message(FATAL_ERROR "folder dependencies against the data path of DESIGN.md:\n${problems}")
endif()
message(STATUS "no dependency runs against the layers")

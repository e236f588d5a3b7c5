# Installs nexttok (headers + package config only) into WORK_DIR/prefix, then builds and runs the
# consumer project against it with find_package(nexttok CONFIG REQUIRED), and runs it (on MODEL, a
# GGUF file, when it exists), header-only and linked with nexttok::compiled (the same text); then
# compiles the same program with the flags of the installed nexttok.pc (pkg-config, syntax only).
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
endfunction()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/nexttok-build -G ${GENERATOR}
    -DNEXTTOK_BUILD_TESTS=OFF -DNEXTTOK_BUILD_BENCHMARKS=OFF -DNEXTTOK_BUILD_EXAMPLES=OFF
    -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${WORK_DIR}/nexttok-build)
# The consumer's build is CMake's default, no build type (no -O flag, no -march): what a new user
# gets, and the quickest to compile (42 s against 180 s at -O3 for three kernel sets).
run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer-build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build)
run(${WORK_DIR}/consumer-build/consumer)
# pkg-config: the installed nexttok.pc gives the flags that compile the same program.
find_program(PKG_CONFIG pkg-config REQUIRED)
find_program(CXX_COMPILER NAMES c++ g++ REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${WORK_DIR}/prefix/share/pkgconfig")
execute_process(COMMAND ${PKG_CONFIG} --cflags nexttok RESULT_VARIABLE rc OUTPUT_VARIABLE cflags ERROR_VARIABLE err
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT cflags MATCHES "-I${WORK_DIR}/prefix/include")
  message(FATAL_ERROR "pkg-config --cflags nexttok (${rc}): '${cflags}' ${err}")
endif()
separate_arguments(cflags UNIX_COMMAND "${cflags}")
run(${CXX_COMPILER} -std=c++20 -fsyntax-only ${cflags} ${CONSUMER_DIR}/main.cpp)
run(${WORK_DIR}/consumer-build/consumer_compiled)
if(EXISTS "${MODEL}")
  run(${WORK_DIR}/consumer-build/consumer ${MODEL})
  # nexttok::compiled, built by the package in the consumer's project: the same text.
  execute_process(COMMAND ${WORK_DIR}/consumer-build/consumer ${MODEL} OUTPUT_VARIABLE header_only)
  execute_process(COMMAND ${WORK_DIR}/consumer-build/consumer_compiled ${MODEL} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE compiled ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT compiled STREQUAL header_only)
    message(FATAL_ERROR "consumer_compiled (${rc}) printed\n${compiled}${err}\ninstead of\n${header_only}")
  endif()
endif()

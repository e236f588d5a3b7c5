#!/usr/bin/env bash
# The test suite under sanitizers, built with clang (it compiles the instrumented suite in half the
# time g++ takes) into build-asan/ and build-tsan/ beside the source (or under $NEXTTOK_SANITIZER_BUILD):
#   asan: every test program under AddressSanitizer + UndefinedBehaviorSanitizer (any report fails);
#   tsan: the programs that run threads (concurrency, batching, server) under ThreadSanitizer.
# Usage: tests/run_sanitizers.sh [asan] [tsan]   (both by default). .ci/run runs it.
set -euo pipefail
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
build_root="${NEXTTOK_SANITIZER_BUILD:-$source_dir}"
jobs="${NEXTTOK_JOBS:-2}"
cxx="${NEXTTOK_SANITIZER_CXX:-clang++-14}"
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(asan tsan)

# Tests that only run other programs or scan sources: the plain build runs them.
not_here='^(packaging|structure)\.'

for kind in "${kinds[@]}"; do
  case "$kind" in
    asan)
      dir="$build_root/build-asan"
      flags=(-DNEXTTOK_SANITIZE=address,undefined)
      export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1"
      export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
      ;;
    tsan)
      dir="$build_root/build-tsan"
      flags=(-DNEXTTOK_SANITIZE=thread "-DNEXTTOK_TEST_MODULES=concurrency;batching;server")
      export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
      ;;
    *) echo "run_sanitizers.sh: unknown kind '$kind' (expected asan or tsan)" >&2; exit 2 ;;
  esac
  echo "== $kind: $dir"
  cmake -S "$source_dir" -B "$dir" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
    -DNEXTTOK_BUILD_BENCHMARKS=OFF -DNEXTTOK_BUILD_EXAMPLES=OFF -DNEXTTOK_HEADER_CHECK=OFF "${flags[@]}"
  cmake --build "$dir" -j"$jobs"
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" -E "$not_here"
done

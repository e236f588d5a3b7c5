#!/usr/bin/env bash
# What including nexttok costs: compiles a translation unit that includes <nexttok/nexttok.hpp> and
# nothing else (g++ -std=c++20 -O2 -c, the flags a user's build would give it), header-only and with
# NEXTTOK_SEPARATE_COMPILATION, in alternation, ROUNDS times each, and prints the wall time and peak
# memory (GNU time's %e and %M) of each run, their medians and the ratios of separate to header-only.
# With OLD_INCLUDE, the include/ directory of another version (a git worktree of an older commit),
# its header-only build is measured in the same alternation, and the ratios to it printed too. FLAGS
# adds flags to every build (FLAGS='-march=native -DNEXTTOK_NO_DISPATCH': one kernel set).
#   bash benchmarks/compile_cost.sh [ROUNDS (default 3)] [OLD_INCLUDE]
set -euo pipefail
rounds="${1:-3}"
old="${2:-}"
here="$(cd "$(dirname "$0")/.." && pwd)"
cxx="${CXX:-g++}"
read -r -a extra <<< "${FLAGS:-}"
time_cmd=/usr/bin/time
[ -x "$time_cmd" ] || { echo "compile_cost.sh needs GNU time (/usr/bin/time; Debian package time)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf '#include <nexttok/nexttok.hpp>\nint main() { return 0; }\n' > "$work/one.cpp"

variants=("header-only" "separate")
[ -n "$old" ] && variants+=("old header-only")
flags_of() {
  case "$1" in
    "header-only") echo "-I$here/include" ;;
    "separate") echo "-I$here/include -DNEXTTOK_SEPARATE_COMPILATION" ;;
    "old header-only") echo "-I$old" ;;
  esac
}
for ((r = 1; r <= rounds; r++)); do
  for v in "${variants[@]}"; do
    # shellcheck disable=SC2046
    "$time_cmd" -f '%e %M' -o "$work/t" "$cxx" -std=c++20 -O2 $(flags_of "$v") -isystem /usr/include/eigen3 \
      "${extra[@]}" -c "$work/one.cpp" -o "$work/one.o"
    read -r s kb < "$work/t"
    echo "$v: round $r: $s s, $((kb / 1024)) MiB"
    echo "$s $kb" >> "$work/${v// /_}"
  done
done
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
for v in "${variants[@]}"; do
  f="$work/${v// /_}"
  t=$(cut -d' ' -f1 "$f" | median)
  m=$(cut -d' ' -f2 "$f" | median)
  echo "$t $m" > "$f.median"
  printf '%-16s median %6.2f s %5d MiB\n' "$v" "$t" "$((${m%.*} / 1024))"
done
ratios() {  # ratios of the variants after the first to the first
  local base="$1"
  shift
  read -r t0 m0 < "$work/${base// /_}.median"
  for v in "$@"; do
    read -r t m < "$work/${v// /_}.median"
    awk -v v="$v" -v b="$base" -v t="$t" -v m="$m" -v t0="$t0" -v m0="$m0" \
      'BEGIN { printf "%-16s / %s: time %.2f, memory %.2f\n", v, b, t / t0, m / m0 }'
  done
}
ratios "header-only" "separate"
[ -n "$old" ] && ratios "old header-only" "header-only" "separate"
exit 0

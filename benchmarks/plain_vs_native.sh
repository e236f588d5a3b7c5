#!/usr/bin/env bash
# Decode speed of the same program built two ways, side by side: nexttok_decode_bench_plain (-O2, no
# -march flag: the kernels chosen at run time) and nexttok_decode_bench (-march=native). Runs them
# alternately, ROUNDS times each (default 5), and prints per case the best tokens/s of each build
# and the ratios plain / native of the best and of the median tokens/s (1.0: the plain build loses
# nothing). Tokens/s, not bw_fraction: the bandwidth pass is itself compiled with each build's flags.
#   benchmarks/plain_vs_native.sh BUILD_DIR [FILTER] [ROUNDS]
# FILTER is a Google Benchmark filter (default: 1.1B-shape f16 and q4_0 decode, 1 and 2 threads).
set -euo pipefail
build=${1:?usage: plain_vs_native.sh BUILD_DIR [FILTER] [ROUNDS]}
filter=${2:-'^decode/1.1B/(f16|q4_0)/threads:[12]/'}
rounds=${3:-5}
plain="$build/benchmarks/nexttok_decode_bench_plain"
native="$build/benchmarks/nexttok_decode_bench"
for exe in "$plain" "$native"; do
  [[ -x "$exe" ]] || { echo "plain_vs_native.sh: $exe not built (cmake --build $build --target $(basename "$exe"))" >&2; exit 2; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((r = 0; r < rounds; ++r)); do
  for build_kind in plain native; do
    exe=$plain; [[ $build_kind == native ]] && exe=$native
    "$exe" --benchmark_filter="$filter" --benchmark_format=json > "$out/$build_kind.$r.json" 2> "$out/$build_kind.$r.err"
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
runs = {}  # (case, build) -> [tokens/s]
kernels = {}
for kind in ("plain", "native"):
    for r in range(rounds):
        doc = json.load(open(f"{out}/{kind}.{r}.json"))
        kernels[kind] = doc["context"].get("kernels", "?")
        for b in doc["benchmarks"]:
            runs.setdefault((b["name"].split("/min_time")[0], kind), []).append(b["tokens_per_s"])
names = sorted({n for n, _ in runs})
print(f"kernels: plain build {kernels['plain']}, native build {kernels['native']}; {rounds} alternating runs of each")
print(f"{'case':28s} {'plain tok/s':>12s} {'native tok/s':>13s} {'best: plain/native':>19s} {'median: plain/native':>21s}")
for n in names:
    p, q = runs[(n, "plain")], runs[(n, "native")]
    print(f"{n:28s} {max(p):12.2f} {max(q):13.2f} {max(p) / max(q):19.3f} {statistics.median(p) / statistics.median(q):21.3f}")
PY

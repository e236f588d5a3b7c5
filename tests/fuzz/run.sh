#!/usr/bin/env bash
# Builds the libFuzzer targets with clang++-14, makes their seed corpora from the shared data, and
# runs each target for SECONDS, one after the other (or LANES at a time). Prints per target the
# executions, the coverage (cov: and ft: of libFuzzer's final line) and the findings (crash, leak,
# timeout and out-of-memory inputs, kept in the findings folder). Exit status 1 when anything was found.
#
#   tests/fuzz/run.sh SECONDS [TARGET...]     (targets: the names below; default all)
#
# Environment: NEXTTOK_FUZZ_BUILD (build folder, default build-fuzz beside the source folder),
# NEXTTOK_DATA (shared data, default ../shared/data), CXX (default clang++-14), JOBS (build -j, 1),
# LANES (targets run at the same time, 1).
set -uo pipefail

all_targets=(gguf safetensors_hf llama2c tokenizer_json spm_model tokenizer_bin encode_decode stop_strings
             chat_template server_request tokenizer_merges)

if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 SECONDS [TARGET...]  (targets: ${all_targets[*]})" >&2
  exit 2
fi
seconds=$1
shift
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${all_targets[@]}")

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${NEXTTOK_FUZZ_BUILD:-$(dirname "$src")/build-fuzz}
data=${NEXTTOK_DATA:-$(dirname "$src")/shared/data}
if [[ ! -d $data ]]; then
  echo "shared data not found at $data (set NEXTTOK_DATA)" >&2
  exit 2
fi
data=$(cd "$data" && pwd)

# Per target: the largest input (the seeds' sizes decide it) and the dictionary, if any.
declare -A max_len=([gguf]=2400000 [safetensors_hf]=1100000 [llama2c]=1100000 [tokenizer_json]=65536
                    [spm_model]=16384 [tokenizer_bin]=16384 [encode_decode]=4096 [stop_strings]=4096
                    [chat_template]=16384 [server_request]=8192 [tokenizer_merges]=65536)
declare -A dict=([chat_template]=jinja.dict [server_request]=json.dict [tokenizer_json]=json.dict
                 [safetensors_hf]=json.dict [tokenizer_merges]=json.dict)

for t in "${targets[@]}"; do
  if [[ -z ${max_len[$t]:-} ]]; then
    echo "unknown target '$t' (targets: ${all_targets[*]})" >&2
    exit 2
  fi
done

cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER="${CXX:-clang++-14}" \
  -DNEXTTOK_FUZZ=ON -DNEXTTOK_NATIVE=OFF -DNEXTTOK_FUZZ_DATA_DIR="$data" >/dev/null || exit 2
cmake --build "$build" -j"${JOBS:-1}" --target "${targets[@]/#/nexttok_fuzz_}" || exit 2

corpus=$build/fuzz-corpus
findings=$build/fuzz-findings
logs=$build/fuzz-logs
"$here/make_corpus.sh" "$data" "$corpus" >/dev/null || exit 2
mkdir -p "$findings" "$logs"

# One target: runs it, then writes its summary line to $logs/$t.summary (and 1 to $t.failed on a finding).
run_target() {
  local t=$1
  mkdir -p "$findings/$t"
  rm -f "$logs/$t.summary" "$logs/$t.failed"
  local before after rc execs cov new line
  before=$(find "$findings/$t" -type f | wc -l)
  local args=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
              -max_len="${max_len[$t]}" -artifact_prefix="$findings/$t/")
  [[ -n ${dict[$t]:-} ]] && args+=(-dict="$here/${dict[$t]}")
  NEXTTOK_DATA=$data "$build/tests/fuzz/nexttok_fuzz_$t" "${args[@]}" "$corpus/$t" >"$logs/$t.log" 2>&1
  rc=$?
  after=$(find "$findings/$t" -type f | wc -l)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$t.log" | tail -1)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$logs/$t.log" | tail -1)
  new=$((after - before))
  line=$(printf '%-17s execs %-10s %-22s findings %d' "$t" "${execs:-?}" "${cov:-cov: ?}" "$new")
  if [[ $rc -ne 0 || $new -gt 0 ]]; then
    echo 1 >"$logs/$t.failed"
    line+="  (exit $rc; log $logs/$t.log)"
    grep -m3 -E 'ERROR|SUMMARY|Test unit written' "$logs/$t.log" | sed 's/^/    /' >>"$logs/$t.failed"
  fi
  echo "$line" >"$logs/$t.summary"
}

# LANES targets at a time (default 1: one after the other; 2 uses both cores of a 2-core machine).
lanes=${LANES:-1}
running=0
for t in "${targets[@]}"; do
  echo "== $t: ${seconds}s"
  run_target "$t" &
  running=$((running + 1))
  if [[ $running -ge $lanes ]]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

status=0
summary=()
for t in "${targets[@]}"; do
  line=$(cat "$logs/$t.summary" 2>/dev/null || echo "$t: no result")
  if [[ -f $logs/$t.failed || ! -f $logs/$t.summary ]]; then
    status=1
    cat "$logs/$t.failed" 2>/dev/null | sed 1d
  fi
  echo "$line"
  summary+=("$line")
done

echo
echo "summary (${seconds}s per target; findings in $findings):"
printf '  %s\n' "${summary[@]}"
exit $status

#!/usr/bin/env bash
# The scale-out test: two server replicas behind nginx (nginx.conf.in, lib.sh).
#   run_scale_out_test.sh SERVER MODEL EXPECTED_TEXT
# MODEL is stories260K.gguf, EXPECTED_TEXT its greedy text of "Once upon a time" (60 tokens).
# 1. 32 concurrent streamed completions through nginx all end with `data: [DONE]`, each with a prefix
#    of the known greedy text, and both replicas served some (nginx's access log names the replica of
#    each request; each replica's /metrics counts generated tokens).
# 2. Long streams run on both replicas; one replica is killed (SIGKILL) while they stream. Its streams
#    are cut: nginx has sent the headers and part of the chunked body, cannot add anything once the
#    replica is gone, and closes the connection before the last chunk, so curl fails (exit 18, "transfer
#    closed with outstanding read data remaining") and the body has no `data: [DONE]`: that is the error
#    a client sees. The other replica's streams end normally, and requests sent afterwards all succeed
#    on the surviving replica (nginx skips the dead one: connection refused, next upstream).
# Skips (message, exit 0) where nginx, curl or the model file is absent. Everything it starts is
# stopped at exit; the work directory is kept (and named) when the test fails.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"

server=${1:?usage: run_scale_out_test.sh SERVER MODEL EXPECTED_TEXT}
model=${2:?usage: run_scale_out_test.sh SERVER MODEL EXPECTED_TEXT}
expected_file=${3:?usage: run_scale_out_test.sh SERVER MODEL EXPECTED_TEXT}
# The failover's long streams: enough tokens to be still running when the replica is killed.
long_tokens=${NEXTTOK_SCALE_OUT_LONG_TOKENS:-1500}

skip() { echo "[scale-out test skipped: $*]"; exit 0; }
command -v curl >/dev/null || skip "curl not found"
nt_find_nginx || skip "nginx not found (set NGINX=/path/to/nginx)"
[ -f "$model" ] || skip "no model file $model"
[ -f "$expected_file" ] || skip "no expected text $expected_file"
[ -x "$server" ] || { echo "FAIL: $server is not an executable" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/nexttok-scale-out.XXXXXX") || exit 1
pids=()
nginx_pid=""
failed=0
cleanup() {
    local jobs_left
    jobs_left=$(jobs -p)
    # The curl jobs first (bounded by --max-time anyway), then nginx and the replicas.
    [ -n "$jobs_left" ] && kill $jobs_left 2>/dev/null
    nt_stop "$nginx_pid" "${pids[@]}"
    wait 2>/dev/null
    if [ "$failed" -eq 0 ]; then
        rm -rf "$dir"
    else
        echo "work directory kept: $dir (nginx: error.log, access.log; replicas: replica*.log)" >&2
    fi
}
trap cleanup EXIT
fail() {
    failed=1
    echo "FAIL: $*" >&2
    exit 1
}

expected=$(<"$expected_file")
expected_rest=${expected#Once upon a time}

# The concatenated "text" of a completion stream's chunks (the greedy text of this prompt has no
# quote or backslash in it, so a pattern is enough).
stream_text() {
    grep -o '"text":"[^"\\]*"' "$1" | sed 's/^"text":"//; s/"$//' | tr -d '\n'
}

# check_stream FILE RC: the stream ended with [DONE], curl succeeded, and the text is a non-empty
# prefix of the known greedy text.
check_stream() {
    local file=$1 rc=$2 text
    [ "$rc" -eq 0 ] || fail "$(basename "$file"): curl exit status $rc: $(cat "$file.err")"
    grep -q '^data: \[DONE\]' "$file" || fail "$(basename "$file"): no 'data: [DONE]' in the stream"
    text=$(stream_text "$file")
    [ -n "$text" ] || fail "$(basename "$file"): no text in the stream"
    [[ $expected_rest == "$text"* ]] || fail "$(basename "$file"): '$text' is not a prefix of the greedy text '$expected_rest'"
}

# stream TAG BODY MAX_SECONDS: a streamed completion through nginx in a background job; its body goes
# to $dir/TAG.sse, curl's exit status to $dir/TAG.rc. Sets STREAM_PID.
stream() {
    local tag=$1 body=$2 max_time=$3
    (curl -sS -N --max-time "$max_time" -H 'Content-Type: application/json' -H "X-Request-Tag: $tag" \
          -d "$body" -o "$dir/$tag.sse" "$url/v1/completions" 2>"$dir/$tag.sse.err"
     echo $? >"$dir/$tag.rc") &
    STREAM_PID=$!
}

# The replica (port) nginx sent request TAG to at last (the last of $upstream_addr's list).
upstream_of() {
    sed -n "s/.* tag=$1 upstream=\([^ ]*, \)*127\.0\.0\.1:\([0-9]*\) .*/\2/p" "$dir/access.log" | tail -n 1
}

# A counter or gauge from a replica's /metrics (the sum over its label sets).
metric() {
    curl -sS --max-time 5 "http://127.0.0.1:$1/metrics" |
        awk -v name="$2" '$1 == name || index($1, name "{") == 1 { sum += $2; found = 1 } END { if (found) print sum; else print "absent" }'
}

flags=(--model "$model" --threads 1 --parallel 8 --ctx-size $((long_tokens + 64)))
ports=()
for r in 0 1; do
    nt_start_replica "$server" "$dir" "replica$r" "${flags[@]}" || fail "replica $r did not start"
    pids+=("$NT_PID")
    ports+=("$NT_PORT")
done
nt_start_nginx "$dir" "${ports[@]}" || fail "nginx did not start"
nginx_pid=$NT_NGINX_PID
url="http://127.0.0.1:$NT_NGINX_PORT"
echo "replicas on ports ${ports[*]}, nginx on $NT_NGINX_PORT ($dir)"

# 1. 32 concurrent streams.
greedy='{"prompt": "Once upon a time", "max_tokens": 16, "temperature": 0, "stream": true}'
burst=()
for i in $(seq 0 31); do
    stream "burst-$i" "$greedy" 30
    burst+=("$STREAM_PID")
done
wait "${burst[@]}"
declare -A served=()
for i in $(seq 0 31); do
    check_stream "$dir/burst-$i.sse" "$(cat "$dir/burst-$i.rc")"
    port=$(upstream_of "burst-$i")
    [ -n "$port" ] || fail "burst-$i: no line with its replica in nginx's access log"
    served[$port]=$((${served[$port]:-0} + 1))
done
for r in 0 1; do
    p=${ports[r]}
    [ "${served[$p]:-0}" -gt 0 ] || fail "replica $r (port $p) served none of the 32 requests (access log: ${served[*]})"
    tokens=$(metric "$p" nexttok_generated_tokens_total)
    [[ $tokens =~ ^[0-9.e+]+$ ]] && awk -v t="$tokens" 'BEGIN { exit !(t > 0) }' ||
        fail "replica $r (port $p): nexttok_generated_tokens_total is $tokens, expected > 0"
    echo "replica $r (port $p): ${served[$p]} of 32 streams, $tokens tokens generated"
done

# 2. Failover: long streams on both replicas, then replica 0 is killed while they run.
victim=${ports[0]}
survivor=${ports[1]}
long=()
for i in $(seq 0 7); do
    stream "long-$i" "{\"prompt\": \"Once upon a time\", \"max_tokens\": $long_tokens, \"ignore_eos\": true, \"temperature\": 0.8, \"seed\": $i, \"stream\": true}" 60
    long+=("$STREAM_PID")
done
# Every stream has sent a token (bounded: 20 s), and the victim runs some of them.
for ((t = 0; t < 200; t++)); do
    started=0
    for i in $(seq 0 7); do
        grep -q '"text"' "$dir/long-$i.sse" 2>/dev/null && started=$((started + 1))
    done
    [ "$started" -eq 8 ] && break
    sleep 0.1
done
[ "$started" -eq 8 ] || fail "only $started of the 8 long streams started within 20 s"
running=$(metric "$victim" nexttok_requests_running)
[[ $running =~ ^[0-9]+$ ]] && [ "$running" -gt 0 ] ||
    fail "replica 0 runs $running requests before it is killed, expected some of the 8 long streams"
kill -KILL "${pids[0]}"
wait "${pids[0]}" 2>/dev/null
pids[0]=""
echo "replica 0 (port $victim) killed with $running streams running"

# New requests after the kill: all succeed, on the survivor.
retried=0
after=()
for i in $(seq 0 7); do
    stream "after-$i" "$greedy" 30
    after+=("$STREAM_PID")
done
wait "${after[@]}" "${long[@]}"
for i in $(seq 0 7); do
    check_stream "$dir/after-$i.sse" "$(cat "$dir/after-$i.rc")"
    port=$(upstream_of "after-$i")
    [ "$port" = "$survivor" ] || fail "after-$i: served by port '$port', expected the surviving replica $survivor"
    grep -q " tag=after-$i upstream=127\.0\.0\.1:$victim, " "$dir/access.log" && retried=$((retried + 1))
done
cut=0
cut_status=""
for i in $(seq 0 7); do
    rc=$(cat "$dir/long-$i.rc")
    port=$(upstream_of "long-$i")
    if [ "$port" = "$victim" ]; then
        # Cut: curl reports the unfinished transfer and there is no [DONE].
        [ "$rc" -eq 18 ] || [ "$rc" -eq 56 ] ||
            fail "long-$i (on the killed replica): curl exit status $rc, expected 18 or 56 (a cut transfer)"
        ! grep -q '^data: \[DONE\]' "$dir/long-$i.sse" || fail "long-$i (on the killed replica) ended with [DONE]"
        cut=$((cut + 1))
        cut_status+=" $rc"
    elif [ "$port" = "$survivor" ]; then
        [ "$rc" -eq 0 ] || fail "long-$i (on the surviving replica): curl exit status $rc: $(cat "$dir/long-$i.sse.err")"
        grep -q '^data: \[DONE\]' "$dir/long-$i.sse" || fail "long-$i (on the surviving replica): no [DONE]"
    else
        fail "long-$i: no replica in nginx's access log ('$port')"
    fi
done
[ "$cut" -gt 0 ] || fail "no long stream was on the killed replica"
echo "failover: $cut streams cut on the killed replica (curl exit status:$cut_status, no [DONE]), $((8 - cut)) completed on the other; 8 new requests all on the survivor ($retried tried the dead replica first)"
echo "PASS"

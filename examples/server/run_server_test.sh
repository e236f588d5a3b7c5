#!/usr/bin/env bash
# The server's end-to-end test: starts `server` on free loopback ports with stories260K and checks it
# with curl against oracles: the same request streamed and not streamed gives the same text; choice 1
# of n = 2 is the request alone with seed + 1; greedy text and a stop string against the reference
# text; OpenAI error shapes and statuses (400, 401, 404, 413, 503); chat with ChatML; /v1/models,
# /health, /metrics; a client that disconnects frees its KV blocks; SIGTERM ends the server with
# status 0 while a stream gets its last chunk and [DONE].
#
#   run_server_test.sh SERVER CURL MODEL_DIR
#
# Skips itself (exit 0, a line "[server test skipped: ...]") without the model file, curl or node
# (node reads the JSON answers). Every wait is bounded; every process it starts is killed on exit.
set -u
server_bin=$1
curl_bin=${2:-}
model_dir=$3
model=$model_dir/stories260K.gguf
expected_file=$model_dir/expected_greedy_prompt_once_upon_a_time_n60.txt

skip() { echo "[server test skipped: $*]"; exit 0; }
[ -f "$model" ] || skip "no model file $model"
[ -n "$curl_bin" ] && [ -x "$curl_bin" ] || skip "curl is not installed"
command -v node > /dev/null || skip "node is not installed (it reads the JSON answers)"

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# start_server NAME ARGS...: starts the server, waits (bounded) for its "listening" line, sets PORT and SERVER_PID.
start_server() {
  local name=$1
  shift
  "$server_bin" --model "$model" --port 0 -t 1 "$@" > "$work/$name.out" 2> "$work/$name.err" &
  SERVER_PID=$!
  pids+=("$SERVER_PID")
  for _ in $(seq 100); do
    PORT=$(sed -n 's|^server listening on http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$work/$name.out")
    [ -n "$PORT" ] && return 0
    kill -0 "$SERVER_PID" 2> /dev/null || break
    sleep 0.1
  done
  echo "FAIL: server $name did not start: $(cat "$work/$name.err")"
  exit 1
}

# post PATH BODY [CURL ARGS...]: the body of the answer in $work/body, the status in STATUS.
post() {
  local path=$1 body=$2
  shift 2
  STATUS=$("$curl_bin" -s --max-time 30 -o "$work/body" -w '%{http_code}' -H 'Content-Type: application/json' "$@" \
           "http://127.0.0.1:$PORT$path" -d "$body")
}
get() {
  local path=$1
  shift
  STATUS=$("$curl_bin" -s --max-time 30 -o "$work/body" -w '%{http_code}' "$@" "http://127.0.0.1:$PORT$path")
}
# js EXPR [FILE]: evaluates EXPR with j = the JSON of FILE (default: the last answer) and prints it.
js() { node -e "const j = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8')); const v = ($1); process.stdout.write(typeof v === 'string' ? v : JSON.stringify(v));" "${2:-$work/body}"; }
# sse_text FILE [CHOICE]: the text of a choice reassembled from the SSE deltas; "NO-DONE" if the stream did not end with [DONE].
sse_text() {
  node -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(l => l.startsWith("data: "));
    const choice = Number(process.argv[2] || 0);
    let text = "", reason = null;
    for (const l of lines.slice(0, -1)) {
      const j = JSON.parse(l.slice(6));
      for (const c of j.choices) {
        if (c.index !== choice) continue;
        text += c.text !== undefined ? c.text : (c.delta.content || "");
        if (c.finish_reason) reason = c.finish_reason;
      }
    }
    if (lines[lines.length - 1] !== "data: [DONE]") text = "NO-DONE";
    process.stdout.write(JSON.stringify({text, reason}));' "$1" "${2:-0}"
}
expect_status() {  # expect_status WANT WHAT
  if [ "$STATUS" = "$1" ]; then pass "$2: $STATUS"; else fail "$2: status $STATUS, expected $1: $(head -c 300 "$work/body")"; fi
}
expect_eq() {  # expect_eq GOT WANT WHAT
  if [ "$1" = "$2" ]; then pass "$3"; else fail "$3: got '$1', expected '$2'"; fi
}
metric() { "$curl_bin" -s --max-time 5 "http://127.0.0.1:$PORT/metrics" | sed -n "s/^$1 //p"; }
# Prints yes once no request runs and USED KV blocks are in use (within 5 s), else no.
wait_until_freed() {  # wait_until_freed USED
  for _ in $(seq 50); do
    if [ "$(metric nexttok_requests_running)" = 0 ] && [ "$(metric nexttok_kv_blocks_used)" = "$1" ]; then echo yes; return; fi
    sleep 0.1
  done
  echo no
}

# --- server A: chat template, a long context (for a generation that outlasts a client) -----------------
start_server a --chat-template chatml --ctx-size 65536
once='{"prompt": "Once upon a time", "seed": 5, "temperature": 0.8, "max_tokens": 40'
post /v1/completions "$once}"
expect_status 200 "completion"
expect_eq "$(js 'j.object + " " + j.choices.length + " " + j.choices[0].index + " " + (j.usage.total_tokens === j.usage.prompt_tokens + j.usage.completion_tokens)')" \
          "text_completion 1 0 true" "completion shape"
plain_text=$(js 'j.choices[0].text')
plain_reason=$(js 'j.choices[0].finish_reason')
"$curl_bin" -sN --max-time 30 "http://127.0.0.1:$PORT/v1/completions" -d "$once, \"stream\": true}" > "$work/stream"
expect_eq "$(sse_text "$work/stream")" "$(node -e 'process.stdout.write(JSON.stringify({text: process.argv[1], reason: process.argv[2]}))' "$plain_text" "$plain_reason")" \
          "streamed text and finish_reason = non-streamed (and the stream ends with [DONE])"
[ -n "$plain_text" ] || fail "the completion text is empty"

# n = 2: choice i is the request alone with seed + i.
post /v1/completions '{"prompt": "Once upon a time", "seed": 11, "temperature": 0.8, "max_tokens": 30, "n": 2}'
expect_eq "$(js 'j.choices.map(c => c.index)')" "[0,1]" "n = 2 gives choices 0 and 1"
cp "$work/body" "$work/n2"
post /v1/completions '{"prompt": "Once upon a time", "seed": 12, "temperature": 0.8, "max_tokens": 30}'
expect_eq "$(js 'j.choices[1].text' "$work/n2")" "$(js 'j.choices[0].text')" "choice 1 of n = 2 = the request alone with seed + 1"
post /v1/completions '{"prompt": "Once upon a time", "seed": 11, "temperature": 0.8, "max_tokens": 30}'
expect_eq "$(js 'j.choices[0].text' "$work/n2")" "$(js 'j.choices[0].text')" "choice 0 of n = 2 = the request alone with the seed"

# Greedy: the reference text; with stop "Lily" the text ends before it.
expected=$(cat "$expected_file")
post /v1/completions '{"prompt": "Once upon a time", "temperature": 0, "max_tokens": 60}'
greedy="Once upon a time$(js 'j.choices[0].text')"
case "$greedy" in "$expected"*) pass "greedy text = the reference" ;; *) fail "greedy text '$greedy' does not start with '$expected'" ;; esac
post /v1/completions '{"prompt": "Once upon a time", "temperature": 0, "max_tokens": 60, "stop": "Lily"}'
before_lily=${expected#Once upon a time}
before_lily=${before_lily%%Lily*}
expect_eq "$(js 'j.choices[0].text + "|" + j.choices[0].finish_reason')" "$before_lily|stop" "stop string: the text ends before 'Lily', finish_reason stop"

# Errors.
post /v1/completions '{"prompt": "Once", "max_tokens": '
expect_status 400 "malformed JSON"
expect_eq "$(js 'typeof j.error.message + " " + j.error.type')" "string invalid_request_error" "malformed JSON: an OpenAI error"
post /v1/completions '{"prompt": "Once", "max_tokens": -1}'
expect_status 400 "max_tokens -1"
expect_eq "$(js 'j.error.param + " " + /max_tokens/.test(j.error.message)')" "max_tokens true" "max_tokens -1: the error names max_tokens"
post /v1/completions '{"prompt": "Once", "temperature": "hot"}'
expect_status 400 "temperature as a string"
get /v1/nothing-here
expect_status 404 "unknown path"
expect_eq "$(js 'j.error.code')" "not_found" "unknown path: an OpenAI error"
head -c 10485760 /dev/zero | tr '\0' ' ' > "$work/big"
post /v1/completions "@$work/big"
expect_status 413 "10 MB body"

# Chat with ChatML; streamed = non-streamed.
chat='{"messages": [{"role": "system", "content": "You tell stories."}, {"role": "user", "content": "Tell me a story."}], "seed": 3, "max_tokens": 24'
post /v1/chat/completions "$chat}"
expect_status 200 "chat completion"
expect_eq "$(js 'j.object + " " + j.choices[0].message.role + " " + typeof j.choices[0].message.content + " " + /^(stop|length)$/.test(j.choices[0].finish_reason)')" \
          "chat.completion assistant string true" "chat completion shape"
chat_text=$(js 'j.choices[0].message.content')
"$curl_bin" -sN --max-time 30 "http://127.0.0.1:$PORT/v1/chat/completions" -d "$chat, \"stream\": true}" > "$work/chat_stream"
expect_eq "$(sse_text "$work/chat_stream" | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0, "utf8")).text)')" "$chat_text" \
          "streamed chat text = non-streamed"

# Models, health, metrics.
get /v1/models
expect_eq "$(js 'j.object + " " + j.data[0].object + " " + j.data[0].id + " " + j.data[0].owned_by')" "list model stories260K.gguf nexttok" "/v1/models"
get /health
expect_eq "$STATUS $(js 'j.status')" "200 ok" "/health"
get /metrics
if grep -q '^nexttok_time_to_first_token_seconds_bucket{le="+Inf"} [1-9]' "$work/body" && grep -q '^# TYPE nexttok_requests_running gauge' "$work/body"; then
  pass "/metrics has the time-to-first-token histogram and the gauges"
else
  fail "/metrics: $(head -c 500 "$work/body")"
fi

# A client that goes away after 1 s of a long stream: its request is cancelled and its blocks freed.
used_before=$(metric nexttok_kv_blocks_used)
"$curl_bin" -sN --max-time 1 "http://127.0.0.1:$PORT/v1/completions" \
  -d '{"prompt": "Once upon a time", "max_tokens": 60000, "ignore_eos": true, "stream": true}' > "$work/cut"
grep -q '^data: {' "$work/cut" && ! grep -q '\[DONE\]' "$work/cut" || fail "the long stream did not run until the client left"
freed=$(wait_until_freed "$used_before")
expect_eq "$freed" yes "a disconnected stream is cancelled: 0 running, $used_before KV blocks used as before"
# The same for a non-streamed request (the server writes a space per second while it waits).
"$curl_bin" -s --max-time 1 "http://127.0.0.1:$PORT/v1/completions" -d '{"prompt": "Once", "max_tokens": 60000, "ignore_eos": true}' > /dev/null
freed=$(wait_until_freed "$used_before")
expect_eq "$freed" yes "a disconnected non-streamed request is cancelled"

# SIGTERM during a stream: the stream ends with a finish_reason and [DONE], the server exits 0 within 10 s.
"$curl_bin" -sN --max-time 20 "http://127.0.0.1:$PORT/v1/completions" \
  -d '{"prompt": "Once upon a time", "max_tokens": 60000, "ignore_eos": true, "stream": true}' > "$work/term" &
client=$!
pids+=("$client")
for _ in $(seq 50); do grep -q '^data: {' "$work/term" && break; sleep 0.1; done
kill -TERM "$SERVER_PID"
exited=no
for _ in $(seq 100); do kill -0 "$SERVER_PID" 2> /dev/null || { exited=yes; break; }; sleep 0.1; done
if [ $exited = yes ]; then
  wait "$SERVER_PID"
  expect_eq "$?" 0 "SIGTERM: exit status"
else
  fail "SIGTERM: the server still runs after 10 s"
fi
wait "$client"
expect_eq "$(sse_text "$work/term" | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0, "utf8")).reason || "none")')" length \
          "SIGTERM: the stream got its last chunk (finish_reason length) and [DONE]"

# --- server B: an API key and a 32-position context ----------------------------------------------------
start_server b --api-key secret --ctx-size 32
post /v1/completions '{"prompt": "Once", "max_tokens": 4}'
expect_status 401 "no Authorization header"
post /v1/completions '{"prompt": "Once", "max_tokens": 4}' -H 'Authorization: Bearer wrong'
expect_status 401 "a wrong key"
post /v1/completions '{"prompt": "Once", "max_tokens": 4}' -H 'Authorization: Bearer secret'
expect_status 200 "the right key"
get /health
expect_status 200 "/health needs no key"
long=$(printf 'Once upon a time there was a big dog. %.0s' $(seq 10))
post /v1/completions "{\"prompt\": \"$long\", \"max_tokens\": 4}" -H 'Authorization: Bearer secret'
expect_status 400 "a prompt longer than the context"
expect_eq "$(js 'j.error.param')" prompt "a prompt longer than the context: the error names prompt"
post /v1/chat/completions '{"messages": [{"role": "user", "content": "Hi"}]}' -H 'Authorization: Bearer secret'
expect_eq "$STATUS $(js '/--chat-template/.test(j.error.message)')" "400 true" "chat without a template: 400 naming --chat-template"

# --- server C: one slot, no queue: a second request gets 503 with Retry-After ----------------------------
start_server c --parallel 1 --queue 0 --ctx-size 65536
"$curl_bin" -sN --max-time 20 "http://127.0.0.1:$PORT/v1/completions" \
  -d '{"prompt": "Once", "max_tokens": 60000, "ignore_eos": true, "stream": true}' > /dev/null &
busy=$!
pids+=("$busy")
for _ in $(seq 50); do [ "$(metric nexttok_requests_running)" = 1 ] && break; sleep 0.1; done
STATUS=$("$curl_bin" -s --max-time 10 -D "$work/headers" -o "$work/body" -w '%{http_code}' "http://127.0.0.1:$PORT/v1/completions" -d '{"prompt": "Once"}')
expect_status 503 "a full server"
grep -qi '^Retry-After: 1' "$work/headers" && pass "503 has Retry-After" || fail "503 without Retry-After: $(cat "$work/headers")"
kill "$busy" 2> /dev/null

if [ $failures -gt 0 ]; then
  echo "$failures check(s) failed; server logs:"
  tail -n 5 "$work"/*.err
  exit 1
fi
echo "all server checks passed"

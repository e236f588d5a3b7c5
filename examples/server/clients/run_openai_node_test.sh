#!/usr/bin/env bash
# The OpenAI Node client test: installs the pinned `openai` package into NODE_PREFIX (install.sh, at
# test time), starts the server with the model and the ChatML template on a free loopback port, runs
# openai_client_test.mjs against it and stops the server.
#   run_openai_node_test.sh SERVER MODEL EXPECTED_TEXT NODE_PREFIX
# Skips (a line "[openai node test skipped: ...]", exit 0) where node or npm is absent, the npm
# registry is unreachable or the model file is absent.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../deploy/lib.sh"

usage="usage: run_openai_node_test.sh SERVER MODEL EXPECTED_TEXT NODE_PREFIX"
server=${1:?$usage}
model=${2:?$usage}
expected_file=${3:?$usage}
prefix=${4:?$usage}

skip() { echo "[openai node test skipped: $*]"; exit 0; }
[ -f "$model" ] || skip "no model file $model"
[ -x "$server" ] || { echo "FAIL: $server is not an executable" >&2; exit 1; }
bash "$here/install.sh" "$prefix"
case $? in
    0) ;;
    77) exit 0 ;;  # install.sh printed the reason
    *) echo "FAIL: install.sh could not install the openai package" >&2; exit 1 ;;
esac

dir=$(mktemp -d "${TMPDIR:-/tmp}/nexttok-openai-node.XXXXXX") || exit 1
pid=""
cleanup() {
    nt_stop "$pid"
    rm -rf "$dir"
}
trap cleanup EXIT

nt_start_replica "$server" "$dir" server --model "$model" --chat-template chatml --threads 1 || exit 1
pid=$NT_PID
timeout 120 node "$here/openai_client_test.mjs" "http://127.0.0.1:$NT_PORT" "$prefix" "$expected_file"
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "FAIL: openai_client_test.mjs exit status $rc; the server's log ends with:" >&2
    tail -n 20 "$dir/server.log" >&2
    exit 1
fi

#!/usr/bin/env bash
# Starts N replicas of the nexttok server (2 by default) and nginx in front of them, all on loopback
# ports, prints nginx's URL and runs until Ctrl-C (or SIGTERM), then stops everything it started.
#
# Usage: examples/server/deploy/start.sh [options] [--] [server flags...]
#   --server PATH        the server binary (default: $SERVER, else build/examples/server/server)
#   --replicas N         replicas to start (default 2)
#   --replica-ports P,Q  fixed replica ports instead of free ones (--port 0)
#   --dir DIR            nginx's directory: configuration, pid, logs, temporary files, and the
#                        replicas' logs (default: a new temporary directory, removed at exit)
#   everything else is passed to every replica, e.g.
#     examples/server/deploy/start.sh -- --model ../shared/data/models/stories260K/stories260K.gguf --threads 1
# nginx is $NGINX, nginx on PATH or /usr/sbin/nginx; it needs no root (see nginx.conf.in).
# Then: curl http://127.0.0.1:PORT/v1/completions -H 'Content-Type: application/json' \
#         -d '{"prompt": "Once upon a time", "max_tokens": 32, "stream": true}'
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"

server=${SERVER:-$here/../../../build/examples/server/server}
n_replicas=2
replica_ports=""
dir=""
server_flags=()
while [ $# -gt 0 ]; do
    case $1 in
        --server) server=$2; shift 2 ;;
        --replicas) n_replicas=$2; shift 2 ;;
        --replica-ports) replica_ports=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        --) shift; server_flags+=("$@"); break ;;
        *) server_flags+=("$1"); shift ;;
    esac
done
[[ $n_replicas =~ ^[1-9][0-9]*$ ]] || { echo "error: --replicas $n_replicas: expected a count >= 1" >&2; exit 2; }
[ -x "$server" ] || { echo "error: --server $server: not an executable (build the server target, or give --server)" >&2; exit 2; }
IFS=, read -r -a fixed_ports <<<"$replica_ports"
if [ -n "$replica_ports" ] && [ "${#fixed_ports[@]}" -ne "$n_replicas" ]; then
    echo "error: --replica-ports $replica_ports: expected $n_replicas ports" >&2
    exit 2
fi

remove_dir=0
if [ -z "$dir" ]; then
    dir=$(mktemp -d "${TMPDIR:-/tmp}/nexttok-deploy.XXXXXX") || exit 1
    remove_dir=1
fi
mkdir -p "$dir" || exit 1

pids=()
nginx_pid=""
cleanup() {
    trap - EXIT INT TERM
    nt_stop "$nginx_pid" "${pids[@]}"
    [ "$remove_dir" -eq 1 ] && rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ports=()
for ((r = 0; r < n_replicas; r++)); do
    port_flags=()
    [ -n "$replica_ports" ] && port_flags=(--port "${fixed_ports[r]}")
    nt_start_replica "$server" "$dir" "replica$r" "${server_flags[@]}" "${port_flags[@]}" || exit 1
    pids+=("$NT_PID")
    ports+=("$NT_PORT")
    echo "replica $r: http://127.0.0.1:$NT_PORT (pid $NT_PID, log $dir/replica$r.log)" >&2
done
nt_start_nginx "$dir" "${ports[@]}" || exit 1
nginx_pid=$NT_NGINX_PID
echo "nginx: $dir/nginx.conf, logs in $dir" >&2
echo "http://127.0.0.1:$NT_NGINX_PORT"

# Until a signal, or until nginx or a replica exits.
wait -n "$nginx_pid" "${pids[@]}"
echo "a process exited; stopping the others" >&2
exit 1

# What start.sh and the tests share: starting server replicas on free loopback ports, writing the
# nginx configuration from nginx.conf.in and starting nginx. Source it from bash; the functions set
# global variables (NT_*) rather than print, so that the processes they start stay children of the
# calling shell (which stops them).

NT_DEPLOY_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The nginx binary: $NGINX, else nginx on PATH, else Debian's /usr/sbin/nginx (not on a user's PATH).
nt_find_nginx() {
    NT_NGINX=${NGINX:-$(command -v nginx || true)}
    [ -n "$NT_NGINX" ] || NT_NGINX=/usr/sbin/nginx
    [ -x "$NT_NGINX" ]
}

# nt_start_replica SERVER DIR NAME [server flags...]: starts SERVER --port 0 (the flags may give
# another --port, which comes later and wins) with stdout in DIR/NAME.out and stderr in
# DIR/NAME.log, and waits (at most 60 s) for its `server listening on http://HOST:PORT` line.
# Sets NT_PID and NT_PORT; returns 1 with a message when the replica exits or does not answer.
nt_start_replica() {
    local server=$1 dir=$2 name=$3
    shift 3
    "$server" --port 0 "$@" >"$dir/$name.out" 2>"$dir/$name.log" &
    NT_PID=$!
    NT_PORT=
    local i
    for ((i = 0; i < 600; i++)); do
        NT_PORT=$(sed -n 's|^server listening on http://.*:\([0-9][0-9]*\)$|\1|p' "$dir/$name.out" 2>/dev/null)
        [ -n "$NT_PORT" ] && return 0
        if ! kill -0 "$NT_PID" 2>/dev/null; then
            echo "error: $name ($server) exited before listening:" >&2
            tail -n 5 "$dir/$name.log" >&2
            return 1
        fi
        sleep 0.1
    done
    echo "error: $name ($server) printed no 'server listening on' line within 60 s" >&2
    return 1
}

# A loopback port nothing listens on now (nginx cannot be asked for port 0; nt_start_nginx retries
# with another port when it loses the race for this one).
nt_free_port() {
    local p i
    for ((i = 0; i < 100; i++)); do
        p=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            NT_FREE_PORT=$p
            return 0
        fi
    done
    return 1
}

# nt_write_nginx_conf PREFIX LISTEN_PORT REPLICA_PORT...: PREFIX/nginx.conf for nginx on
# 127.0.0.1:LISTEN_PORT in front of the replicas on 127.0.0.1:REPLICA_PORT...
nt_write_nginx_conf() {
    local prefix=$1 listen=$2
    shift 2
    local servers="" p
    for p in "$@"; do
        # max_fails=1: one failed connection takes a replica out of the rotation for 10 s.
        servers+="        server 127.0.0.1:$p max_fails=1 fail_timeout=10s;"$'\n'
    done
    local conf
    conf=$(<"$NT_DEPLOY_DIR/nginx.conf.in")
    conf=${conf//@PREFIX@/$prefix}
    conf=${conf//@LISTEN@/127.0.0.1:$listen}
    conf=${conf//@UPSTREAM_SERVERS@$'\n'/$servers}
    printf '%s\n' "$conf" >"$prefix/nginx.conf"
}

# nt_start_nginx PREFIX REPLICA_PORT...: writes the configuration into PREFIX, checks it, starts
# nginx in the foreground of a background job and waits (at most 10 s per try) until it answers
# /health. Tries up to 5 free ports. Sets NT_NGINX_PID and NT_NGINX_PORT.
nt_start_nginx() {
    local prefix=$1
    shift
    nt_find_nginx || { echo "error: nginx not found (set NGINX=/path/to/nginx)" >&2; return 1; }
    # When started by root, nginx runs its worker as nobody, which must reach the files in PREFIX.
    chmod go+rx "$prefix"
    local attempt i
    for ((attempt = 0; attempt < 5; attempt++)); do
        nt_free_port || return 1
        NT_NGINX_PORT=$NT_FREE_PORT
        nt_write_nginx_conf "$prefix" "$NT_NGINX_PORT" "$@"
        if ! "$NT_NGINX" -t -q -p "$prefix" -e "$prefix/error.log" -c "$prefix/nginx.conf"; then
            echo "error: nginx rejects $prefix/nginx.conf" >&2
            return 1
        fi
        "$NT_NGINX" -p "$prefix" -e "$prefix/error.log" -c "$prefix/nginx.conf" &
        NT_NGINX_PID=$!
        for ((i = 0; i < 100; i++)); do
            if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$NT_NGINX_PORT/health"; then
                return 0
            fi
            kill -0 "$NT_NGINX_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill "$NT_NGINX_PID" 2>/dev/null
        wait "$NT_NGINX_PID" 2>/dev/null
        grep -q "Address already in use" "$prefix/error.log" 2>/dev/null || break
    done
    echo "error: nginx did not start; $prefix/error.log:" >&2
    tail -n 5 "$prefix/error.log" >&2
    return 1
}

# nt_stop PID...: SIGTERM, then SIGKILL after 5 s; waits for each (children of this shell only).
nt_stop() {
    local pid i
    for pid in "$@"; do
        [ -n "$pid" ] || continue
        kill -TERM "$pid" 2>/dev/null || continue
        for ((i = 0; i < 50; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    return 0
}

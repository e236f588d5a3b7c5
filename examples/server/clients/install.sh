#!/usr/bin/env bash
# Installs the npm packages of package.json (the pinned `openai` client) into DEST/node_modules:
#   install.sh DEST
# Run by the client test, never by the build: nothing is downloaded while building. Does nothing when
# DEST already holds the pinned version. Exit status: 0 installed, 77 skipped (no npm, or the registry
# is unreachable: a line "[openai node test skipped: ...]" says why), 1 any other failure.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=${1:?usage: install.sh DEST}

skip() { echo "[openai node test skipped: $*]"; exit 77; }
command -v node >/dev/null || skip "node not found"
command -v npm >/dev/null || skip "npm not found"

pinned=$(node -p 'require(process.argv[1]).dependencies.openai' "$here/package.json") || exit 1
installed=$(node -p 'require(process.argv[1]).version' "$dest/node_modules/openai/package.json" 2>/dev/null)
if [ "$installed" = "$pinned" ] && cmp -s "$here/package.json" "$dest/package.json"; then
    echo "openai $pinned already installed in $dest"
    exit 0
fi

mkdir -p "$dest" || exit 1
cp "$here/package.json" "$dest/package.json" || exit 1
log="$dest/npm-install.log"
echo "npm install openai@$pinned into $dest"
timeout 120 npm install --no-audit --no-fund --no-update-notifier --prefix "$dest" >"$log" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
    # A registry that cannot be reached (no network, DNS, proxy, timeout) skips the test; anything
    # else is a failure.
    if [ "$rc" -eq 124 ]; then
        skip "npm install did not finish within 120 s (registry unreachable?), see $log"
    fi
    if grep -Eq 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network|proxy|socket hang up' "$log"; then
        skip "the npm registry is unreachable: $(grep -m1 -E 'npm (ERR|error)' "$log")"
    fi
    echo "error: npm install failed (exit status $rc):" >&2
    tail -n 20 "$log" >&2
    exit 1
fi
installed=$(node -p 'require(process.argv[1]).version' "$dest/node_modules/openai/package.json" 2>/dev/null)
[ "$installed" = "$pinned" ] || { echo "error: npm installed openai '$installed', expected $pinned" >&2; exit 1; }
echo "openai $installed installed in $dest"

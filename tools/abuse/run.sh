#!/usr/bin/env bash
# Builds ferry (or uses FERRY_BIN), starts `ferry serve --in-memory` on free
# ports, runs the abuse mix against it and stops it.
# Usage: tools/abuse/run.sh [DURATION] [extra abuse flags...]
set -euo pipefail
cd "$(dirname "$0")/../.."
duration=${1:-60s}; shift || true
pid=; work=$(mktemp -d); trap 'kill -INT "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
bin=${FERRY_BIN:-$work/ferry}
[ -n "${FERRY_BIN:-}" ] || go build -o "$bin" .
go build -o "$work/abuse" ./tools/abuse
"$bin" serve --in-memory --addr-file "$work/addr.json" --log-level error ${SERVE_FLAGS:-} \
	--api-addr 127.0.0.1:0 --rpc-addr 127.0.0.1:0 --ephemeral-addr 127.0.0.1:0 --router-addr 127.0.0.1:0 \
	>"$work/out" 2>"$work/err" &
pid=$!
until [ -s "$work/addr.json" ]; do sleep 0.05; kill -0 "$pid"; done
"$work/abuse" -addr-file "$work/addr.json" -pid "$pid" -duration "$duration" "$@"

#!/usr/bin/env bash
# Startup time (exec → every endpoint serving, i.e. the address file
# exists) of `ferry serve` on a fresh data directory, and its RSS after
# idling. Usage: measure-serve.sh FERRY_BINARY [RUNS] [IDLE_SECONDS]
set -euo pipefail
bin=$1; runs=${2:-10}; idle=${3:-30}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
flags=(--api-addr 127.0.0.1:0 --rpc-addr 127.0.0.1:0 --ephemeral-addr 127.0.0.1:0 --router-addr 127.0.0.1:0)
for i in $(seq "$runs"); do
	rm -rf "$work/data" "$work/addr.json"
	t0=$(date +%s%N)
	"$bin" serve --data "$work/data" --addr-file "$work/addr.json" "${flags[@]}" >"$work/out" 2>"$work/err" &
	pid=$!
	until [ -s "$work/addr.json" ]; do sleep 0.002; done
	t1=$(date +%s%N)
	echo "run $i: $(( (t1 - t0) / 1000000 )) ms to serving; banner: $(grep -o 'Ready in [0-9]* ms' "$work/out" || true)"
	kill -INT "$pid"; wait "$pid"
done
rm -rf "$work/data" "$work/addr.json"
"$bin" serve --data "$work/data" --addr-file "$work/addr.json" "${flags[@]}" >"$work/out" 2>"$work/err" &
pid=$!
until [ -s "$work/addr.json" ]; do sleep 0.01; done
sleep "$idle"
echo "after ${idle}s idle: $(grep -E 'VmRSS|VmHWM' /proc/$pid/status | tr -s ' \t' ' ' | paste -sd ' ')"
kill -INT "$pid"; wait "$pid"

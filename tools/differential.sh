#!/usr/bin/env bash
# The differential test at a large count: the same signed random
# transactions go to ferry serve's base node and to LiteSVM (the real
# compiled programs); any divergence not documented in docs/localnet.md
# ("Differences from the real programs") fails the run and prints a
# reproduction. .ci/run runs a bounded count of it on every change.
#
# Usage: tools/differential.sh [SEEDS] [COUNT_PER_SEED] [extra run.mjs flags]
#   defaults: seeds 1..8, 2000 transactions each (16 000 in all, a few
#   minutes on two cores).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-1,2,3,4,5,6,7,8}
count=${2:-2000}
shift $(( $# < 2 ? $# : 2 ))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/ferry" .
(cd testdata/differential && npm ci --no-audit --no-fund --loglevel=error)
cd testdata/differential
FERRY_BIN="$work/ferry" node run.mjs --seeds "$seeds" --count "$count" --stats "$@"

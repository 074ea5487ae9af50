#!/usr/bin/env bash
# The HTTP request fuzzer (tests/node/http_fuzz.mjs) against `duet serve` with the demo
# model, for SECONDS. scripts/test runs it on the sanitizer build beside the libFuzzer
# targets, so a memory error a request causes stops the server and fails the run.
# Usage: tests/fuzz/http_fuzz.sh PATH/TO/duet SECONDS [SEED]
set -uo pipefail
DUET=$(realpath "$1")
SECONDS_TO_RUN=${2:-20}
HERE=$(cd "$(dirname "$0")/../cli" && pwd)
source "$HERE/lib/serve_lib.bash"

start_server --max-running 8 --max-queue 8 || exit 1
run_or_dump env DUET_PORT=$PORT node "$HERE/../node/http_fuzz.mjs" --seconds "$SECONDS_TO_RUN" ${3:+--seed "$3"}
kill -0 "$SERVER_PID" 2>/dev/null || { echo "FAIL: the server died"; tail -40 "$SERVER_LOG"; exit 1; }
echo "http_fuzz: ok"

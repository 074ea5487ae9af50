#!/usr/bin/env bash
# duet serve with the official `ollama` client: /api/chat and /api/generate, streaming and
# not, think true/false, load/unload requests, done_reason and durations.
# Usage: serve_ollama.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"

start_server --debug-timestamps --think off || exit 1
run_or_dump env DUET_PORT=$PORT node "$HERE/../node/serve_ollama.mjs"
echo "serve_ollama: ok"

#!/usr/bin/env bash
# duet serve with the official `openai` client: chat and completions, streaming and not,
# thinking (prefill, budget), auto mode, stop strings, usage and logprob counts, latency
# stamps. Usage: serve_openai.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"

start_server --debug-timestamps --think auto || exit 1
run_or_dump env DUET_PORT=$PORT node "$HERE/../node/serve_openai.mjs"
echo "serve_openai: ok"

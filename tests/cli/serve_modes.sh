#!/usr/bin/env bash
# Every request shape the deployment guides use to choose thinking or non-thinking, on the
# Ollama and OpenAI chat routes, checked against the mode each response reports.
# Usage: serve_modes.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"

start_server --think on || exit 1
run_or_dump env DUET_PORT=$PORT node "$HERE/../node/serve_modes.mjs"
echo "serve_modes: ok"

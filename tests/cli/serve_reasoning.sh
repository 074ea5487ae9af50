#!/usr/bin/env bash
# Reasoning that the model opens after leading whitespace ("\n<think>"), end to end: what the
# client is shown as reasoning and what usage counts as reasoning tokens must agree. Runs
# duet_scripted (see serve_tools.sh), whose model writes the reply below when the prompt
# holds its key. Usage: serve_reasoning.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"
find_scripted || exit 1

export DUET_SCRIPT=$(node -e "
  console.log(JSON.stringify({
    NEWLINE_THEN_THINK: '\\n<think>\\nThe user greets me; a short reply will do.\\n</think>\\n\\nHello!' }));")
echo "$DUET_SCRIPT" >"$SERVE_TMP/script.json"

SERVE_BIN=("$SCRIPTED" --script "$SERVE_TMP/script.json")
start_server || exit 1
run_or_dump env DUET_PORT=$PORT node "$HERE/../node/serve_reasoning.mjs"
echo "serve_reasoning: ok"

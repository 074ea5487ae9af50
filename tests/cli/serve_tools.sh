#!/usr/bin/env bash
# Tool calls end to end with the openai and ollama clients. A random model never writes a
# call, so this runs duet_scripted (built with the tests, beside duet): duet serve whose
# model is made to write the replies below when the prompt holds their key; every other part
# of the path is duet's own. Usage: serve_tools.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"
find_scripted || exit 1

export DUET_SCRIPT=$(node -e "
  const call = '<tool_call>\\n' + JSON.stringify({ name: 'get_weather', arguments: { city: 'Paris' } }) + '\\n</tool_call>';
  console.log(JSON.stringify({
    ALPHA_CALL: call,
    BRAVO_REASON_CALL: '<think>\\nThe user wants the weather; I will call the tool.\\n</think>\\n\\n' + call }));")
echo "$DUET_SCRIPT" >"$SERVE_TMP/script.json"

SERVE_BIN=("$SCRIPTED" --script "$SERVE_TMP/script.json")
start_server || exit 1
run_or_dump env DUET_PORT=$PORT node "$HERE/../node/serve_tools.mjs"
echo "serve_tools: ok"

#!/usr/bin/env bash
# Structured output end to end (tests/node/serve_structured.mjs): a schema corpus validated with
# ajv, every request form, the openai, ollama, LangChain and AI SDK clients, GBNF grammars. The
# model is forged here: random weights (it never writes JSON by itself) with the real Qwen3
# vocabulary (multi-byte tokens, so masks are computed over 151,936 real tokens), and a tiny
# shape so that thousands of tokens take seconds. Usage: serve_structured.sh PATH/TO/duet
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"

forge_tiny_qwen3_vocab || exit 1
start_server || exit 1  # the demo model (byte vocabulary), for the Ollama client's checks
BYTES_PORT=$PORT
start_server -m "$MODEL" || exit 1
run_or_dump env DUET_PORT=$PORT DUET_BYTES_PORT=$BYTES_PORT node "$HERE/../node/serve_structured.mjs"
echo "serve_structured: ok"

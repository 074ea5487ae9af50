#!/usr/bin/env bash
# The chat page: its pure modules under node, its routes over HTTP, then the page in Debian's
# chromium (headless, driven by playwright-core) against the real binary. The model is forged with a template whose
# generation prompt opens <think> in thinking mode (tests/cli/data/thinking_template.jinja),
# so thinking replies really stream reasoning that the budget closes; then the page against a
# server with API keys (the key form). Screenshots:
# build/test-artifacts/chat_page/.
# Usage: chat_page.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"
if [ ! -x "${DUET_CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "chat_page: no chromium at ${DUET_CHROMIUM:-/usr/bin/chromium} (scripts/setup installs Debian's)"; exit 1
fi
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
ARTIFACTS="${DUET_TEST_ARTIFACTS:-$(dirname "$DUET")/test-artifacts}/chat_page"

# About 60-100 tokens/s on one thread: a realistic pace, so the test sees replies stream. A
# sanitizer build decodes many times slower, so it gets a smaller model for a similar pace.
SHAPE=(--layers 4 --hidden 1024 --heads 16 --kv-heads 8 --head-dim 64 --ffn 3072)
if grep -qa __asan_init "$DUET"; then
  SHAPE=(--layers 2 --hidden 512 --heads 8 --kv-heads 4 --head-dim 64 --ffn 1536)
fi
"$DUET" forge --vocab bytes "${SHAPE[@]}" --context 4096 --type q8_0 --seed 7 \
  --chat-template "$HERE/data/thinking_template.jinja" --out "$SERVE_TMP/chat.gguf" 2>/dev/null || exit 1

node "$HERE/../node/web_units.mjs" || exit 1

# Paced (a pause after each engine step, before the next token exists): a reply then lasts
# long enough to stream over many frames even when the browser is starved of CPU on a loaded
# machine, so "it streamed" is a property of the page, not of the machine's speed.
start_server -m "$SERVE_TMP/chat.gguf" --name chat-test --threads 1 --debug-step-pause-ms 4 || exit 1
run_or_dump env DUET_PORT=$PORT node "$HERE/../node/chat_page_routes.mjs"
run_or_dump env DUET_PORT=$PORT DUET_ARTIFACTS="$ARTIFACTS" node "$HERE/../node/chat_page.mjs"
grep -q "client went away while decode; cancelled" "$SERVER_LOG" || { echo "no cancel in the server log"; exit 1; }

# A keyed server: the page loads without the key, asks for it, refuses a wrong one, and a
# reply streams with the right one (given here in a file, beside a second key on the line).
printf '# the chat page test\nchat-page-key-1\n' >"$SERVE_TMP/keys.txt"
READY_HEADERS="Authorization: Bearer chat-page-key-1" start_server -m "$SERVE_TMP/chat.gguf" --name chat-test \
  --threads 1 --debug-step-pause-ms 4 --api-key other-key --api-key-file "$SERVE_TMP/keys.txt" || exit 1
run_or_dump env DUET_PORT=$PORT DUET_KEY=chat-page-key-1 DUET_ARTIFACTS="$ARTIFACTS" node "$HERE/../node/chat_page_key.mjs"
echo "chat_page: ok (screenshots in $ARTIFACTS)"

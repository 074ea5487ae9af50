#!/usr/bin/env bash
# Black-box: `duet render` against @huggingface/jinja on seeded random conversations
# (Qwen3, Qwen3-Coder and QwQ templates); the prompts must be identical byte for byte.
#   usage: template_vs_npm.sh PATH/TO/duet GOLDEN_DIR
set -euo pipefail
DUET=$1
GOLDEN=$2
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

node "$HERE/template_vs_npm.mjs" "$DUET" "$GOLDEN" 400 20251129

# The single-request form prints the prompt exactly, with no newline added.
echo '{"messages":[{"role":"user","content":"Hi"}],"enable_thinking":false}' |
  "$DUET" render --template "$GOLDEN/templates/Qwen-QwQ-32B.jinja" > "$TMP/p.txt"
printf '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n</think>' | cmp -s - "$TMP/p.txt" ||
  fail "render output is not the exact prompt"

# Bad input: a clear message on stderr, exit 1, never a crash.
expect_error() {  # expect_error WHAT PATTERN ARGS... (request on stdin)
  local what=$1 pattern=$2
  shift 2
  set +e
  "$DUET" render "$@" > "$TMP/out" 2> "$TMP/err"
  local rc=$?
  set -e
  [[ $rc -eq 1 ]] || fail "$what: exit code $rc, want 1"
  grep -q -- "$pattern" "$TMP/err" || fail "$what: stderr lacks '$pattern': $(cat "$TMP/err")"
}
echo '{' | expect_error "invalid JSON" "not valid JSON" --template "$GOLDEN/templates/Qwen-QwQ-32B.jinja"
echo '{"messages": 5}' | expect_error "messages not a list" "messages must be an array" --template "$GOLDEN/templates/Qwen-QwQ-32B.jinja"
echo '{"messages": [{"role": "system", "content": "x"}]}' |
  expect_error "raise_exception" "System role not supported" --template "$GOLDEN/templates/google-gemma-2-2b-it.jinja"
printf '{%% for x in y %%}\n  {{ x }\n{%% endfor %%}' > "$TMP/bad.jinja"
echo '{"messages": []}' | expect_error "syntax error" "line 2, column" --template "$TMP/bad.jinja"
echo '{"messages": []}' | expect_error "missing file" "cannot read" --template "$TMP/none.jinja"
echo '{"messages": []}' | expect_error "no template" "needs a template"

# A GGUF file: its own template when it has one (forge copies Qwen3's).
"$DUET" forge --preset qwen3-0.6b --layers 1 --hidden 64 --heads 2 --kv-heads 1 --head-dim 32 \
  --ffn 64 --type q8_0 --seed 7 --out "$TMP/q.gguf" 2>/dev/null
REQ='{"messages":[{"role":"user","content":"Hi"}],"chat_template_kwargs":{"enable_thinking":false},"enable_thinking":true}'
echo "$REQ" | "$DUET" render -m "$TMP/q.gguf" > "$TMP/gguf.txt"
printf '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n' | cmp -s - "$TMP/gguf.txt" ||
  fail "GGUF template render (chat_template_kwargs.enable_thinking must win): $(cat "$TMP/gguf.txt")"
echo "template_vs_npm: ok"

#!/usr/bin/env bash
# duet serve as a deployer meets it: --version, a mistyped command, a missing model file,
# flags from DUET_* variables and a TOML file (--print-config says where each came from),
# the context and KV flags (-c, --kv-type and llama-server's -ctk/-ctv/-np, --fit), the
# startup summary, and the limits a request cannot exceed (max_tokens / num_predict capped at
# what the context has left, --request-timeout), each ending as a length stop.
# Usage: serve_config.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"

fail() { echo "FAIL: $*"; exit 1; }
expect_in() {  # TEXT NEEDLE WHAT
  grep -qF -- "$2" <<<"$1" || { echo "$1"; fail "$3: no '$2'"; }
}

# --version: version, commit, build type, kernels, GPU backends.
out=$("$DUET" --version) || fail "--version exited $?"
expect_in "$out" "duet 0.1.0 (commit " "--version"
expect_in "$out" " build)" "--version"
expect_in "$out" "CPU kernels: x86-64 scalar, avx2, avx512" "--version"
expect_in "$out" "this CPU runs: scalar" "--version"
expect_in "$out" "GPU backends: vulkan" "--version"

# A mistyped command gets a suggestion and the usage exit status.
out=$("$DUET" serv 2>&1)
rc=$?
[ "$rc" -eq 2 ] || fail "duet serv exited $rc, not 2"
expect_in "$out" "did you mean 'serve'?" "duet serv"

# A missing model file is named, and nothing listens first.
out=$("$DUET" serve --port 0 -m "$SERVE_TMP/no-such-model.gguf" 2>&1)
rc=$?
[ "$rc" -eq 1 ] || fail "a missing model exited $rc"
expect_in "$out" "$SERVE_TMP/no-such-model.gguf does not exist" "missing model"
grep -q "listening" <<<"$out" && fail "listening was printed before the missing model was found"

# Flags from the command line, then DUET_* variables, then the config file, then defaults.
cat >"$SERVE_TMP/duet.toml" <<'TOML'
# a deployer's file
port = 9300
think = "on"
ctx-size = 2048
kv_type = "q8_0"
fit = true
api-key = "from-the-file"
cors-origin = ["https://a.example", "https://b.example"]
TOML
out=$(DUET_THINK=off DUET_PARALLEL=3 "$DUET" serve --config "$SERVE_TMP/duet.toml" --port 9400 \
  --print-config) || fail "--print-config exited $?"
expect_in "$out" "port = 9400  # command line" "print-config"
expect_in "$out" "think = \"off\"  # environment DUET_THINK" "print-config"
expect_in "$out" "parallel = 3  # environment DUET_PARALLEL" "print-config"
expect_in "$out" "ctx-size = 2048  # config file $SERVE_TMP/duet.toml" "print-config"
expect_in "$out" "kv-type = \"q8_0\"  # config file" "print-config"
expect_in "$out" "fit = true  # config file" "print-config"
expect_in "$out" 'cors-origin = ["https://a.example", "https://b.example"]' "print-config"
expect_in "$out" "max-batch-tokens = 512  # default (DUET_MAX_BATCH_TOKENS)" "print-config"
grep -q "from-the-file" <<<"$out" && fail "--print-config printed an API key"
# The same file through DUET_CONFIG, with a key it does not know: refused, naming it.
printf 'ctx-size = 2048\nctx-sise = 4096\n' >"$SERVE_TMP/typo.toml"
out=$(DUET_CONFIG="$SERVE_TMP/typo.toml" "$DUET" serve --port 0 2>&1)
rc=$?
[ "$rc" -ne 0 ] || fail "a config file with an unknown key was accepted"
expect_in "$out" "'ctx-sise' is not a flag of duet serve" "config typo"
out=$(DUET_PORT=not-a-port "$DUET" serve 2>&1)
[ $? -ne 0 ] || fail "DUET_PORT=not-a-port was accepted"
expect_in "$out" "environment DUET_PORT: --port" "bad environment value"

# The context: the model's by default; beyond it refused, or shrunk with --fit and logged.
"$DUET" serve --port 0 -c 1000000 >"$SERVE_TMP/beyond.log" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "-c 1000000 exited $rc"
expect_in "$(cat "$SERVE_TMP/beyond.log")" "-c 1000000 is beyond the model's context of 4096 tokens" "-c beyond"
out=$("$DUET" serve --port 0 -ctk q8_0 -ctv f16 2>&1)
[ $? -ne 0 ] || fail "-ctk q8_0 -ctv f16 was accepted"
expect_in "$out" "duet stores K and V in one type" "-ctk/-ctv"

start_server -c 1000000 --fit || exit 1
expect_in "$(cat "$SERVER_LOG")" "--fit: context 1000000 -> 4096 tokens" "--fit"
expect_in "$(cat "$SERVER_LOG")" "(-c, --rope-scale)" "--fit"
summary=$(grep "| context " "$SERVER_LOG") || fail "no startup summary"
expect_in "$summary" "model qwen3-demo" "summary"
expect_in "$summary" "| context 4096 | KV f16 " "summary"
expect_in "$summary" "| 64 sequences | " "summary"
expect_in "$summary" " threads | backend cpu" "summary"
expect_in "$summary" "| http://127.0.0.1:$PORT" "summary"
ctx=$(curl -sf "http://127.0.0.1:$PORT/api/show" -d '{"model":"qwen3-demo"}' |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);console.log(j.model_info["qwen3.context_length"])})')
[ "$ctx" = 4096 ] || fail "/api/show says context $ctx"

# llama-server's spellings, a small context, Q8_0 KV: max_tokens far beyond what the context
# has left ends at the context, as a length stop, in both dialects.
start_server -c 96 -ctk q8_0 -ctv q8_0 -np 2 || exit 1
expect_in "$(grep '| context ' "$SERVER_LOG")" "| context 96 | KV q8_0 " "summary with -c 96"
expect_in "$(grep '| context ' "$SERVER_LOG")" "| 2 sequences | " "summary with -np 2"
body=$(curl -sf "http://127.0.0.1:$PORT/v1/chat/completions" -H 'content-type: application/json' \
  -d '{"model":"qwen3-demo","messages":[{"role":"user","content":"hi"}],"max_tokens":100000,"ignore_eos":true,"think":false}') ||
  fail "max_tokens 100000 was refused"
node -e '
  const j = JSON.parse(process.argv[1]);
  const u = j.usage;
  if (j.choices[0].finish_reason !== "length") throw new Error("finish_reason " + j.choices[0].finish_reason);
  if (u.prompt_tokens + u.completion_tokens !== 96) throw new Error("prompt + completion = " + (u.prompt_tokens + u.completion_tokens) + ", not the context 96");
' "$body" || fail "max_tokens was not capped at the context: $body"
body=$(curl -sf "http://127.0.0.1:$PORT/api/generate" \
  -d '{"model":"qwen3-demo","prompt":"hi","stream":false,"think":false,"options":{"num_predict":100000}}') ||
  fail "num_predict 100000 was refused"
node -e '
  const j = JSON.parse(process.argv[1]);
  if (j.prompt_eval_count + j.eval_count > 96) throw new Error("prompt + eval = " + (j.prompt_eval_count + j.eval_count));
  if (j.eval_count === 96 - j.prompt_eval_count && j.done_reason !== "length") throw new Error("done_reason " + j.done_reason);
' "$body" || fail "num_predict was not capped at the context: $body"

# --request-timeout: a request that would outlast it ends early as a length stop.
start_server --request-timeout 0.3 --debug-step-pause-ms 20 || exit 1
body=$(curl -sf "http://127.0.0.1:$PORT/v1/chat/completions" -H 'content-type: application/json' \
  -d '{"model":"qwen3-demo","messages":[{"role":"user","content":"hi"}],"max_tokens":2000,"ignore_eos":true,"think":false}') ||
  fail "the timed request failed"
node -e '
  const j = JSON.parse(process.argv[1]);
  if (j.choices[0].finish_reason !== "length") throw new Error("finish_reason " + j.choices[0].finish_reason);
  if (!(j.usage.completion_tokens > 0 && j.usage.completion_tokens < 2000)) throw new Error("completion_tokens " + j.usage.completion_tokens);
' "$body" || fail "--request-timeout did not end the request: $body"
echo "serve_config: ok"

#!/usr/bin/env bash
# duet serve with API keys: several --api-key flags (one holding KEY,KEY), --api-key-file
# (comments, blank lines, spaces, a Windows line end) and DUET_API_KEY (KEY,KEY) — any key
# opens the API, the chat page's files need none (tests/node/serve_api_keys.mjs); no key ever
# appears in the log. A missing, unreadable or empty key file, or a key that cannot be one,
# stops the server at startup with a message naming the file (and line), never the key.
# Usage: serve_api_keys.sh PATH/TO/duet [GOLDEN_DIR]
set -uo pipefail
DUET=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/serve_lib.bash"
fail() { echo "FAIL: $*"; exit 1; }

KEYS="$SERVE_TMP/keys.txt"
printf '# keys of the team\n\nk-file-one\n   k-file-two   \nk-file-three\r\n\t# retired: k-old\n' >"$KEYS"
ALL=(k-flag-one k-flag-two k-flag-three k-file-one k-file-two k-file-three)

# Flags and file together.
READY_HEADERS="Authorization: Bearer k-file-two" \
  start_server --api-key k-flag-one --api-key "k-flag-two, k-flag-three" --api-key-file "$KEYS" || exit 1
run_or_dump env DUET_PORT=$PORT ACCEPTED_KEYS="$(IFS=,; echo "${ALL[*]}")" node "$HERE/../node/serve_api_keys.mjs"
grep -q "(6 keys accepted)" "$SERVER_LOG" || { cat "$SERVER_LOG"; fail "the log does not count 6 keys"; }
curl -sf -o /dev/null -H "Authorization: Bearer k-old" "http://127.0.0.1:$PORT/v1/models" && fail "a commented-out key was accepted"

# DUET_API_KEY, several keys separated by commas.
READY_HEADERS="Authorization: Bearer k-env-two" DUET_API_KEY="k-env-one,k-env-two" start_server || exit 1
for key in k-env-one k-env-two; do
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" "http://127.0.0.1:$PORT/v1/models")
  [ "$code" = 200 ] || fail "DUET_API_KEY: $key got HTTP $code"
done
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer k-env-one,k-env-two" "http://127.0.0.1:$PORT/v1/models")
[ "$code" = 401 ] || fail "DUET_API_KEY: the whole list as one key got HTTP $code"
grep -q "(2 keys accepted)" "$SERVER_LOG" || { cat "$SERVER_LOG"; fail "DUET_API_KEY: the log does not count 2 keys"; }
ALL+=(k-env-one k-env-two)

# No key in any log.
for log in "$SERVE_TMP"/server-*.log; do
  for key in "${ALL[@]}"; do
    grep -qF -- "$key" "$log" && { cat "$log"; fail "the key $key is in the log $log"; }
  done
done

# Startup errors: exit status 1, a message naming the file (and line), never the key.
expect_startup_error() {
  local what=$1 pattern=$2
  shift 2
  timeout 60 "$DUET" serve --port 0 "$@" >"$SERVE_TMP/err.log" 2>&1
  local rc=$?
  [ "$rc" -eq 1 ] || { cat "$SERVE_TMP/err.log"; fail "$what: exit status $rc, not 1"; }
  grep -qE -- "$pattern" "$SERVE_TMP/err.log" || { cat "$SERVE_TMP/err.log"; fail "$what: no message matching '$pattern'"; }
  grep -q "listening on" "$SERVE_TMP/err.log" && { cat "$SERVE_TMP/err.log"; fail "$what: the server started"; }
  grep -qF "s3cr3t" "$SERVE_TMP/err.log" && { cat "$SERVE_TMP/err.log"; fail "$what: the key is in the message"; }
  echo "ok: $what"
}
expect_startup_error "missing key file" \
  "--api-key-file $SERVE_TMP/nope.txt: cannot open: No such file or directory" --api-key-file "$SERVE_TMP/nope.txt"
expect_startup_error "a directory as the key file" \
  "--api-key-file $SERVE_TMP: not a regular file" --api-key-file "$SERVE_TMP"
: >"$SERVE_TMP/empty.txt"
expect_startup_error "empty key file" \
  "--api-key-file $SERVE_TMP/empty.txt: the file holds no key" --api-key-file "$SERVE_TMP/empty.txt"
printf '# nothing but comments\n\n   \n' >"$SERVE_TMP/comments.txt"
expect_startup_error "key file of comments only" \
  "--api-key-file $SERVE_TMP/comments.txt: the file holds no key" --api-key k-flag --api-key-file "$SERVE_TMP/comments.txt"
printf 'good-key\ns3cr3t with a space\n' >"$SERVE_TMP/spaced.txt"
expect_startup_error "a key with a space in the file" \
  "--api-key-file $SERVE_TMP/spaced.txt, line 2: a key must be printable ASCII without spaces" \
  --api-key-file "$SERVE_TMP/spaced.txt"
expect_startup_error "a key with a space on the command line" \
  "--api-key \(or DUET_API_KEY\): a key must be printable ASCII without spaces" --api-key "ok,s3cr3t key"
if [ "$(id -u)" -ne 0 ]; then  # root reads a file whatever its mode
  printf 'k\n' >"$SERVE_TMP/locked.txt"
  chmod 000 "$SERVE_TMP/locked.txt"
  expect_startup_error "an unreadable key file" \
    "--api-key-file $SERVE_TMP/locked.txt: cannot open: Permission denied" --api-key-file "$SERVE_TMP/locked.txt"
fi
echo "serve_api_keys: ok"

# Helpers of the black-box CLI tests: source it after `set -euo pipefail`.

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_error WANT COMMAND ARGS...: the command fails with exit code 1 or 2 (never a signal)
# and says something containing WANT.
expect_error() {
  local want=$1 out rc
  shift
  set +e
  out=$("$@" 2>&1)
  rc=$?
  set -e
  [[ $rc -eq 1 || $rc -eq 2 ]] || fail "'$*' exited $rc (want 1 or 2): $out"
  [[ "$out" == *"$want"* ]] || fail "'$*' said '$out', want it to mention '$want'"
}

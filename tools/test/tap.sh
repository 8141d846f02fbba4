# Sourced by the shell test scripts (test-install, test-zts, test-image,
# test-zts-apache): TAP-like lines and their counts. `finish` prints the tally and
# fails when anything did.
passed=0 failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
# not_ok NAME [DETAIL]: the end of DETAIL, indented.
not_ok() { echo "not ok - $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | tail -n 25 | sed 's/^/    /'; failed=$((failed + 1)); }
# check NAME COMMAND...: passes when COMMAND exits 0.
check() { local name=$1; shift; local out; if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$out"; fi; }
# expect_output NAME PATTERN COMMAND...: passes when COMMAND's output (stdout and stderr) matches PATTERN.
expect_output() {
    local name=$1 pattern=$2; shift 2
    local out; out=$("$@" 2>&1)
    if grep -qE -- "$pattern" <<<"$out"; then ok "$name"; else not_ok "$name" "$out"; fi
}
# expect_no_output NAME PATTERN COMMAND...: passes when nothing COMMAND prints matches PATTERN.
expect_no_output() {
    local name=$1 pattern=$2; shift 2
    local out; out=$("$@" 2>&1)
    if grep -qE -- "$pattern" <<<"$out"; then not_ok "$name" "$out"; else ok "$name"; fi
}
# expect_fail_output NAME PATTERN COMMAND...: passes when COMMAND fails saying PATTERN.
expect_fail_output() {
    local name=$1 pattern=$2; shift 2
    local out rc; out=$("$@" 2>&1); rc=$?
    if [ "$rc" -ne 0 ] && grep -qE -- "$pattern" <<<"$out"; then ok "$name"; else not_ok "$name (exit $rc)" "$out"; fi
}
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

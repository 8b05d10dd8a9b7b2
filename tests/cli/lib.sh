# lib.sh: helpers of the CLI test scripts (sourced, bash). Sets bin and cases from the arguments
# (JOBGUARD_BINARY CASES_DIR), a scratch $tmp removed at exit, and the pass/fail counters; each
# check runs a command with stdout in $tmp/out and stderr in $tmp/err.
set -u
bin=$1
cases=$2
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
expect_rc() { # name want_rc cmd...
    local name=$1 want=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" = "$want" ]; then ok "$name (rc $rc)"; else bad "$name: rc $rc, want $want; stderr: $(head -c 300 "$tmp/err")"; fi
}
expect_grep() { # name file pattern
    if grep -qF -- "$3" "$2"; then ok "$1"; else bad "$1: '$3' not in $(head -c 400 "$2")"; fi
}
expect_eq() { # name got want
    if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi
}
# finish: the summary line; the exit status of the script
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]
}

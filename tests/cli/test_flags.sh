#!/usr/bin/env bash
# The one flag parser of every command (src/cli/flags.c): --flag=value means --flag value, a short
# form (-o) works as before, and an unknown flag, a missing value or a value given to a switch
# exits 2 naming the flag. Usage: test_flags.sh JOBGUARD_BINARY TESTS_DIR (tests/)
source "$(dirname "$0")/lib.sh"
in=$cases/offline/cases/_in
rin=$cases/replay/cases/_in

# same_as NAME ARGS_SPACED -- ARGS_EQUALS: both spellings give the same stdout, stderr and status
same_as() {
    local name=$1 a=() b=()
    shift
    while [ "$1" != "--" ]; do a+=("$1"); shift; done
    shift
    b=("$@")
    "$bin" "${a[@]}" >"$tmp/a.out" 2>"$tmp/a.err"
    local rca=$?
    "$bin" "${b[@]}" >"$tmp/b.out" 2>"$tmp/b.err"
    local rcb=$?
    if [ "$rca" = "$rcb" ] && cmp -s "$tmp/a.out" "$tmp/b.out" && cmp -s "$tmp/a.err" "$tmp/b.err" && [ -s "$tmp/a.out" ]; then
        ok "$name (rc $rca)"
    else
        bad "$name: rc $rca vs $rcb; stderr: $(head -c 300 "$tmp/b.err")"
    fi
}

same_as "check --policy-file=FILE" check --policy-file "$in/policy.json" --new "$in/job-ok.json" -- \
    check --policy-file="$in/policy.json" --new="$in/job-ok.json"
same_as "check --mode=ID=MODE (the first = splits)" check --mode '*=warn' --new "$in/bad-format.json" -- \
    check --mode='*=warn' --new="$in/bad-format.json"
same_as "check --parity=, --namespace=, --user=, --group=" check --parity 1.37 --namespace team-a --user u --group g --new "$in/job-ok.json" -- \
    check --parity=1.37 --namespace=team-a --user=u --group=g --new="$in/job-ok.json"
same_as "scan --output=json" scan --output json "$in/cluster.json" -- scan --output=json "$in/cluster.json"
same_as "scan -o json is --output=json" scan -o json "$in/cluster.json" -- scan --output=json "$in/cluster.json"
same_as "scan --format of reports: --output=policyreport --fail-on=warn" scan -o policyreport --fail-on warn --policy-file "$in/policy.json" "$in/cluster.json" -- \
    scan --output=policyreport --fail-on=warn --policy-file="$in/policy.json" "$in/cluster.json"
same_as "replay --output=json --policy-file=FILE" replay -o json --policy-file "$rin/policy.yaml" "$rin/multikueue.log" -- \
    replay --output=json --policy-file="$rin/policy.yaml" "$rin/multikueue.log"
same_as "vap --output=json" vap --output json -- vap --output=json
same_as "vap --kubernetes-version=, --name-prefix=, --exclude-namespace=" vap -o yaml --kubernetes-version 1.31 --name-prefix jg --exclude-namespace a -- \
    vap -o=yaml --kubernetes-version=1.31 --name-prefix=jg --exclude-namespace=a
same_as "policy check --values=FILE" policy check --values "$in/values.yaml" -- policy check --values="$in/values.yaml"
same_as "convert -- ends the options" convert "$in/job-ok.json" -- convert -- "$in/job-ok.json"

# errors: exit 2, the command and the flag named, nothing on stdout
for cmd in check scan replay vap convert rules "policy check" "policy show" serve; do
    # shellcheck disable=SC2086 # "policy check" is two words
    expect_rc "$cmd: unknown flag exits 2" 2 "$bin" $cmd --no-such-flag
    expect_grep "$cmd: unknown flag named" "$tmp/err" "jobguard $cmd: unknown option --no-such-flag (try --help)"
    expect_eq "$cmd: nothing on stdout" "$(wc -c <"$tmp/out")" 0
    # shellcheck disable=SC2086
    expect_rc "$cmd: unknown flag=value exits 2" 2 "$bin" $cmd --no-such-flag=1
    expect_grep "$cmd: unknown flag=value named" "$tmp/err" "unknown option --no-such-flag=1"
done
for c in "check --policy-file" "scan --values" "replay -o" "vap --output" "policy check --values" "serve --threads"; do
    # shellcheck disable=SC2086
    expect_rc "$c (no value) exits 2" 2 "$bin" $c
    expect_grep "$c: says it needs a value" "$tmp/err" "${c##* } needs a value"
done
expect_rc "check --explain=yes: a switch takes no value" 2 "$bin" check --explain=yes "$in/review.json"
expect_grep "  says so" "$tmp/err" "jobguard check: --explain takes no value"
expect_rc "vap --markdown=1 exits 2" 2 "$bin" vap --explain --markdown=1
expect_rc "scan -x: unknown short flag" 2 "$bin" scan -x "$in/job-ok.json"
expect_grep "  named" "$tmp/err" "jobguard scan: unknown option -x"
expect_rc "vap takes no operand" 2 "$bin" vap extra
expect_grep "  named" "$tmp/err" "jobguard vap: unexpected argument extra"
expect_rc "policy check: two files" 2 "$bin" policy check "$in/policy.json" "$in/policy.json"
expect_grep "  says one" "$tmp/err" "jobguard policy check: give one FILE or --values VALUES"
expect_rc "scan --output=yaml: the value checked as with a space" 2 "$bin" scan --output=yaml "$in/job-ok.json"
expect_grep "  named as written" "$tmp/err" "jobguard scan: --output: unsupported yaml"

# serve: the same parser, then its own checks (before any file is read)
expect_rc "serve --port=N --ops-port=N: both read, then refused" 2 "$bin" serve --tls-cert-file=c.pem --tls-private-key-file k.pem --port=9443 --ops-port 9443
expect_grep "  names both" "$tmp/err" "jobguard serve: --port and --ops-port must differ (both 9443)"
expect_rc "serve --memory-budget=1Mi: a value with '=' read whole" 2 "$bin" serve --tls-cert-file=c.pem --tls-private-key-file=k.pem --memory-budget=1Mi --connection-memory-limit=8KiB --max-header-bytes=8KiB
expect_grep "  checked as with a space" "$tmp/err" "--connection-memory-limit (8192) must be at least twice --max-header-bytes (8192)"
expect_rc "serve takes no operand" 2 "$bin" serve extra
expect_grep "  named" "$tmp/err" "jobguard serve: unexpected argument extra (try --help)"
expect_rc "serve --help" 0 "$bin" serve --help
expect_grep "serve --help: default and variable from the table" "$tmp/out" "      default: 9443; env: JOBGUARD_PORT"

# the usage text is printed from the table: every flag of the table appears in --help
expect_rc "check --help" 0 "$bin" check --help
for f in --explain --parity --disable-rule --policy-file --values --mode --new --old --subresource --kind --resource --namespace --user --group --print-review --help; do
    expect_grep "check --help lists $f" "$tmp/out" "  $f"
done
expect_rc "vap --help" 0 "$bin" vap --help
expect_grep "vap --help: a long flag's help on the next line" "$tmp/out" "  --namespace-selector-expression JSON"
expect_grep "vap --help: short form" "$tmp/out" "  -o, --output yaml|json    yaml (default)"

finish

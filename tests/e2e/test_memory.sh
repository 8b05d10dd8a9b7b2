#!/usr/bin/env bash
# The memory budget (docs/memory.md) under attack, in a memory cgroup at the chart's limit: the
# server reads its limit from the cgroup (v1 here; the v2 reader is unit-tested on files in
# the budget test's cgroup cases), derives its budget, and survives 20 connections each sending
# (a) 7 MiB less one byte, (b) the largest body it accepts, all but the last byte, and holding;
# and (c) the worst body it accepts posted 8 times at once with --threads 8 (an 8-CPU node's
# default) - while a valid review is still answered. Without the budget the kernel kills the
# server (exit 137, oom_kill 1). Needs root and the cgroup v1
# memory controller (skipped otherwise, exit 77); a sanitizer build is skipped too, as its
# shadow memory and quarantine do not fit any budget made for the release build.
# Usage: test_memory.sh JOBGUARD_BINARY
source "$(dirname "$0")/lib.sh"
jg_init "$@"

in_memory_cgroup

CERTS=$TMP/certs
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }
REVIEW=$CASES_DIR/e03-create-acme-foo/review.json
start_server memory --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--threads 8 --shutdown-delay 0 || { fail "server start"; jg_finish; }

start_line=$(grep -m1 '"starting jobguard"' "$SERVER_LOG")
expect_eq "the limit is read from the cgroup" "$LIMIT" "$(jq -r .memory_limit <<<"$start_line")"
expect_eq "... from its v1 file" "$CG/memory.limit_in_bytes" "$(jq -r .memory_limit_file <<<"$start_line")"
BUDGET=$(jq -r .memory_budget <<<"$start_line")
MAX_BODY=$(jq -r .max_body_bytes <<<"$start_line")
echo "# figures: budget $BUDGET bytes, largest accepted body $MAX_BODY bytes"
expect_eq "budget = limit - 48 MiB - 1024 x 32 KiB" $((LIMIT - 48 * 1048576 - 1024 * 32768)) "$BUDGET"
metric_budget=$(metric jobguard_memory_budget_bytes)
expect_eq "/metrics shows the budget" "$BUDGET" "$metric_budget"

alive() { kill -0 "$SERVER_PID" 2>/dev/null; }
valid_review_answered() { # DESCRIPTION
	local code
	code=$(post "$REVIEW")
	expect_eq "$1: a valid review is decided (HTTP 200)" 200 "$code"
	expect_eq "$1: ... with its verdict" "true" "$(jq -r .response.allowed "$TMP/resp.json" 2>/dev/null)"
}

# hold_attack NAME LENGTH: 20 connections each announce LENGTH bytes, send all but the last byte
# and hold for 3 s while a valid review is posted; then each sends its last byte (if it was not
# answered yet) and its answer is collected in $TMP/NAME.out.
hold_attack() {
	local name=$1 length=$2 attack i held
	python3 "$E2E_DIR/memattack.py" hold "$PORT" "$CERTS/ca.crt" 20 "$length" 3 \
		>"$TMP/$name.out" 2>"$TMP/$name.err" &
	attack=$!
	for i in $(seq 1 600); do grep -q holding "$TMP/$name.out" 2>/dev/null && break; sleep 0.05; done
	valid_review_answered "20 connections holding $length-byte bodies"
	held=$(metric jobguard_memory_held_bytes)
	echo "# figure: budget held while they hold: $held of $BUDGET bytes"
	if [[ $held -le $BUDGET ]]; then pass "held bytes within the budget"; else fail "held $held > budget $BUDGET"; fi
	wait "$attack"
	if alive; then pass "the server survived 20 x $length bytes held"; else fail "the server died (oom_kill $(oom_kills))"; fi
	expect_eq "no OOM kill in the cgroup" 0 "$(oom_kills)"
	valid_review_answered "after 20 x $length bytes held"
}
answers() { grep -cE "^($2)\$" "$TMP/$1.out"; }

# (a) 7 MiB - 1 byte each: over the largest body the budget allows, refused before the body.
hold_attack hold7 $((7 * 1048576 - 1))
expect_eq "20 x 7 MiB: every connection refused with 413" 20 "$(answers hold7 413)"

# (b) the largest body the server accepts: the budget fills, the rest are shed (503, their bodies
# dropped as they arrive), and each one gets an answer at the end.
hold_attack holdmax "$MAX_BODY"
taken=$(answers holdmax '200') shed=$(answers holdmax 503/1)
echo "# figure: of 20 largest bodies held at once, $taken were taken and $shed shed (503)"
if [[ $taken -ge 1 && $shed -ge 1 ]]; then pass "some taken, the rest shed"; else fail "taken $taken, shed $shed: $(tr '\n' ' ' <"$TMP/holdmax.out")"; fi
expect_eq "every connection answered (a 503 with Retry-After: 1)" 20 $((taken + shed))
line=$(grep '"code":503' "$SERVER_LOG" | tail -1)
expect_match "a shed request is logged at warn with the budget" '"level":"warn".*"reason":"jobguard is at its memory budget \([0-9]+ of '"$BUDGET"' bytes held by requests in flight; this one needs [0-9]+\), retry"' "$line"

# (c) the worst body the server accepts (uncounted-max filled to its largest body), 8 at once.
WORST=$TMP/worst.json
python3 "$E2E_DIR/worst.py" uncounted-max "$WORST" "$MAX_BODY" || fail "generate the worst body"
python3 "$E2E_DIR/memattack.py" burst "$PORT" "$CERTS/ca.crt" 8 "$WORST" >"$TMP/burst.out" &
burst=$!
valid_review_answered "8 worst bodies decided at once"
wait "$burst"
decided=$(grep -c '^200$' "$TMP/burst.out")
shed=$(grep -c '^503/1$' "$TMP/burst.out")
echo "# figure: 8 worst bodies ($(stat -c %s "$WORST") bytes) at once: $decided decided, $shed answered 503"
if [[ $decided -ge 1 ]]; then pass "worst bodies are decided"; else fail "no worst body decided: $(tr '\n' ' ' <"$TMP/burst.out")"; fi
expect_eq "every worst body decided or shed" 8 $((decided + shed))
if alive; then pass "the server survived the worst bodies at once"; else fail "the server died (oom_kill $(oom_kills))"; fi
expect_eq "no OOM kill in the cgroup" 0 "$(oom_kills)"
shed_total=$(metric jobguard_requests_shed_total)
if [[ $shed_total -ge 1 ]]; then pass "jobguard_requests_shed_total counts the shed requests ($shed_total)"; else fail "jobguard_requests_shed_total is $shed_total"; fi
expect_eq "nothing held once the requests are done" 0 "$(metric jobguard_memory_held_bytes)"
echo "# figure: cgroup peak usage $(cat "$CG/memory.max_usage_in_bytes") of $LIMIT bytes"
valid_review_answered "after the worst bodies"
stop_server

# A limit that leaves less than the minimum budget stops the server at startup, saying why.
echo $((64 * 1048576)) >"$CG/memory.limit_in_bytes"
out=$(timeout 20 "$JG" serve --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--bind-address 127.0.0.1 --port "$(free_port)" --ops-port "$(free_port)" 2>&1)
rc=$?
expect_eq "64Mi limit: exit 2" 2 "$rc"
expect_match "64Mi limit: says what it needs" "the memory limit, 67108864 bytes \\($CG/memory.limit_in_bytes\\), leaves less than 4194304 bytes for requests: it needs at least 88080384" "$out"
jg_finish

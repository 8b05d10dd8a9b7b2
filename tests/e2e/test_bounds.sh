#!/usr/bin/env bash
# Output bounds end to end (docs/limits.md): the worst shapes within the 7 MiB body limit
# (worst.py) posted over HTTPS get a well-formed, bounded denial (first causes, then a cause and
# a message end saying how many errors were left out), each denial is logged on one bounded JSON
# line, and the server keeps serving. The server's peak RSS is printed as a figure, not asserted
# (sanitizer builds multiply it).
# Usage: test_bounds.sh JOBGUARD_BINARY
source "$(dirname "$0")/lib.sh"
jg_init "$@"
command -v python3 >/dev/null || { fail "python3 is needed to generate the shapes"; jg_finish; }

CERTS=$TMP/certs
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }
REVIEW=$CASES_DIR/e01-create-managedby-absent/review.json
MAX_RESPONSE=$((3 * 1024 * 1024)) # far above what these shapes produce, far below the unbounded
MAX_LOG_LINE=$((32 * 1024))       # a few 4 KiB values, JSON-escaped

start_server bounds --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--shutdown-delay 0 || { fail "server start"; jg_finish; }
hwm() { awk '/^VmHWM/ {print $2}' "/proc/$SERVER_PID/status"; }
echo "# figure: server VmHWM after start: $(hwm) KiB"

# check_denial SHAPE CAUSES FIRST_FIELD FIRST_MESSAGE NOTE: posts the shape; NOTE is the expected
# last cause's message (empty when nothing is omitted).
check_denial() {
	local shape=$1 causes=$2 field=$3 msg=$4 note=$5 f=$TMP/$1.json code size
	python3 "$E2E_DIR/worst.py" "$shape" "$f" || { fail "$shape: generate"; return; }
	code=$(post "$f")
	expect_eq "$shape ($(stat -c %s "$f") bytes): HTTP 200" 200 "$code"
	size=$(stat -c %s "$TMP/resp.json")
	if jq -e . "$TMP/resp.json" >/dev/null 2>&1; then pass "$shape: response is JSON"; else fail "$shape: response is not JSON"; fi
	if [[ $size -le $MAX_RESPONSE ]]; then pass "$shape: response $size bytes <= $MAX_RESPONSE"
	else fail "$shape: response $size bytes > $MAX_RESPONSE"; fi
	expect_eq "$shape: denied 422 Invalid" "false 422 Invalid" \
		"$(jq -r '.response | "\(.allowed) \(.status.code) \(.status.reason)"' "$TMP/resp.json")"
	expect_eq "$shape: $causes causes" "$causes" "$(jq '.response.status.details.causes | length' "$TMP/resp.json")"
	local want="$field|$msg" # a prefix of the first cause
	expect_eq "$shape: first cause" "$want" \
		"$(jq -r '.response.status.details.causes[0] | "\(.field)|\(.message)"' "$TMP/resp.json" | head -c ${#want})"
	if [[ -n $note ]]; then
		expect_eq "$shape: last cause says what was left out" "TooManyErrors|$note|null" \
			"$(jq -r '.response.status.details.causes[-1] | "\(.reason)|\(.message)|\(.field)"' "$TMP/resp.json")"
		expect_eq "$shape: message ends with the note" "] $note" \
			"$(jq -r '.response.status.message' "$TMP/resp.json" | tail -c $((${#note} + 3)) | head -c $((${#note} + 2)))"
	fi
	echo "# figure: $shape: response $size bytes, server VmHWM $(hwm) KiB"
}

uid_field=status.uncountedTerminatedPods.succeeded
check_denial uncounted-400k 2001 "${uid_field}[0]" 'Invalid value: "": must not be empty' \
	"[truncated 398001 errors]"
n=$(jq '.request.object.status.uncountedTerminatedPods.succeeded | length' "$TMP/uncounted-400k.json")
expect_eq "uncounted-400k holds 400000 UIDs" 400000 "$n"
python3 "$E2E_DIR/worst.py" uncounted-max "$TMP/max.json"
n=$(jq '.request.object.status.uncountedTerminatedPods.succeeded | length' "$TMP/max.json")
check_denial uncounted-max 2001 "${uid_field}[0]" 'Invalid value: "": must not be empty' \
	"[truncated $((n + 1 - 2000)) errors]"
lt=$(printf '<%.0s' $(seq 1 130)) # the start of the 64 KiB kept of the value
check_denial managedby-lt 5 spec.managedBy "Invalid value: \"$lt" ""
expect_eq "managedby-lt: immutability error quotes 64 KiB JSON-escaped, then the marker" \
	'" [truncated 6934464 bytes]: field is immutable' \
	"$(jq -r '.response.status.details.causes[4].message' "$TMP/resp.json" | tail -c 48)"
# 58 errors of 18 KB fill the 1 MiB of error text; the other 942 duplicates and the finished-Job
# error are left out
check_denial dup-long-uids 59 "${uid_field}[1]" "Duplicate value: \"0000\\u003c\\u003c" "[truncated 943 errors]"

# One log line per denial, each bounded and JSON.
lines=$(grep -c '"msg":"admission denied"' "$SERVER_LOG")
expect_eq "4 denial log lines" 4 "$lines"
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$SERVER_LOG")
if [[ $longest -le $MAX_LOG_LINE ]]; then pass "longest log line $longest bytes <= $MAX_LOG_LINE"
else fail "longest log line $longest bytes > $MAX_LOG_LINE"; fi
if jq -e . "$SERVER_LOG" >/dev/null 2>&1; then pass "every log line is JSON"; else fail "non-JSON log line"; fi
expect_match "denial log line notes the cut message" 'bytes\]"' \
	"$(grep '"msg":"admission denied"' "$SERVER_LOG" | head -1)"

expect_eq "still serving" 200 "$(post "$REVIEW")"
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"
jg_finish

#!/usr/bin/env bash
# Graceful shutdown under load. SIGTERM while h2load and a kube-apiserver-like keep-alive client
# run: /readyz turns 503 at once; requests (also on new connections) are served for the whole
# --shutdown-delay; then new connections are refused, the keep-alive client's next request is
# answered with Connection: close, a slow upload in flight finishes with 200 during the drain,
# and the process exits 0 before --drain-timeout. Zero failed requests. Then the certificate
# watcher is stranded on a filesystem that never answers: shutdown still ends in time.
source "$(dirname "$0")/lib.sh"
jg_init "$@"
command -v h2load >/dev/null || { fail "h2load not installed (nghttp2-client)"; jg_finish; }
build_apiclient || { fail "Go client build"; jg_finish; }

CERTS=$TMP/certs
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }
DELAY=3 DRAIN=8
start_server sd --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--shutdown-delay $DELAY --drain-timeout $DRAIN || { fail "server start"; jg_finish; }
BODY=$CASES_DIR/e01-create-managedby-absent/review.json
SLOW=$TMP/slow.json
{ cat "$BODY"; head -c 12000 /dev/zero | tr '\0' ' '; } >"$SLOW" # valid JSON, ~3 s at 4 KB/s

now_ms() { echo $(($(date +%s%N) / 1000000)); }

"$TMP/apiclient" -addr "127.0.0.1:$PORT" -server-name "$SVC_DNS" -cacert "$CERTS/ca.crt" \
	-repeat 60 -interval 150ms -stop-on-close "$BODY" >"$TMP/go.out" 2>&1 &
GO=$!
PIDS+=("$GO")
h2load --h1 -c 8 -t 1 -D 2 -d "$BODY" -H 'Content-Type: application/json' \
	"https://127.0.0.1:$PORT/validate?timeout=10s" >"$TMP/h2load.out" 2>&1 &
LOAD=$!
PIDS+=("$LOAD")
sleep 0.7
kill -TERM "$SERVER_PID"
t_term=$(now_ms)
ready=""
for i in $(seq 1 20); do
	ready=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 1 "$OPS_URL/readyz")
	[[ $ready == 503 ]] && break
	sleep 0.05
done
expect_eq "/readyz is 503 right after SIGTERM ($(($(now_ms) - t_term)) ms)" 503 "$ready"
expect_eq "/healthz still 200 while draining" 200 "$(curl -sS -o /dev/null -w '%{http_code}' "$OPS_URL/healthz")"
sleep 1
expect_eq "new connection during --shutdown-delay is served" 200 "$(post "$BODY")"
# a slow upload that starts before the listener closes and ends during the drain
sleep $(awk -v d=$DELAY -v t="$(( $(now_ms) - t_term ))" 'BEGIN { s = d - 0.6 - t / 1000; printf "%.2f\n", (s > 0 ? s : 0) }')
jcurl --limit-rate 4K -D "$TMP/slow.hdr" -o "$TMP/slow.body" -w '%{http_code}' -H 'Content-Type: application/json' \
	--data-binary @"$SLOW" "$URL/validate" >"$TMP/slow.code" 2>"$TMP/slow.err" &
SLOWPID=$!
PIDS+=("$SLOWPID")
# after the delay: listener closed
while [[ $(($(now_ms) - t_term)) -lt $((DELAY * 1000 + 400)) ]]; do sleep 0.1; done
jcurl --max-time 3 -o /dev/null "$URL/validate" 2>/dev/null
expect_eq "after --shutdown-delay new connections are refused (curl exit 7)" 7 "$?"

wait_exit "$SERVER_PID" $((DELAY + DRAIN + 10))
t_exit=$(($(now_ms) - t_term))
expect_eq "exit status 0" 0 "$EXIT_RC"
if [[ $t_exit -ge $((DELAY * 1000)) && $t_exit -lt $(((DELAY + DRAIN) * 1000)) ]]; then
	pass "exited ${t_exit} ms after SIGTERM: after the delay, before the drain timeout"
else fail "exited ${t_exit} ms after SIGTERM (delay ${DELAY}s, drain ${DRAIN}s)"; fi
wait "$SLOWPID" 2>/dev/null
expect_eq "slow upload in flight at quiesce: 200 allowed" "200 true" "$(cat "$TMP/slow.code") $(jq -r .response.allowed "$TMP/slow.body" 2>/dev/null)"
expect_match "  answered with Connection: close" '[Cc]onnection: close' "$(tr -d '\r' <"$TMP/slow.hdr")"

wait_exit "$LOAD" 20
expect_match "h2load during the delay: 0 failed, 0 errored, 0 timeout" ' 0 failed, 0 errored, 0 timeout' "$(grep '^requests:' "$TMP/h2load.out")"
done_=$(awk '/^requests:/ { print $8 }' "$TMP/h2load.out")
expect_match "h2load: only 2xx ($done_ requests)" " ${done_} 2xx, 0 3xx, 0 4xx, 0 5xx" "$(grep '^status codes:' "$TMP/h2load.out")"
wait_exit "$GO" 20
expect_eq "keep-alive Go client exit status" 0 "$EXIT_RC"
n_go=$(grep -c '^file=' "$TMP/go.out")
expect_eq "keep-alive Go client: no failed request" 0 "$(grep -vc '^file=.*status=200 .*allowed=true' "$TMP/go.out")"
last=$(tail -1 "$TMP/go.out")
expect_match "  its last response (request $n_go) carried Connection: close" 'close=true' "$last"
expect_match "  on the kept-alive connection" 'reused=true' "$last"
if [[ $n_go -ge 10 ]]; then pass "  $n_go requests over one connection across the shutdown"; else fail "only $n_go requests"; fi
grep -q '"msg":"stopped accepting, draining"' "$SERVER_LOG" && grep -q '"msg":"drained"' "$SERVER_LOG" &&
	pass "shutdown steps logged" || fail "shutdown log lines missing"

# The certificate watcher stuck in the kernel: the Secret volume's ..data is swapped to a FUSE
# filesystem that never answers (stallfs), so the watcher's stat(2) of tls.crt blocks for good,
# as on a stalled network filesystem. Serving goes on, and SIGTERM still ends the process within
# --shutdown-delay + --drain-timeout, logging what the watcher was stuck in.
STALLFS=${JG_STALLFS:-}
if [[ $(id -u) != 0 || ! -c /dev/fuse || ! -x $STALLFS ]]; then
	fail "stalled filesystem: needs root, /dev/fuse and the stallfs helper (JG_STALLFS=$STALLFS)"
	jg_finish
fi
SEC=$TMP/secret MNT=$TMP/stall
secret_install "$SEC" "$CERTS"
mkdir -p "$MNT"
"$STALLFS" "$MNT" "$TMP/stall.ready" 2>"$TMP/stallfs.err" &
STALL=$!
PIDS+=("$STALL")
# unstall: kill stallfs (which frees every blocked caller) and unmount, before the scratch
# directory is removed
unstall() {
	kill "$STALL" 2>/dev/null
	wait "$STALL" 2>/dev/null
	umount -l "$MNT" 2>/dev/null
}
for i in $(seq 1 50); do [[ -e $TMP/stall.ready ]] && break; sleep 0.1; done
if [[ ! -e $TMP/stall.ready ]]; then
	fail "stallfs did not mount: $(cat "$TMP/stallfs.err")"
	unstall
	jg_finish
fi
DELAY=1 DRAIN=2
start_server stuck --tls-cert-file "$SEC/tls.crt" --tls-private-key-file "$SEC/tls.key" \
	--cert-poll-interval 1 --shutdown-delay $DELAY --drain-timeout $DRAIN || { fail "server start"; unstall; jg_finish; }
ln -sfn "$MNT" "$SEC/..data_tmp"
mv -T "$SEC/..data_tmp" "$SEC/..data"
sleep 2.5 # at least one poll: the watcher is now inside stat(2) on the stalled mount
wchans=$(cat /proc/"$SERVER_PID"/task/*/wchan 2>/dev/null | tr '\0' ' ')
expect_match "a server thread waits on the stalled filesystem" 'fuse|request_wait_answer' "$wchans"
expect_eq "requests are served while the watcher is stuck" 200 "$(post "$BODY")"
expect_eq "  and /readyz is 200" 200 "$(curl -sS -o /dev/null -w '%{http_code}' "$OPS_URL/readyz")"
t0=$(now_ms)
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" $((DELAY + DRAIN + 10))
ms=$(($(now_ms) - t0))
expect_eq "SIGTERM with the watcher stuck: exit 0" 0 "$EXIT_RC"
if [[ $EXIT_RC != timeout && $ms -le $(((DELAY + DRAIN) * 1000 + 1500)) ]]; then
	pass "  exited ${ms} ms after SIGTERM (--shutdown-delay $DELAY + --drain-timeout $DRAIN)"
else fail "  exit took ${ms} ms ($EXIT_RC)"; fi
busy=$(grep '"msg":"certificate watcher still busy' "$SERVER_LOG" | jq -r '"\(.doing) \(.path)"' 2>/dev/null)
expect_eq "  logged what the watcher was stuck in" "looking for changes $SEC/tls.crt" "$busy"
unstall
jg_finish

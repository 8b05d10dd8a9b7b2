#!/usr/bin/env bash
# Connection attacks any pod could run (docs/memory.md, "What a client can hold"), each against the
# server in a memory cgroup at the chart's limit with the chart's flags, while valid reviews and
# kubelet-like probes keep coming:
#   1. TLS records of a ClientHello announcing 16 MiB: 14 connections sending 16 MiB each, and
#      1,000 connections sending 120 KB each (GnuTLS buffers a handshake message whole);
#   2. 8 connections that send the headers of a 762,600-byte review (an eighth of the budget each,
#      before the body was charged as it arrives) and no body; then with 1,000 body bytes each;
#      then 40 connections holding 1.5 MiB of a largest-size body each (the budget's client share);
#   3. 1,024 idle TCP connections from one address (no TLS byte at all), and 1,000 connections from
#      8 addresses each holding a request's headers;
#   4. 16 idle connections from each of 17 addresses on the ops port.
# During each: the replica is never killed (no OOM kill in the cgroup), at least 9 of 10 valid
# reviews are answered 200 within 1 s, every /healthz probe with a 1 s timeout succeeds, and
# jobguard_memory_held_bytes is what the attacker makes the server hold. Before these fixes, 1 OOM-
# killed the server, 2 answered every review 503, 3 timed reviews out and 4 timed probes out.
# Needs root and the cgroup v1 memory controller (skipped otherwise, exit 77), and a release build.
# Usage: test_attacks.sh JOBGUARD_BINARY
source "$(dirname "$0")/lib.sh"
jg_init "$@"
in_memory_cgroup
ulimit -n 8192

CERTS=$TMP/certs
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }
REVIEW=$CASES_DIR/e03-create-acme-foo/review.json
ATTACK_S=14

# The chart's flags (templates/deployment.yaml with values.yaml), but for the ports (start_server
# picks free ones) and --shutdown-delay 0, which only makes the test's own stop faster.
start_jobguard() {
	start_server attacks --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
		--shutdown-delay 0 --drain-timeout 10 --tls-min-version 1.2 --service-name "$SVC_DNS" \
		--log-format json --log-level info || { fail "server start"; jg_finish; }
}
start_jobguard
BUDGET=$(jq -r .memory_budget <<<"$(grep -m1 '"starting jobguard"' "$SERVER_LOG")")
MAX_BODY=$(jq -r .max_body_bytes <<<"$(grep -m1 '"starting jobguard"' "$SERVER_LOG")")
echo "# figures: budget $BUDGET bytes, largest accepted body $MAX_BODY bytes"

alive() { kill -0 "$SERVER_PID" 2>/dev/null; }

# under_attack NAME: 10 valid reviews 1 s apart, each on a new connection with a 1 s timeout and
# each followed by a /healthz probe with a 1 s timeout (as the kubelet's); jobguard_memory_held_bytes
# is read after each review into $TMP/NAME.held.
under_attack() {
	local name=$1 i out ok=0 probes=0
	: >"$TMP/$name.held"
	for i in $(seq 1 10); do
		out=$(curl -sS --max-time 1 --cacert "$CERTS/ca.crt" --resolve "$SVC_DNS:$PORT:127.0.0.1" \
			-o "$TMP/resp.json" -w '%{http_code} %{time_total}' -H 'Content-Type: application/json' \
			--data-binary "@$REVIEW" "$URL/validate?timeout=10s" 2>/dev/null)
		[[ ${out%% *} == 200 && $(jq -r .response.allowed "$TMP/resp.json" 2>/dev/null) == true ]] &&
			ok=$((ok + 1))
		echo "# $name review $i: ${out:-none}"
		curl -fsS --max-time 1 -o /dev/null "$OPS_URL/healthz" 2>/dev/null && probes=$((probes + 1))
		metric jobguard_memory_held_bytes >>"$TMP/$name.held"
		sleep 1
	done
	echo "# figure: $name: $ok of 10 reviews answered 200 within 1 s, $probes of 10 probes"
	if [[ $ok -ge 9 ]]; then pass "$name: $ok of 10 valid reviews answered 200 within 1 s"; else fail "$name: only $ok of 10 valid reviews answered 200 within 1 s"; fi
	expect_eq "$name: every /healthz probe answered within 1 s" 10 "$probes"
}

# attack NAME ARGS...: runs attacks.py ARGS in the background until it is attacking, then the
# reviews; then waits for it and checks the replica.
attack() {
	local name=$1 pid i kills
	shift
	kills=$(oom_kills)
	python3 "$E2E_DIR/attacks.py" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	pid=$!
	for i in $(seq 1 600); do grep -q attacking "$TMP/$name.out" 2>/dev/null && break; sleep 0.05; done
	sleep 1
	under_attack "$name"
	wait "$pid"
	echo "# figure: $name: $(grep -E '^(opened|peak)' "$TMP/$name.out" | tr '\n' ' ')cgroup peak $(cat "$CG/memory.max_usage_in_bytes") of $LIMIT bytes"
	expect_eq "$name: no OOM kill in the cgroup" "$kills" "$(oom_kills)"
	if alive; then pass "$name: the replica was not killed"; else
		fail "$name: the replica died"
		wait "$SERVER_PID" 2>/dev/null
		start_jobguard # to see what the next attack does
	fi
}
# held_is NAME BYTES: every held figure read during the attack was BYTES.
held_is() {
	local bad
	bad=$(grep -vx "$2" "$TMP/$1.held" | head -1)
	if [[ -z $bad ]]; then pass "$1: jobguard_memory_held_bytes was $2 throughout"; else fail "$1: jobguard_memory_held_bytes was $bad, expected $2"; fi
}

# 1. The TLS handshake: 14 x 16 MiB, then 1,000 x 120 KB from 4 addresses. Each connection is cut
# once it has sent 16 KiB before its handshake is done; nothing is charged to the budget, the
# connections' part of the limit holds it.
attack hello16m hello "$PORT" 14 "$ATTACK_S" $((16 * 1048576 - 64))
held_is hello16m 0
attack hello120k hello "$PORT" 1000 "$ATTACK_S" 120000 4
held_is hello120k 0
opened=$(awk '$1 == "opened" {print $2}' "$TMP/hello16m.out")
if [[ $opened -gt 14 ]]; then pass "hello16m: connections are cut at the handshake limit and opened again ($opened)"; else fail "hello16m: the 14 connections were never cut"; fi

# 2. Reservations: headers only (nothing arrives, nothing is held), then 1,000 body bytes each (a
# 16 KiB buffer each, charged), then bodies that fill what clients may hold: older holds give way
# to the valid reviews.
attack headers headers "$PORT" 8 "$ATTACK_S" 762600 "$CERTS/ca.crt"
held_is headers 0
attack headers1k headers "$PORT" 8 "$ATTACK_S" 762600 "$CERTS/ca.crt" 1000
held_is headers1k $((8 * 16384))
attack fill headers "$PORT" 40 "$ATTACK_S" "$MAX_BODY" "$CERTS/ca.crt" $((3 * 524288))
held=$(sort -n "$TMP/fill.held" | tail -1)
echo "# figure: fill: at most $held bytes held of the $BUDGET-byte budget"
if [[ $held -gt $((BUDGET / 2)) && $held -le $((BUDGET - BUDGET / 4)) ]]; then pass "fill: the attackers hold what they sent, within three quarters of the budget ($held)"; else fail "fill: held $held of $BUDGET"; fi

# 3. 1,024 idle TCP connections from one address (not the reviews'): at most
# --max-connections-per-ip (256) are open, and each is cut after the 10 s handshake deadline.
attack idle idle "$PORT" 1024 "$ATTACK_S" 1
held_is idle 0

# ... and 1,000 connections from 8 addresses that each send a request's headers and no body, the
# most that --max-connections lets in: the longest waiting give way to each new connection.
evicted=$(metric jobguard_connections_evicted_total)
attack inrequest headers "$PORT" 1000 "$ATTACK_S" 762600 "$CERTS/ca.crt" 0 8
held_is inrequest 0
evicted=$(($(metric jobguard_connections_evicted_total) - evicted))
echo "# figure: inrequest: $evicted connections evicted to make room"

# 4. The ops port: 17 addresses x 16 idle connections.
attack ops spread "$OPS" 17 16 "$ATTACK_S"

expect_eq "nothing held once the attacks are over" 0 "$(metric jobguard_memory_held_bytes)"
stop_server
jg_finish

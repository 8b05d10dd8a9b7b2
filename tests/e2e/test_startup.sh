#!/usr/bin/env bash
# Start-up: --help documents every flag with its default and variable; bad flags and bad
# certificate material fail fast with a precise message (OpenSSL checks: key mismatch, expired,
# not yet valid, service name not covered; paths that are FIFOs, devices or directories, files
# too large or empty); JOBGUARD_* variables configure, flags win.
source "$(dirname "$0")/lib.sh"
jg_init "$@"

CERTS=$TMP/certs
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }

"$JG" serve --help >"$TMP/help" 2>&1
expect_eq "serve --help exits 0" 0 "$?"
for f in tls-cert-file tls-private-key-file bind-address:0.0.0.0 port:9443 ops-port:8080 \
	shutdown-delay:5 drain-timeout:10 log-level:info log-format:json service-name client-ca-file \
	client-cn tls-min-version:1.2 threads:0 parity:1.35 disable-rule mode cert-poll-interval:5 \
	max-connections:1024 max-connections-per-ip:256 connection-timeout:30 \
	connection-memory-limit:16KiB max-header-bytes:8KiB memory-budget:0 metrics-zero-series:true; do
	name=${f%%:*} def=${f#*:}
	[[ $def == "$f" ]] && def=''
	env=JOBGUARD_$(tr 'a-z-' 'A-Z_' <<<"$name")
	block=$(grep -A2 -- "^  --$name " "$TMP/help")
	if [[ -n $block && $block == *"env: $env"* && ( -z $def || $block == *"default: $def;"* ) ]]; then
		pass "--help documents --$name${def:+ (default $def)} and $env"
	else fail "--help lacks --$name / default $def / $env"; fi
done

# run_fail NAME EXPECTED_REGEX ARGS...: the server must exit non-zero at once with that message.
run_fail() {
	local name=$1 re=$2 out rc
	shift 2
	out=$(timeout 20 "$JG" serve --bind-address 127.0.0.1 --port "$(free_port)" --ops-port "$(free_port)" "$@" 2>&1)
	rc=$?
	if [[ $rc -ne 0 && $rc -ne 124 && $out =~ $re ]]; then pass "$name: exit $rc, \"${BASH_REMATCH[0]}\""
	else fail "$name: exit $rc, output: ${out:0:300}"; fi
}
C=(--tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key")
run_fail "no certificate flags" 'tls-cert-file and --tls-private-key-file are required'
run_fail "a memory budget below the minimum" 'memory-budget 1048576 is less than the minimum, 4194304' \
	"${C[@]}" --memory-budget 1MiB
run_fail "a memory budget that is not a size" 'memory-budget: "lots" is not a size' "${C[@]}" --memory-budget lots
run_fail "unknown flag" 'unknown option --nope' "${C[@]}" --nope 1
run_fail "bad port" '--port: "70000" is not a number' "${C[@]}" --port 70000
run_fail "bad tls-min-version" 'tls-min-version must be 1.2 or 1.3' "${C[@]}" --tls-min-version 1.1
run_fail "bad log level" 'log-level must be' "${C[@]}" --log-level loud
run_fail "bad parity" '--parity must be 1.35, 1.36 or 1.37, not "1.38"' "${C[@]}" --parity 1.38
run_fail "unknown rule ID" 'unknown rule ID "NoSuchRule"' "${C[@]}" --disable-rule NoSuchRule
run_fail "--mode of an unknown rule" '--mode: unknown rule ID "NoSuchRule"' "${C[@]}" --mode NoSuchRule=warn
run_fail "--mode with an unknown mode" '--mode: "ALWAYS-NonNeg=loud": expected ID=MODE' "${C[@]}" --mode ALWAYS-NonNeg=loud
run_fail "missing cert file" "cannot open $TMP/none.crt" --tls-cert-file "$TMP/none.crt" --tls-private-key-file "$CERTS/tls.key"
# Non-regular files are refused at once, never waited on (a FIFO without a writer used to block
# open(2) for ever; run_fail's timeout turns such a hang into a failure).
mkfifo "$TMP/fifo.crt" "$TMP/fifo.key" "$TMP/fifo-ca.crt"
run_fail "certificate path is a FIFO" "$TMP/fifo.crt is a FIFO \(named pipe\), not a regular file" \
	--tls-cert-file "$TMP/fifo.crt" --tls-private-key-file "$CERTS/tls.key"
run_fail "key path is a FIFO" "$TMP/fifo.key is a FIFO \(named pipe\), not a regular file" \
	--tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$TMP/fifo.key"
run_fail "key path is a directory" "$TMP is a directory, not a regular file" \
	--tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$TMP"
run_fail "certificate path is a character device" "/dev/zero is a character device, not a regular file" \
	--tls-cert-file /dev/zero --tls-private-key-file "$CERTS/tls.key"
run_fail "client CA path is a FIFO" "client-ca-file: $TMP/fifo-ca.crt is a FIFO \(named pipe\), not a regular file" \
	"${C[@]}" --client-ca-file "$TMP/fifo-ca.crt"
# A file under a lease held by another process: refused at once (a blocking open waits 45 s).
cp "$CERTS/tls.crt" "$TMP/leased.crt"
if hold_lease "$TMP/leased.crt"; then
	run_fail "certificate under another process's lease" "cannot open $TMP/leased.crt: another process holds a lease on it" \
		--tls-cert-file "$TMP/leased.crt" --tls-private-key-file "$CERTS/tls.key"
	kill "$LEASE_PID"
else fail "could not take a lease on $TMP/leased.crt"; fi
head -c $((1024 * 1024 + 1)) /dev/zero >"$TMP/big.crt"
run_fail "certificate file over 1 MiB" "$TMP/big.crt is larger than 1048576 bytes" \
	--tls-cert-file "$TMP/big.crt" --tls-private-key-file "$CERTS/tls.key"
: >"$TMP/empty.key"
run_fail "empty key file" "$TMP/empty.key is empty" --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$TMP/empty.key"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$TMP/other.key" 2>/dev/null
run_fail "key does not match certificate" "private key $TMP/other.key does not match certificate" \
	--tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$TMP/other.key"
run_fail "garbage certificate" 'no PEM certificate could be parsed' --tls-cert-file "$TMP/other.key" --tls-private-key-file "$CERTS/tls.key"
sign_dated "$CERTS" "$TMP/expired" 20200101000000Z 20210101000000Z
run_fail "expired certificate" 'has expired: notAfter 2021-01-01T00:00:00Z' \
	--tls-cert-file "$TMP/expired/tls.crt" --tls-private-key-file "$TMP/expired/tls.key"
sign_dated "$CERTS" "$TMP/future" 20990101000000Z 21000101000000Z
run_fail "not yet valid certificate" 'is not valid yet: notBefore 2099-01-01T00:00:00Z' \
	--tls-cert-file "$TMP/future/tls.crt" --tls-private-key-file "$TMP/future/tls.key"
run_fail "service name not covered" 'does not cover the service name jobguard.other.svc \(DNS names: jobguard, jobguard.default' \
	"${C[@]}" --service-name jobguard.other.svc
run_fail "client CA file without certificates" 'client-ca-file: .*no PEM certificate found' "${C[@]}" --client-ca-file "$TMP/other.key"
# the same refusal goes to the log as JSON
out=$(timeout 20 "$JG" serve --tls-cert-file "$TMP/expired/tls.crt" --tls-private-key-file "$TMP/expired/tls.key" 2>&1 | grep '"msg":"refusing to start')
expect_match "refusal is logged as a JSON certificate event" '"event":"certificate","error":"certificate .* has expired' "$out"

# Environment variables configure; flags win.
P1=$(free_port) O1=$(free_port)
JOBGUARD_TLS_CERT_FILE=$CERTS/tls.crt JOBGUARD_TLS_PRIVATE_KEY_FILE=$CERTS/tls.key \
	JOBGUARD_OPS_PORT=$O1 JOBGUARD_PORT=$P1 JOBGUARD_LOG_LEVEL=debug JOBGUARD_SERVICE_NAME=$SVC_DNS \
	JOBGUARD_SHUTDOWN_DELAY=0 JOBGUARD_DISABLE_RULE=ALWAYS-ManagedByFormat,ALWAYS-ManagedByLength \
	JOBGUARD_MODE='ALWAYS-NonNeg=warn, ALWAYS-ManagedByImmutable=audit' \
	"$JG" serve --bind-address 127.0.0.1 --log-level info >"$TMP/env.log" 2>&1 &
pid=$!
PIDS+=("$pid")
for i in $(seq 1 100); do curl -fsS -o /dev/null "http://127.0.0.1:$O1/healthz" 2>/dev/null && break; sleep 0.1; done
PORT=$P1 URL=https://$SVC_DNS:$P1
code=$(post "$CASES_DIR/e10-create-uppercase-host/review.json")
expect_eq "JOBGUARD_PORT / JOBGUARD_OPS_PORT used; JOBGUARD_DISABLE_RULE switches the rule off" "200 true" "$code $(jq -r .response.allowed "$TMP/resp.json")"
cfg=$(grep -m1 '"msg":"starting jobguard"' "$TMP/env.log")
expect_eq "flag wins over JOBGUARD_LOG_LEVEL; service name from env" "info jobguard.default.svc" \
	"$(jq -r '"\(.log_level) \(.service_name)"' <<<"$cfg")"
expect_eq "effective disabled rules are logged" '["ALWAYS-ManagedByFormat","ALWAYS-ManagedByLength"]' "$(jq -c .disable_rule <<<"$cfg")"
expect_eq "JOBGUARD_MODE (comma-separated) is used and logged" '{"ALWAYS-ManagedByImmutable":"audit","ALWAYS-NonNeg":"warn"}' "$(jq -c .mode <<<"$cfg")"
kill -TERM "$pid"
wait_exit "$pid" 30
expect_eq "server exits 0" 0 "$EXIT_RC"

# Port already taken: a clear error, exit 1.
start_server main "${C[@]}" --shutdown-delay 0 || fail "server start"
out=$(timeout 20 "$JG" serve "${C[@]}" --bind-address 127.0.0.1 --port "$PORT" --ops-port "$(free_port)" 2>&1)
rc=$?
expect_match "second server on the same port: exit 1, the bind error" "^1 .*cannot listen on 127.0.0.1 port $PORT: Address already in use" "$rc $out"
out=$(timeout 20 "$JG" serve "${C[@]}" --bind-address 127.0.0.1 --port "$(free_port)" --ops-port "$OPS" 2>&1)
rc=$?
expect_match "second server on the same ops port: exit 1, the bind error" "^1 .*cannot listen on 127.0.0.1 port $OPS \\(ops\\): Address already in use" "$rc $out"
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"
jg_finish

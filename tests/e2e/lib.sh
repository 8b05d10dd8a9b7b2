# lib.sh: helpers for jobguard's end-to-end tests (sourced, bash). Every test:
#   source lib.sh; jg_init "$@"   (argument 1: the jobguard binary)
#   ... checks with pass/fail/expect_eq ...
#   jg_finish                      (prints "N passed, M failed", exit status 1 on any failure)
# Servers listen on 127.0.0.1 only, on random free ports in 20000-39999; certificates are made
# fresh per run in a temporary directory that is removed at exit together with the servers.

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC_ROOT=$(cd "$E2E_DIR/../.." && pwd)
CASES_DIR=$SRC_ROOT/tests/cases
SERVICE=jobguard
NAMESPACE=default
SVC_DNS=$SERVICE.$NAMESPACE.svc
N_PASS=0
N_FAIL=0
PIDS=()

jg_init() {
	JG=${1:?usage: $0 path/to/jobguard}
	[[ $JG == /* ]] || JG=$PWD/$JG
	[[ -x $JG ]] || { echo "not executable: $JG" >&2; exit 2; }
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/jobguard-e2e.XXXXXX")
	trap jg_cleanup EXIT
	echo "# $(basename "$0") with $JG, scratch $TMP"
}

jg_cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [[ $N_FAIL -gt 0 && -n ${KEEP_TMP:-} ]]; then echo "# kept $TMP"; else rm -rf "$TMP"; fi
}

pass() { N_PASS=$((N_PASS + 1)); echo "ok - $*"; }
fail() { N_FAIL=$((N_FAIL + 1)); echo "FAIL - $*"; }
# expect_eq DESCRIPTION EXPECTED ACTUAL
expect_eq() {
	if [[ "$2" == "$3" ]]; then pass "$1"; else fail "$1: expected [$2], got [$3]"; fi
}
# expect_match DESCRIPTION REGEX ACTUAL
expect_match() {
	if [[ "$3" =~ $2 ]]; then pass "$1"; else fail "$1: [$3] does not match /$2/"; fi
}
jg_finish() {
	echo "$N_PASS passed, $N_FAIL failed"
	[[ $N_FAIL -eq 0 ]]
	exit $?
}

# mkcerts DIR [generate.sh args...]: CA + serving cert for jobguard.default.svc, 127.0.0.1, localhost.
mkcerts() {
	local dir=$1
	shift
	"$SRC_ROOT/certs/generate.sh" --service "$SERVICE" --namespace "$NAMESPACE" --out "$dir" \
		--ip 127.0.0.1 --dns localhost "$@" >/dev/null 2>"$dir.log" || {
		cat "$dir.log" >&2
		return 1
	}
}

# sign_with_ca CADIR OUTDIR CN EKU [DAYS] [SANS]: an ECDSA key + certificate signed by CADIR/ca.*.
sign_with_ca() {
	local ca=$1 out=$2 cn=$3 eku=$4 days=${5:-30} san=${6:-}
	mkdir -p "$out"
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$out/tls.key" 2>/dev/null
	openssl req -new -key "$out/tls.key" -subj "/CN=$cn" -out "$out/req.csr" 2>/dev/null
	{
		echo "basicConstraints=critical,CA:FALSE"
		echo "keyUsage=critical,digitalSignature"
		echo "extendedKeyUsage=$eku"
		[[ -n $san ]] && echo "subjectAltName=$san"
	} >"$out/ext.cnf"
	openssl x509 -req -in "$out/req.csr" -CA "$ca/ca.crt" -CAkey "$ca/ca.key" \
		-set_serial "0x$(openssl rand -hex 12)" -days "$days" -extfile "$out/ext.cnf" \
		-out "$out/tls.crt" 2>/dev/null
}

# new_ca DIR CN: a self-signed ECDSA CA (ca.crt, ca.key).
new_ca() {
	mkdir -p "$1"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1/ca.key" \
		-out "$1/ca.crt" -days 30 -subj "/CN=$2" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}

# sign_dated CADIR OUTDIR STARTDATE ENDDATE: serving cert with an explicit validity window
# (YYYYMMDDHHMMSSZ), through `openssl ca` since OpenSSL 3.0's x509 has no -not_before.
sign_dated() {
	local ca=$1 out=$2 start=$3 end=$4 db=$2/cadb
	mkdir -p "$out" "$db/new"
	: >"$db/index.txt"
	openssl rand -hex 8 >"$db/serial"
	cat >"$db/ca.cnf" <<CNF
[ ca ]
default_ca = d
[ d ]
database = $db/index.txt
new_certs_dir = $db/new
serial = $db/serial
default_md = sha256
policy = p
copy_extensions = copy
unique_subject = no
[ p ]
commonName = supplied
CNF
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$out/tls.key" 2>/dev/null
	openssl req -new -key "$out/tls.key" -subj "/CN=$SVC_DNS" \
		-addext "subjectAltName=DNS:$SVC_DNS,DNS:localhost,IP:127.0.0.1" \
		-addext "extendedKeyUsage=serverAuth" -out "$out/req.csr" 2>/dev/null
	openssl ca -batch -notext -config "$db/ca.cnf" -cert "$ca/ca.crt" -keyfile "$ca/ca.key" \
		-in "$out/req.csr" -out "$out/tls.crt" -startdate "$start" -enddate "$end" 2>/dev/null
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
	local i p
	for i in $(seq 1 50); do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 20000))
		port_in_use "$p" || { echo "$p"; return 0; }
	done
	return 1
}

# start_server LOGNAME [serve args...]: starts jobguard on fresh ports and waits for /healthz.
# Sets SERVER_PID PORT OPS URL OPS_URL SERVER_LOG. The cert flags are the caller's.
start_server() {
	local name=$1 attempt i size
	shift
	SERVER_LOG=$TMP/$name.log
	touch "$SERVER_LOG"
	for attempt in 1 2 3 4 5; do
		size=$(stat -c %s "$SERVER_LOG")
		PORT=$(free_port) && OPS=$(free_port) || return 1
		[[ $PORT != "$OPS" ]] || continue
		"$JG" serve --bind-address 127.0.0.1 --port "$PORT" --ops-port "$OPS" "$@" \
			>>"$SERVER_LOG" 2>&1 &
		SERVER_PID=$!
		PIDS+=("$SERVER_PID")
		URL=https://$SVC_DNS:$PORT
		OPS_URL=http://127.0.0.1:$OPS
		for i in $(seq 1 300); do # up to 30 s (sanitizer builds start slowly)
			if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
			if curl -fsS -o /dev/null --max-time 1 "$OPS_URL/healthz" 2>/dev/null; then return 0; fi
			sleep 0.1
		done
		wait "$SERVER_PID" 2>/dev/null
		grep -q "Address already in use" "$SERVER_LOG" || break # not a port clash: give up
		# forget the clashed attempt, so callers read this server's lines only
		truncate -s "$size" "$SERVER_LOG"
	done
	echo "# server $name did not start; log:" >&2
	tail -n 20 "$SERVER_LOG" >&2
	return 1
}

# wait_exit PID SECONDS: waits for a child of this shell (not from a $(...) subshell) to exit;
# sets EXIT_RC to its status, or "timeout".
wait_exit() {
	local pid=$1 i
	EXIT_RC=timeout
	for i in $(seq 1 $(($2 * 10))); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			EXIT_RC=$?
			return 0
		fi
		sleep 0.1
	done
}

# stop_server: SIGTERM and wait; sets SERVER_RC to the exit status (or "timeout").
stop_server() {
	kill -TERM "$SERVER_PID" 2>/dev/null
	wait_exit "$SERVER_PID" 60
	SERVER_RC=$EXIT_RC
}

# jcurl ARGS...: curl to the webhook port, trusting only the test CA, service name resolved locally.
jcurl() {
	curl -sS --max-time 20 --cacert "$CERTS/ca.crt" --resolve "$SVC_DNS:$PORT:127.0.0.1" "$@"
}

# post FILE: POST /validate; body to $TMP/resp.json, prints the HTTP status code.
post() {
	jcurl -o "$TMP/resp.json" -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary "@$1" "$URL/validate?timeout=10s"
}

# metric 'name{labels}': the value on /metrics (0 when the series is absent).
metric() {
	curl -sS --max-time 5 "$OPS_URL/metrics" | awk -v k="$1" '$1 == k { v = $2 } END { print v == "" ? 0 : v }'
}

# wait_metric 'name{labels}' VALUE SECONDS: true once the metric has VALUE, false after SECONDS.
wait_metric() {
	local i
	for i in $(seq 1 $(($3 * 10))); do
		[[ $(metric "$1") == "$2" ]] && return 0
		sleep 0.1
	done
	return 1
}

# served_serial: serial number of the certificate the TLS port presents now (new handshake).
served_serial() {
	openssl s_client -connect "127.0.0.1:$PORT" -servername "$SVC_DNS" </dev/null 2>/dev/null |
		openssl x509 -noout -serial 2>/dev/null | sed 's/^serial=//'
}
cert_serial() { openssl x509 -in "$1" -noout -serial | sed 's/^serial=//'; }

# Kubernetes Secret volume layout: DIR/tls.crt -> ..data/tls.crt, ..data -> VERSION_DIR;
# secret_install DIR SRC replaces ..data atomically (rename of a symlink), as the kubelet does.
secret_install() {
	local dir=$1 src=$2 v
	v=..$(date +%s%N)
	mkdir -p "$dir/$v"
	cp "$src/tls.crt" "$src/tls.key" "$dir/$v/"
	ln -sfn "$v" "$dir/..data_tmp"
	mv -T "$dir/..data_tmp" "$dir/..data"
	[[ -L $dir/tls.crt ]] || ln -s ..data/tls.crt "$dir/tls.crt"
	[[ -L $dir/tls.key ]] || ln -s ..data/tls.key "$dir/tls.key"
}

# hold_lease FILE: another process takes a write lease on FILE (fcntl F_SETLEASE, python3) and
# keeps it until killed; sets LEASE_PID. While it holds the lease, a blocking open(2) of FILE
# by anyone else waits up to /proc/sys/fs/lease-break-time (45 s), a non-blocking one fails.
hold_lease() {
	rm -f "$TMP/lease.ready"
	python3 -c '
import fcntl, os, signal, sys, time
signal.signal(signal.SIGIO, signal.SIG_IGN)  # the lease-break notice must not end the holder
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
open(sys.argv[2], "w").close()
time.sleep(600)' "$1" "$TMP/lease.ready" &
	LEASE_PID=$!
	PIDS+=("$LEASE_PID")
	local i
	for i in $(seq 1 100); do [[ -e $TMP/lease.ready ]] && return 0; sleep 0.1; done
	return 1
}

# build_apiclient: builds the Go kube-apiserver-like client into $TMP/apiclient (GOPATH mode).
build_apiclient() {
	command -v go >/dev/null || return 1
	(cd "$E2E_DIR/apiclient" && GO111MODULE=off GOFLAGS= GOCACHE=${GOCACHE:-${TMPDIR:-/tmp}/jobguard-gocache} \
		go build -o "$TMP/apiclient" .) >"$TMP/go-build.log" 2>&1 || {
		cat "$TMP/go-build.log" >&2
		return 1
	}
}

# in_memory_cgroup: skips the test (exit 77) unless it runs as root with a writable cgroup v1
# memory hierarchy and a release build (a sanitizer's shadow memory fits no budget made for the
# release build); otherwise creates a memory cgroup at the chart's limit (resources.limits.memory
# in values.yaml), removed at exit, and makes $JG start jobguard inside it. Sets CG, LIMIT,
# LIMIT_MI and REAL_JG. oom_kills prints the cgroup's OOM kill count.
in_memory_cgroup() {
	local v1=/sys/fs/cgroup/memory values=$SRC_ROOT/charts/jobguard/values.yaml
	if [[ $(id -u) != 0 || ! -w $v1/cgroup.procs ]]; then
		echo "# skipped: needs root and a writable cgroup v1 memory hierarchy at $v1"
		exit 77
	fi
	if ldd "$JG" 2>/dev/null | grep -q 'libasan\|libubsan'; then
		echo "# skipped: a sanitizer build ($JG)"
		exit 77
	fi
	LIMIT_MI=$(awk '/^resources:/ {r=1} r && /^  limits:/ {l=1; next} r && l && /memory:/ {gsub(/[^0-9]/, "", $2); print $2; exit}' "$values")
	[[ -n $LIMIT_MI ]] || { fail "no resources.limits.memory in $values"; jg_finish; }
	LIMIT=$((LIMIT_MI * 1024 * 1024))
	echo "# the chart's memory limit: ${LIMIT_MI}Mi"
	CG=$v1/jobguard-e2e-$$
	mkdir "$CG" || { fail "cannot create $CG"; jg_finish; }
	trap cleanup_cgroup EXIT
	echo "$LIMIT" >"$CG/memory.limit_in_bytes"
	[[ -w $CG/memory.memsw.limit_in_bytes ]] && echo "$LIMIT" >"$CG/memory.memsw.limit_in_bytes"
	REAL_JG=$JG
	JG=$TMP/jobguard-in-cgroup
	printf '#!/bin/sh\necho $$ >%s/cgroup.procs && exec %s "$@"\n' "$CG" "$REAL_JG" >"$JG"
	chmod +x "$JG"
}
cleanup_cgroup() {
	jg_cleanup
	local i
	for i in $(seq 1 50); do rmdir "$CG" 2>/dev/null && return; sleep 0.1; done
}
oom_kills() { awk '$1 == "oom_kill" {print $2}' "$CG/memory.oom_control"; }
# Policy tests: serving_sha: the sha256 label of jobguard_policy_info
serving_sha() {
	curl -sS --max-time 5 "$OPS_URL/metrics" | sed -n 's/^jobguard_policy_info{sha256="\([0-9a-f]*\)"} 1$/\1/p'
}
# verdict: "allowed" or "denied" for the review that changes spec.managedBy (an immutable field)
CHANGED=$CASES_DIR/r-update-managedby-changed/review.json
verdict() {
	local code
	code=$(post "$CHANGED")
	[[ $code == 200 ]] || { echo "http $code"; return; }
	grep -q '"allowed":true' "$TMP/resp.json" && echo allowed || echo denied
}

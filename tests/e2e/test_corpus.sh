#!/usr/bin/env bash
# The fixture corpus over HTTPS: every tests/cases/*/review.json must come back exactly as its
# expected.json (jq -S equality), in the v1 envelope and re-wrapped as v1beta1 (the r-* cases are
# kube-apiserver-shaped reviews of 4-17 KB). curl trusts only the test CA and
# reaches the service DNS name through --resolve.
source "$(dirname "$0")/lib.sh"
jg_init "$@"

CERTS=$TMP/certs
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }
start_server main --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--service-name "$SVC_DNS" --log-level warn --shutdown-delay 0 || { fail "server start"; jg_finish; }

# Cases whose args file asks for other serve flags (e.g. --parity 1.36), or that carry a
# policy.json (served with --policy-file), get their own server.
case_flags() { # case_flags DIR: the case's serve flags, spaces as ~ ("" for none)
	local f=""
	[[ -f $1/args ]] && f=$(tr ' ' '~' <"$1/args" | tr -d '\n')
	[[ -f $1/policy.json ]] && f="$f${f:+~}--policy-file~${1%/}/policy.json"
	printf '%s' "$f"
}
declare -A ALT_PORT=()
for args in $(for d in "$CASES_DIR"/*/; do case_flags "$d"; echo; done | grep . | sort -u); do
	save=("$PORT" "$OPS" "$URL" "$OPS_URL" "$SERVER_PID")
	# shellcheck disable=SC2086
	start_server "alt" --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
		--log-level warn --shutdown-delay 0 ${args//\~/ } || fail "server start with ${args//\~/ }"
	ALT_PORT[$args]=$PORT
	PORT=${save[0]} OPS=${save[1]} URL=${save[2]} OPS_URL=${save[3]} SERVER_PID=${save[4]}
done

n_cases=0 n_exact=0 n_beta=0
bad_exact=() bad_beta=()
main_port=$PORT
for dir in "$CASES_DIR"/*/; do
	[[ -f $dir/review.json && -f $dir/expected.json ]] || continue
	name=$(basename "$dir")
	n_cases=$((n_cases + 1))
	PORT=$main_port
	key=$(case_flags "$dir")
	[[ -n $key ]] && PORT=${ALT_PORT[$key]:-$main_port}
	URL=https://$SVC_DNS:$PORT
	code=$(post "$dir/review.json")
	if [[ $code == 200 ]] && [[ $(jq -S . "$TMP/resp.json") == "$(jq -S . "$dir/expected.json")" ]]; then
		n_exact=$((n_exact + 1))
	else
		bad_exact+=("$name(http $code)")
	fi
	# v1beta1 envelope: same decision, apiVersion echoed.
	jq '.apiVersion = "admission.k8s.io/v1beta1"' "$dir/review.json" >"$TMP/beta.json"
	code=$(post "$TMP/beta.json")
	want=$(jq -S '.apiVersion = "admission.k8s.io/v1beta1"' "$dir/expected.json")
	if [[ $code == 200 ]] && [[ $(jq -S . "$TMP/resp.json") == "$want" ]]; then
		n_beta=$((n_beta + 1))
	else
		bad_beta+=("$name(http $code)")
	fi
done
PORT=$main_port URL=https://$SVC_DNS:$PORT
if [[ $n_cases -eq 0 ]]; then
	fail "no cases in $CASES_DIR"
else
	expect_eq "tests/cases: $n_cases responses equal expected.json (v1)" "$n_cases" "$n_exact"
	[[ ${#bad_exact[@]} -eq 0 ]] || echo "#   differing: ${bad_exact[*]:0:20}"
	expect_eq "tests/cases: $n_cases responses equal expected.json re-wrapped as v1beta1" "$n_cases" "$n_beta"
	[[ ${#bad_beta[@]} -eq 0 ]] || echo "#   differing: ${bad_beta[*]:0:20}"
fi

stop_server
expect_eq "server exits 0 on SIGTERM" 0 "$SERVER_RC"
jg_finish

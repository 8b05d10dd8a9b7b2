#!/usr/bin/env bash
# `jobguard check --print-review` piped into curl, as the README shows it: the README's own
# command line (its ```sh block starting with `./build/src/jobguard check --print-review`) is run
# against a real server, with only the binary, the CA and the address replaced; the server's
# answer must be byte for byte what `jobguard check` answers offline for the same object. With
# several objects, one review per line, each posted on its own, answers in order.
source "$(dirname "$0")/lib.sh"
source "$SRC_ROOT/tests/fresh/debian.sh" # readme_command
jg_init "$@"

CERTS=$TMP/certs
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }
start_server main --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--service-name "$SVC_DNS" --log-level warn --shutdown-delay 0 || { fail "server start"; jg_finish; }

line=$(readme_command "$SRC_ROOT/README.md" "./build/src/jobguard check --print-review")
case $line in
*"check --print-review"*"| curl --cacert certs/dev/ca.crt"*"--data-binary @-"*"https://localhost:9443/validate"*)
	pass "the README's pipeline: $line" ;;
*) fail "the README has no 'jobguard check --print-review ... | curl ... --data-binary @- https://localhost:9443/validate' block: [$line]"
	jg_finish ;;
esac
cmd=${line//.\/build\/src\/jobguard/\"\$JG\"}
cmd=${cmd//--cacert certs\/dev\/ca.crt/--cacert \"\$CERTS\/ca.crt\" --resolve \"\$SVC_DNS:\$PORT:127.0.0.1\"}
cmd=${cmd//https:\/\/localhost:9443/\"\$URL\"}
got=$(cd "$SRC_ROOT" && JG=$JG CERTS=$CERTS SVC_DNS=$SVC_DNS PORT=$PORT URL=$URL bash -c "set -o pipefail; curl() { command curl -sS --max-time 20 \"\$@\"; }; $cmd")
expect_eq "the pipeline's exit status" 0 "$?"
# the offline answer to the same object: the README's check arguments without --print-review
args=${line%%|*}
args=${args#./build/src/jobguard check --print-review}
want=$(cd "$SRC_ROOT" && eval "\"\$JG\" check $args")
expect_match "the offline check decides it" '"response":\{"uid":"[0-9a-f-]{36}"' "$want"
expect_eq "the server answers what check answers offline" "$want" "$got"

# several objects: one review per line, each posted alone
obj=$SRC_ROOT/tests/offline/cases/_in
mapfile -t reviews < <("$JG" check --print-review --new "$obj/job-ok.json" --new "$obj/bad-format.json" --new "$obj/cluster.json" 2>/dev/null)
expect_eq "one review per target object and per line (not the ConfigMap)" 7 "${#reviews[@]}"
answers=""
for r in "${reviews[@]}"; do
	answers+=$(printf '%s' "$r" | jcurl -H 'Content-Type: application/json' --data-binary @- "$URL/validate")$'\n'
done
offline=$("$JG" check --new "$obj/job-ok.json" --new "$obj/bad-format.json" --new "$obj/cluster.json" 2>/dev/null)
expect_eq "the server's answers are check's, in order" "$offline" "${answers%$'\n'}"
case $offline in *'"allowed":false'*'"code":422'*) pass "some of them are denied" ;; *) fail "no denial among them" ;; esac
jg_finish

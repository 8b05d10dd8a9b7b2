#!/usr/bin/env bash
# A policy file rewritten in place (docs/policy.md "Files written in place"). The same size and
# modification time (cp -p, rsync -t --inplace, tar x) are still seen as a change (the change
# time). JSON written in place is loaded once whole: a cut JSON object is never valid, so a file
# caught half written is refused and the complete one loaded, however long the writer pauses.
# YAML written in place is never loaded, complete or not (a YAML file cut at a line is a valid
# policy with defaults for the rest): only a new file renamed over it, or SIGHUP, loads it.
source "$(dirname "$0")/lib.sh"
jg_init "$@"

CERTS=$TMP/certs
mkcerts "$CERTS" || { fail "certificates"; jg_finish; }
OK='jobguard_policy_reloads_total{result="success"}'
KO='jobguard_policy_reloads_total{result="failure"}'
# serving_sha, verdict (lib.sh): the serving digest; "denied" for the managedBy change in deny
# mode, "allowed" (with a warning) in warn mode
sha() { sha256sum "$1" | cut -d' ' -f1; }
# in_place SRC DST: DST's bytes become SRC's, same inode, size and modification time as before.
in_place() {
	local mtime
	mtime=$(stat -c %Y "$2")
	cat "$1" >"$2"
	touch -d "@$mtime" "$2"
}

# JSON: two policies of the same size.
printf '{"modes": {"ALWAYS-ManagedByImmutable": "deny"}}\n' >"$TMP/deny.json"
printf '{"modes": {"ALWAYS-ManagedByImmutable": "warn"}}\n' >"$TMP/warn.json"
cp "$TMP/deny.json" "$TMP/p.json"
touch -d @1700000000 "$TMP/p.json"
start_server json --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--policy-file "$TMP/p.json" --cert-poll-interval 1 --shutdown-delay 0 || { fail "server start"; jg_finish; }
ino=$(stat -c %i "$TMP/p.json")
expect_eq "deny policy serving" "$(sha "$TMP/deny.json") denied" "$(serving_sha) $(verdict)"
in_place "$TMP/warn.json" "$TMP/p.json"
expect_eq "  rewritten with the same inode, size and modification time" \
	"$ino $(stat -c %s "$TMP/deny.json") 1700000000" "$(stat -c '%i %s %Y' "$TMP/p.json")"
wait_metric "$OK" 1 10 && pass "JSON rewritten in place with the same size and mtime: reloaded" ||
	fail "not reloaded (success counter $(metric "$OK"))"
expect_eq "  the new policy serves and decides" "$(sha "$TMP/warn.json") allowed" "$(serving_sha) $(verdict)"

# A writer that pauses between two parts: the first part is refused, the whole loaded.
head -c 30 "$TMP/deny.json" >"$TMP/p.json"
wait_metric "$KO" 1 10 && pass "JSON caught half written: refused" || fail "failure counter is $(metric "$KO")"
sleep 2.5 # two polls with the half file stable on disk
expect_eq "  still refused, the previous policy serving" "$(sha "$TMP/warn.json") allowed 0" \
	"$(serving_sha) $(verdict) $(metric jobguard_policy_file_serving)"
tail -c +31 "$TMP/deny.json" >>"$TMP/p.json"
wait_metric "$OK" 2 10 && pass "  the rest written: loaded" || fail "not loaded once complete"
expect_eq "  the whole file serves" "$(sha "$TMP/deny.json") denied 1" \
	"$(serving_sha) $(verdict) $(metric jobguard_policy_file_serving)"
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"

# YAML: a complete policy, and the same policy cut after its first line (valid on its own: the
# mode of one rule, allowUnlistedControllers left true).
printf 'modes:\n  ALWAYS-ManagedByImmutable: deny\nallowUnlistedControllers: false\ncontrollers:\n- name: example.com/ctl\n' >"$TMP/deny.yaml"
printf 'modes:\n  ALWAYS-ManagedByImmutable: warn\nallowUnlistedControllers: false\ncontrollers:\n- name: example.com/ctl\n' >"$TMP/warn.yaml"
cp "$TMP/deny.yaml" "$TMP/p.yaml"
start_server yaml --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
	--policy-file "$TMP/p.yaml" --cert-poll-interval 1 --shutdown-delay 0 || { fail "server start"; jg_finish; }
expect_eq "YAML deny policy serving" "$(sha "$TMP/deny.yaml") denied" "$(serving_sha) $(verdict)"
head -n 2 "$TMP/warn.yaml" >"$TMP/half.yaml"
"$JG" policy check "$TMP/half.yaml" >/dev/null 2>&1
expect_eq "  (its first two lines alone are a valid policy)" 0 "$?"
head -n 2 "$TMP/warn.yaml" >"$TMP/p.yaml"
wait_metric "$KO" 1 10 && pass "YAML caught half written in place: refused" || fail "failure counter is $(metric "$KO")"
line=$(grep '"msg":"policy reload rejected, keeping the current policy"' "$SERVER_LOG" | tail -1)
expect_match "  logged with the reason" "\"error\":\"$TMP/p.yaml: a YAML policy rewritten in place is not loaded" "$line"
expect_eq "  the previous policy serves; the file on disk is not serving" \
	"$(sha "$TMP/deny.yaml") denied 0" "$(serving_sha) $(verdict) $(metric jobguard_policy_file_serving)"
tail -n +3 "$TMP/warn.yaml" >>"$TMP/p.yaml"
sleep 2.5
expect_eq "  complete, still in place: not loaded either" "$(sha "$TMP/deny.yaml") 0 1" \
	"$(serving_sha) $(metric "$OK") $(metric "$KO")"
cp "$TMP/warn.yaml" "$TMP/p.yaml.new" && mv "$TMP/p.yaml.new" "$TMP/p.yaml"
wait_metric "$OK" 1 10 && pass "YAML renamed over the path: loaded" || fail "not loaded after rename"
expect_eq "  serving" "$(sha "$TMP/warn.yaml") allowed 1" \
	"$(serving_sha) $(verdict) $(metric jobguard_policy_file_serving)"
in_place "$TMP/deny.yaml" "$TMP/p.yaml"
wait_metric "$KO" 2 10 && pass "YAML rewritten in place with the same size and mtime: seen, refused" ||
	fail "failure counter is $(metric "$KO")"
kill -HUP "$SERVER_PID"
wait_metric "$OK" 2 10 && pass "  SIGHUP (the writer is done): loaded" || fail "SIGHUP did not load it"
expect_eq "  serving" "$(sha "$TMP/deny.yaml") denied 1" \
	"$(serving_sha) $(verdict) $(metric jobguard_policy_file_serving)"
stop_server
expect_eq "server exits 0" 0 "$SERVER_RC"
if grep -q 'ERROR: AddressSanitizer\|runtime error' "$TMP"/*.log; then fail "sanitizer report in a server log"; else pass "no sanitizer report"; fi
jg_finish

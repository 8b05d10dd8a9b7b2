#!/usr/bin/env bash
# CLI contract of `jobguard check` / `jobguard rules`: exit codes, stdout/stderr, --explain,
# raw --old/--new objects, flags. Usage: test_cli.sh JOBGUARD_BINARY CASES_DIR (tests/cases, holding r-<review>/review.json)
source "$(dirname "$0")/lib.sh"

expect_rc "allowed review exits 0" 0 "$bin" check "$cases/r-status-update-small/review.json"
expect_grep "allowed response on stdout" "$tmp/out" '"allowed":true'
expect_rc "denied review exits 1" 1 "$bin" check "$cases/r-status-update-denied/review.json"
expect_grep "denied response echoes uid" "$tmp/out" '"uid":"4e19a2ae-8dba-4ec2-8c5d-e603bc33704c"'
expect_rc "stdin input" 1 "$bin" check - <"$cases/r-create-job-bad-managedby/review.json"
expect_rc "explain" 1 "$bin" check --explain "$cases/r-status-update-denied/review.json"
expect_grep "explain prints one kubectl line per error (1)" "$tmp/err" 'The Job "shard-tokenizer" is invalid: status.completionTime: Required value: completionTime is required for Complete jobs'
expect_grep "explain prints one kubectl line per error (2)" "$tmp/err" 'The Job "shard-tokenizer" is invalid: status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition'
expect_rc "explain on allowed" 0 "$bin" check --explain "$cases/r-create-job/review.json"
expect_grep "explain says allowed" "$tmp/err" "allowed: CREATE jobs team-nlp/tokenize-books"

printf '{"apiVersion":' >"$tmp/trunc.json"
expect_rc "truncated JSON exits 2" 2 "$bin" check "$tmp/trunc.json"
expect_grep "reason on stderr with file, line and column" "$tmp/err" "jobguard check: $tmp/trunc.json:1:1: unexpected end of JSON input"
expect_grep "400 response still printed" "$tmp/out" '"code":400'
expect_rc "missing file exits 2" 2 "$bin" check "$tmp/nope.json"
expect_grep "missing file named" "$tmp/err" "nope.json"
expect_rc "unknown option exits 2" 2 "$bin" check --frobnicate
expect_rc "bad parity exits 2" 2 "$bin" check --parity 1.99 "$cases/r-create-job/review.json"
expect_grep "bad parity names the values" "$tmp/err" "--parity: unsupported 1.99 (1.35, 1.36 or 1.37)"
expect_rc "parity 1.37 denies the startTime change" 1 "$bin" check --parity 1.37 "$cases/e55c-starttime-changed-v137/review.json"
expect_grep "parity 1.37 gives the 1.36 text" "$tmp/out" 'Invalid value: \"2025-01-01T00:00:05Z\": field is immutable for unsuspended job once set'
expect_rc "unknown rule exits 2" 2 "$bin" check --disable-rule Nope "$cases/r-create-job/review.json"

# --disable-rule turns a denial into an allow
expect_rc "disable-rule allows" 0 "$bin" check --disable-rule ALWAYS-ManagedByImmutable "$cases/r-update-managedby-changed/review.json"

# --mode: warn and audit allow, with the denial's text as a warning or an annotation
R=$cases/r-update-managedby-changed/review.json
expect_rc "mode warn allows" 0 "$bin" check --explain --mode ALWAYS-ManagedByImmutable=warn "$R"
expect_grep "warning in the response, naming jobguard, the rule and what deny mode does" "$tmp/out" '"allowed":true,"warnings":["jobguard (ALWAYS-ManagedByImmutable, warn mode; denied in deny mode): spec.managedBy: Invalid value: \"kubernetes.io/job-controller\": field is immutable"]}}'
expect_grep "explain prints the warning as kubectl does" "$tmp/err" 'Warning: jobguard (ALWAYS-ManagedByImmutable, warn mode; denied in deny mode): spec.managedBy: Invalid value: "kubernetes.io/job-controller": field is immutable'
expect_rc "mode * audit allows" 0 "$bin" check --mode '*=audit' "$R"
expect_grep "audit annotation keyed by rule ID" "$tmp/out" '"allowed":true,"auditAnnotations":{"ALWAYS-ManagedByImmutable":"spec.managedBy: Invalid value: \"kubernetes.io/job-controller\": field is immutable"}}}'
expect_rc "later --mode wins" 1 "$bin" check --mode '*=off' --mode ALWAYS-ManagedByImmutable=deny "$R"
expect_rc "mode off allows" 0 "$bin" check --mode ALWAYS-ManagedByImmutable=off "$R"
expect_grep "off: nothing attached" "$tmp/out" '"allowed":true}}'
expect_rc "unknown mode exits 2" 2 "$bin" check --mode ALWAYS-ManagedByImmutable=block "$R"
expect_grep "unknown mode named" "$tmp/err" '--mode: "ALWAYS-ManagedByImmutable=block": expected ID=MODE, MODE one of deny, warn, audit, off'
expect_rc "mode of unknown rule exits 2" 2 "$bin" check --mode Nope=warn "$R"
expect_rc "mode without = exits 2" 2 "$bin" check --mode warn "$R"

# raw objects, as an external controller author has them
cat >"$tmp/old.json" <<'J'
{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"ns"},
 "spec":{"completions":5,"parallelism":5,"managedBy":"acme.io/ctl"},
 "status":{"startTime":"2025-01-01T00:00:00Z","active":2}}
J
cat >"$tmp/new.json" <<'J'
{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"ns"},
 "spec":{"completions":5,"parallelism":5,"managedBy":"acme.io/ctl"},
 "status":{"startTime":"2025-01-01T00:00:00Z","active":0,"succeeded":5,
  "conditions":[{"type":"Complete","status":"True"}]}}
J
expect_rc "raw status update denied" 1 "$bin" check --old "$tmp/old.json" --new "$tmp/new.json" --subresource status --explain
expect_grep "raw: completionTime required" "$tmp/err" 'The Job "j" is invalid: status.completionTime: Required value: completionTime is required for Complete jobs'
expect_grep "raw: SCM required" "$tmp/err" 'cannot set Complete=True condition without the SuccessCriteriaMet=true condition'
expect_rc "raw main update allowed" 0 "$bin" check --old "$tmp/old.json" --new "$tmp/new.json"
expect_rc "raw create allowed" 0 "$bin" check --new "$tmp/new.json"
sed 's#acme.io/ctl#acme.io#' "$tmp/new.json" >"$tmp/bad.json"
expect_rc "raw create with bad managedBy" 1 "$bin" check --new "$tmp/bad.json"
expect_grep "raw create message" "$tmp/out" 'must be a domain-prefixed path'
expect_rc "subresource without old" 2 "$bin" check --new "$tmp/new.json" --subresource status
expect_rc "unknown subresource" 2 "$bin" check --old "$tmp/old.json" --new "$tmp/new.json" --subresource scale
sed 's#"active":2#"active":"2"#' "$tmp/old.json" >"$tmp/wrongtype.json"
expect_rc "raw wrong type exits 2" 2 "$bin" check --old "$tmp/wrongtype.json" --new "$tmp/new.json" --subresource status
expect_grep "wrong type names the field" "$tmp/err" "old object.status.active: must be an integer (int32), got a string"

expect_rc "rules" 0 "$bin" rules
expect_grep "rules lists an upstream option" "$tmp/out" "RejectMutatingCompletionTime"
n=$(grep -c '^  field:' "$tmp/out")
if [ "$n" = 39 ]; then ok "rules prints 39 rules"; else bad "rules prints $n rules, want 39"; fi
expect_grep "rules lists the nested-copy rule" "$tmp/out" "Target-NestedManagedBy"
expect_grep "rules lists the delegation rule" "$tmp/out" "Target-DelegationUnsupported"
expect_grep "rules shows JobSet's nested path" "$tmp/out" "    nested copy:    spec.replicatedJobs[*].template.spec.managedBy (kubernetes.io/job-controller)"
expect_grep "rules shows the key of JobSet's replicatedJobs" "$tmp/out" "    list key:       spec.replicatedJobs[*] by name"
expect_grep "rules says JAXJob ignores the field" "$tmp/out" "    delegation:     unsupported (its controller ignores managedBy)"

# --- check --new/--old on CRD targets: the object's apiVersion and kind, or --kind/--resource ---
printf '{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"pt","namespace":"ml"},"spec":{"runPolicy":{"managedBy":"kueue.x-k8s.io/multikueue"}}}' >"$tmp/pt-old.json"
printf '{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"pt","namespace":"ml"},"spec":{"runPolicy":{}}}' >"$tmp/pt-new.json"
expect_rc "CRD CREATE from the object's apiVersion and kind" 0 "$bin" check --new "$tmp/pt-old.json"
expect_rc "CRD UPDATE removing managedBy is denied" 1 "$bin" check --explain --old "$tmp/pt-old.json" --new "$tmp/pt-new.json"
expect_grep "kubectl's line in the kind's own words" "$tmp/err" 'The PyTorchJob "pt" is invalid: spec.runPolicy.managedBy: Invalid value: null: field is immutable'
expect_grep "message names kind and group" "$tmp/out" '"message":"PyTorchJob.kubeflow.org \"pt\" is invalid: spec.runPolicy.managedBy: Invalid value: null: field is immutable"'
printf '{"metadata":{"name":"jx"},"spec":{"runPolicy":{"managedBy":"kueue.x-k8s.io/multikueue"}}}' >"$tmp/jax.json"
expect_rc "--kind KIND.GROUP names the target" 1 "$bin" check --kind JAXJob.kubeflow.org --new "$tmp/jax.json"
expect_grep "JAXJob delegation refused" "$tmp/out" "the local operator would still run the pods"
expect_rc "--resource RES.GROUP names the target" 1 "$bin" check --resource jaxjobs.kubeflow.org --new "$tmp/jax.json"
expect_grep "same answer by resource" "$tmp/out" "the local operator would still run the pods"
expect_rc "an unknown kind is refused" 2 "$bin" check --kind Widget.example.com --new "$tmp/jax.json"
expect_grep "the refusal names kind and group" "$tmp/err" 'new object: kind Widget of group "example.com" is not a target'
expect_rc "--kind needs --new" 2 "$bin" check --kind JobSet "$tmp/jax.json"
printf '{"controllers": [{"name": "kueue.x-k8s.io/multikueue", "statusWriters": {"users": ["system:serviceaccount:kueue-system:kueue-controller-manager"], "groups": ["kueue-admins"]}}]}' >"$tmp/writers.json"
expect_rc "status write by another user: 403" 1 "$bin" check --explain --policy-file "$tmp/writers.json" --user alice --subresource status --old "$tmp/pt-old.json" --new "$tmp/pt-old.json"
expect_grep "the 403 names user, kind and controller" "$tmp/err" 'Error from server (Forbidden): pytorchjobs.kubeflow.org "pt" is forbidden: User "alice" cannot update the status of a PyTorchJob managed by "kueue.x-k8s.io/multikueue"'
expect_rc "status write by the controller's service account" 0 "$bin" check --policy-file "$tmp/writers.json" --user system:serviceaccount:kueue-system:kueue-controller-manager --subresource status --old "$tmp/pt-old.json" --new "$tmp/pt-old.json"
expect_rc "status write by a member of a writer group" 0 "$bin" check --policy-file "$tmp/writers.json" --user bob --group dev --group kueue-admins --subresource status --old "$tmp/pt-old.json" --new "$tmp/pt-old.json"
expect_rc "status write by system:masters (break-glass)" 0 "$bin" check --policy-file "$tmp/writers.json" --user root --group system:masters --subresource status --old "$tmp/pt-old.json" --new "$tmp/pt-old.json"
expect_rc "--user needs --new" 2 "$bin" check --user alice "$tmp/jax.json"
expect_rc "rules --markdown" 0 "$bin" rules --markdown
expect_grep "markdown table" "$tmp/out" "| 1 | \`ALWAYS-ManagedByFormat\`"
expect_rc "--version" 0 "$bin" --version
expect_grep "version text" "$tmp/out" "jobguard "
expect_rc "--help" 0 "$bin" --help
expect_rc "check --help" 0 "$bin" check --help
expect_grep "check help documents exit codes" "$tmp/out" "0 allowed, 1 denied, 2 unreadable input"
expect_rc "rules --help" 0 "$bin" rules --help
expect_rc "unknown command" 2 "$bin" frobnicate
big=$cases/r-status-update-realistic/review.json
for level in scalar portable sse2 avx2; do
    expect_rc "JOBGUARD_SCANNER=$level decides as the default" 0 env JOBGUARD_SCANNER=$level "$bin" check "$big"
done
expect_rc "an unknown JOBGUARD_SCANNER is ignored" 0 env JOBGUARD_SCANNER=neon "$bin" check "$big"
expect_grep "and named on stderr" "$tmp/err" "jobguard: JOBGUARD_SCANNER=neon is not scalar, portable, sse2 or avx2; ignored"

finish

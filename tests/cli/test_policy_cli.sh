#!/usr/bin/env bash
# CLI contract of the policy file: `jobguard policy check|show` and `jobguard check --policy-file`
# (docs/policy.md): exit codes, the summary line, errors with file and position, the effective
# policy as JSON. Usage: test_policy_cli.sh JOBGUARD_BINARY CASES_DIR (tests/cases)
source "$(dirname "$0")/lib.sh"

json_get() { # file python-expression-on-d
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}
cat >"$tmp/policy.json" <<'J'
{
  "targets": [
    {"group": "workload.codeflare.dev", "versions": ["v1beta2"], "kind": "AppWrapper",
     "resource": "appwrappers", "managedByPath": "spec.managedBy",
     "reservedValue": "workload.codeflare.dev/appwrapper-controller", "checkFormat": false}
  ],
  "controllers": [{"name": "kueue.x-k8s.io/multikueue", "namespaces": ["team-*"]}],
  "allowUnlistedControllers": false,
  "modes": {"ALWAYS-ManagedByImmutable": "off"}
}
J
sha=$(sha256sum "$tmp/policy.json" | cut -d' ' -f1)

# --- policy check ---
expect_rc "policy check valid" 0 "$bin" policy check "$tmp/policy.json"
expect_grep "summary line" "$tmp/out" "$tmp/policy.json: valid: 1 target row (1 replacing a built-in), 1 controller, allowUnlistedControllers false, 1 rule not in deny mode, sha256 $sha"
expect_eq "summary is one line" "$(wc -l <"$tmp/out")" 1

printf '{\n  "controllers": [\n    {"name": "kueue.x-k8s.io/multikueue", "namespaces": ["Team-*"]}\n  ]\n}\n' >"$tmp/bad.json"
expect_rc "policy check invalid exits 2" 2 "$bin" policy check "$tmp/bad.json"
expect_grep "error names file, JSON path and problem" "$tmp/err" "jobguard policy check: $tmp/bad.json: controllers[0].namespaces[0]: \"Team-*\": character 'T' at byte 0 is not allowed"
expect_eq "nothing on stdout when invalid" "$(wc -c <"$tmp/out")" 0
printf '{\n  "modes": {"*": "warn",}\n}\n' >"$tmp/syntax.json"
expect_rc "policy check syntax error exits 2" 2 "$bin" policy check "$tmp/syntax.json"
expect_grep "syntax error has line:column" "$tmp/err" "$tmp/syntax.json:2:25: string or '}' expected near '}'"
expect_rc "policy check missing file" 2 "$bin" policy check "$tmp/nope.json"
expect_grep "missing file named" "$tmp/err" "$tmp/nope.json"
expect_rc "policy check a directory" 2 "$bin" policy check "$tmp"
expect_grep "directory refused" "$tmp/err" "is a directory"
expect_rc "policy without subcommand" 2 "$bin" policy
expect_rc "policy check without file" 2 "$bin" policy check
expect_rc "policy unknown subcommand" 2 "$bin" policy lint "$tmp/policy.json"
expect_rc "policy --help" 0 "$bin" policy --help
expect_grep "help names both subcommands" "$tmp/out" "jobguard policy show [FILE]"
expect_rc "top-level help" 0 "$bin" --help
expect_grep "top-level help lists policy" "$tmp/out" "  policy "

# a statusWriters binding for a kind's own reserved value: the status webhooks never send those
# writes, so policy check (and serve) refuse it, naming the rows (docs/policy.md)
printf '{"controllers": [{"name": "kueue.x-k8s.io/multikueue"}, {"name": "kubeflow.org/mpi-operator", "statusWriters": {"users": ["system:serviceaccount:mpi-operator:mpi-operator"]}}]}' >"$tmp/reserved.json"
expect_rc "a binding for a reserved value is refused" 2 "$bin" policy check "$tmp/reserved.json"
expect_grep "the refusal names the value and its row" "$tmp/err" \
    "controllers[1].statusWriters: \"kubeflow.org/mpi-operator\" is the reserved value of MPIJob.kubeflow.org: an object naming its own kind's controller is not delegated"
expect_rc "check --policy-file refuses it too (serve reads the file the same way)" 2 "$bin" check --policy-file "$tmp/reserved.json" "$cases/p07-status-writer-allowed/review.json"
expect_grep "  naming the policy problem" "$tmp/err" "controllers[1].statusWriters"
printf '{"controllers": [{"name": "kubernetes.io/job-controller"}], "allowUnlistedControllers": false}' >"$tmp/reserved-plain.json"
expect_rc "the reserved value without statusWriters is fine" 0 "$bin" policy check "$tmp/reserved-plain.json"

# lint warnings: valid files whose settings do not do what they seem (docs/policy.md "Lint
# warnings"); exit 0, or 1 with --strict
cat >"$tmp/lint.json" <<'J'
{"controllers": [
  {"name": "kueue.x-k8s.io/multikueue", "namespaces": ["team-*"]},
  {"name": "example.com/ctl", "statusWriters": {"users": ["kueue-controller-manager",
    "system:serviceaccount:kueue-system", "system:serviceaccount:kueue-system:kueue-controller-manager",
    "alice@example.com", "oidc:alice", "system:serviceaccount:Kueue:x"]}}]}
J
expect_rc "warnings keep exit 0" 0 "$bin" policy check "$tmp/lint.json"
expect_eq "summary and four warnings" "$(wc -l <"$tmp/out") $(grep -c '^warning: ' "$tmp/out")" "5 4"
expect_grep "an entry without statusWriters while allowUnlistedControllers is true" "$tmp/out" \
    'warning: controllers[0] "kueue.x-k8s.io/multikueue" has no effect: allowUnlistedControllers is true, so the controllers list is not an allow-list and every managedBy value is allowed; set "allowUnlistedControllers": false to allow only the listed controllers'
expect_grep "a bare service-account name" "$tmp/out" \
    'warning: controllers[1].statusWriters.users[0] "kueue-controller-manager" is a bare name: it matches only a user authenticated as exactly that name; a service account authenticates as system:serviceaccount:<namespace>:kueue-controller-manager'
expect_grep "a service account without its name" "$tmp/out" \
    'warning: controllers[1].statusWriters.users[1] "system:serviceaccount:kueue-system" can never match'
expect_grep "a service account with a namespace that is not one" "$tmp/out" \
    'warning: controllers[1].statusWriters.users[5] "system:serviceaccount:Kueue:x" can never match'
expect_rc "--strict turns warnings into exit 1" 1 "$bin" policy check --strict "$tmp/lint.json"
expect_grep "--strict says why" "$tmp/err" "jobguard policy check: --strict: 4 warnings"
expect_grep "  and still prints them" "$tmp/out" "warning: controllers[0]"
expect_rc "--strict after the file" 1 "$bin" policy check "$tmp/lint.json" --strict
expect_rc "--strict on a file without warnings" 0 "$bin" policy check --strict "$tmp/policy.json"
expect_rc "--strict on an invalid file is still 2" 2 "$bin" policy check --strict "$tmp/bad.json"
printf '{"controllers": [{"name": "x.io/a", "statusWriters": {"users": ["bad\\nname"]}}]}' >"$tmp/ctl.json"
expect_rc "a control byte in a user name" 0 "$bin" policy check "$tmp/ctl.json"
expect_eq "  is quoted, not written raw (no warning: not a bare name)" "$(wc -l <"$tmp/out")" 1
printf '{"controllers": [{"name": "x.io/a", "statusWriters": {"users": ["system:serviceaccount:a\\nb:c"]}}]}' >"$tmp/ctl.json"
expect_rc "a control byte in a malformed service account" 0 "$bin" policy check "$tmp/ctl.json"
expect_grep "  is %q-quoted on one line" "$tmp/out" 'users[0] "system:serviceaccount:a\nb:c" can never match'
expect_rc "unknown option" 2 "$bin" policy check --lenient "$tmp/lint.json"

# --- policy show ---
expect_rc "policy show defaults" 0 "$bin" policy show
cp "$tmp/out" "$tmp/defaults.json"
expect_eq "defaults: source" "$(json_get "$tmp/defaults.json" 'd["source"]')" "defaults (no policy file)"
expect_eq "defaults: built-in targets" "$(json_get "$tmp/defaults.json" '[(t["group"],t["versions"],t["kind"],t["resource"],t["managedByPath"],t["reservedValue"],t["source"]) for t in d["targets"][:2]]')" \
    "[('batch', ['v1'], 'Job', 'jobs', 'spec.managedBy', 'kubernetes.io/job-controller', 'built-in'), ('batch', ['v1'], 'CronJob', 'cronjobs', 'spec.jobTemplate.spec.managedBy', 'kubernetes.io/job-controller', 'built-in')]"
expect_eq "defaults: the CRD rows follow (docs/targets.md)" "$(json_get "$tmp/defaults.json" '[(t["kind"],t["versions"],t["reservedValue"]) for t in d["targets"][2:]][::8]')" \
    "[('JobSet', ['v1alpha2'], 'jobset.sigs.k8s.io/jobset-controller'), ('MPIJob', ['v1'], 'kubeflow.org/training-operator')]"
expect_eq "defaults: 16 CRD rows, Tekton last" "$(json_get "$tmp/defaults.json" '(len(d["targets"]), d["targets"][-1]["kind"], d["targets"][-1]["versions"], d["targets"][-1]["checkFormat"])')" \
    "(18, 'TaskRun', ['v1', 'v1beta1'], False)"
expect_eq "defaults: JobSet's replicatedJobs keyed by name, a path without lists has no keys" "$(json_get "$tmp/defaults.json" '[n["listKeys"] for t in d["targets"] if t["kind"] in ("JobSet","RayJob") for n in t["nestedPaths"]]')" \
    "[['name'], []]"
expect_eq "defaults: allowUnlistedControllers" "$(json_get "$tmp/defaults.json" 'd["allowUnlistedControllers"]')" "True"
expect_eq "defaults: exempt groups" "$(json_get "$tmp/defaults.json" 'd["statusWriterExemptGroups"]')" "['system:masters']"
nrules=$("$bin" rules | grep -c '^  field:')
expect_eq "defaults: a mode for every rule" "$(json_get "$tmp/defaults.json" 'len(d["modes"])')" "$nrules"
expect_eq "defaults: every mode deny" "$(json_get "$tmp/defaults.json" 'sorted(set(d["modes"].values()))')" "['deny']"

expect_rc "policy show FILE" 0 "$bin" policy show "$tmp/policy.json"
cp "$tmp/out" "$tmp/show.json"
expect_eq "show: sha256" "$(json_get "$tmp/show.json" 'd["sha256"]')" "$sha"
expect_eq "show: AppWrapper row replaced, Job and CronJob built-in" "$(json_get "$tmp/show.json" '[(t["kind"],t["source"],t["checkFormat"]) for t in d["targets"] if t["kind"] in ("Job","CronJob","AppWrapper")]')" \
    "[('Job', 'built-in', True), ('CronJob', 'built-in', True), ('AppWrapper', 'policy (replaces built-in)', False)]"
expect_eq "show: the other 15 CRD rows stay built-in" "$(json_get "$tmp/show.json" 'len([t for t in d["targets"] if t["source"] == "built-in" and t["group"] != "batch"])')" "15"
printf '{"targets": [{"group": "batch", "versions": ["v1"], "kind": "Job", "resource": "jobs", "managedByPath": "spec.managedBy", "reservedValue": "kubernetes.io/job-controller"}]}' >"$tmp/batch.json"
printf '{"targets": [{"group": "kubeflow.org", "versions": ["v1", "v2beta1"], "kind": "MPIJob", "resource": "mpijobs", "managedByPath": "spec.runPolicy.managedBy", "reservedValue": "kubeflow.org/mpi-operator"}, {"group": "example.com", "versions": ["v1"], "kind": "Widget", "resource": "widgets", "managedByPath": "spec.managedBy", "reservedValue": "example.com/widget-controller"}]}' >"$tmp/mpi.json"
expect_rc "a row for MPIJob (two built-in rows) is one replacing row" 0 "$bin" policy check "$tmp/mpi.json"
expect_grep "summary counts rows, not the built-in rows they replace" "$tmp/out" "valid: 2 target rows (1 replacing a built-in)"
# a controller name that fails the Job format (Tekton's free-form values): accepted while some row
# does not check the format, with a note naming the kinds that can carry it
printf '{"controllers": [{"name": "kueue.x-k8s.io/multikueue"}, {"name": "my-custom-controller"}]}' >"$tmp/free.json"
expect_rc "a free-form controller name is accepted" 0 "$bin" policy check "$tmp/free.json"
expect_eq "summary and one note (and the lint warnings of the two entries: no allow-list)" \
    "$(grep -c '^note: ' "$tmp/out") $(grep -c '^warning: controllers\[[01]\] .* has no effect' "$tmp/out")" "1 2"
expect_grep "the note names the kinds that can carry it and those that refuse it" "$tmp/out" \
    'note: controllers[1].name "my-custom-controller" is not a valid managedBy value: only PipelineRun.tekton.dev, TaskRun.tekton.dev can carry it (checkFormat false); the format check refuses it on Job.batch, CronJob.batch, JobSet.jobset.x-k8s.io,'
printf '{"targets": [{"group": "tekton.dev", "versions": ["v1"], "kind": "PipelineRun", "resource": "pipelineruns", "managedByPath": "spec.managedBy", "reservedValue": "tekton.dev/pipeline"}, {"group": "tekton.dev", "versions": ["v1"], "kind": "TaskRun", "resource": "taskruns", "managedByPath": "spec.managedBy", "reservedValue": "tekton.dev/pipeline", "checkFormat": true}], "controllers": [{"name": "my-custom-controller"}]}' >"$tmp/free-checked.json"
expect_rc "refused once every row checks the format" 2 "$bin" policy check "$tmp/free-checked.json"
expect_grep "the refusal says why" "$tmp/err" 'controllers[0].name: Invalid value: "my-custom-controller": must be a domain-prefixed path (such as "acme.io/foo") (every target row checks the format, so no object can carry this name)'
expect_rc "a batch Job row is refused" 2 "$bin" policy check "$tmp/batch.json"
expect_grep "refusal says why" "$tmp/err" "targets[0].kind: batch Job is the API server's own kind: its rules are Kubernetes' and its row cannot be replaced"
expect_eq "show: controller" "$(json_get "$tmp/show.json" 'd["controllers"]')" "[{'name': 'kueue.x-k8s.io/multikueue', 'namespaces': ['team-*']}]"
expect_eq "show: mode override" "$(json_get "$tmp/show.json" 'd["modes"]["ALWAYS-ManagedByImmutable"]+","+d["modes"]["ALWAYS-ManagedByFormat"]')" "off,deny"
expect_rc "policy show invalid" 2 "$bin" policy show "$tmp/bad.json"
expect_grep "show names the problem" "$tmp/err" "controllers[0].namespaces[0]"

# --- jobguard rules lists the targets after the rules ---
expect_rc "rules" 0 "$bin" rules
expect_eq "rules: Job target" "$(grep -A2 '^  batch/v1 Job (jobs)$' "$tmp/out")" "$(printf '%s\n' '  batch/v1 Job (jobs)' \
    '    managedBy:      spec.managedBy' '    reserved value: kubernetes.io/job-controller')"
expect_eq "rules: CronJob target" "$(grep -A2 '^  batch/v1 CronJob (cronjobs)$' "$tmp/out")" "$(printf '%s\n' '  batch/v1 CronJob (cronjobs)' \
    '    managedBy:      spec.jobTemplate.spec.managedBy' '    reserved value: kubernetes.io/job-controller')"

# --- check --policy-file ---
review=$cases/r-update-managedby-changed/review.json
expect_rc "without policy: immutable denies" 1 "$bin" check "$review"
expect_rc "policy mode off allows" 0 "$bin" check --policy-file "$tmp/policy.json" "$review"
expect_grep "allowed response" "$tmp/out" '"allowed":true'
printf '{"modes": {"*": "off", "ALWAYS-ManagedByImmutable": "deny"}}' >"$tmp/deny.json"
expect_rc "policy mode deny still denies" 1 "$bin" check --policy-file "$tmp/deny.json" "$review"
expect_grep "denied with the immutable message" "$tmp/out" "field is immutable"
expect_rc "--disable-rule wins over a deny mode" 0 "$bin" check --disable-rule ALWAYS-ManagedByImmutable --policy-file "$tmp/deny.json" "$review"
expect_rc "--disable-rule after --policy-file too" 0 "$bin" check --policy-file "$tmp/deny.json" --disable-rule ALWAYS-ManagedByImmutable "$review"
expect_rc "--mode wins over the file's deny (warn: allowed)" 0 "$bin" check --mode ALWAYS-ManagedByImmutable=warn --policy-file "$tmp/deny.json" "$review"
expect_grep "the immutable error comes back as a warning" "$tmp/out" '"warnings":["jobguard (ALWAYS-ManagedByImmutable, warn mode; denied in deny mode): spec.managedBy: Invalid value: \"kubernetes.io/job-controller\": field is immutable"]'
expect_rc "--mode before or after the file alike; the file's other modes still apply" 0 "$bin" check --policy-file "$tmp/policy.json" --mode 'RejectDecreasingFailedCounter=deny' "$review"
expect_rc "--mode deny wins over the file's off" 1 "$bin" check --policy-file "$tmp/policy.json" --mode ALWAYS-ManagedByImmutable=deny "$review"
expect_rc "--disable-rule wins over --mode and the file" 0 "$bin" check --mode ALWAYS-ManagedByImmutable=deny --disable-rule ALWAYS-ManagedByImmutable --policy-file "$tmp/deny.json" "$review"
expect_rc "check --policy-file invalid exits 2" 2 "$bin" check --policy-file "$tmp/bad.json" "$review"
expect_grep "check names the policy problem" "$tmp/err" "jobguard check: --policy-file: $tmp/bad.json: controllers[0].namespaces[0]"
expect_eq "no response printed for an invalid policy" "$(wc -c <"$tmp/out")" 0
expect_rc "check --policy-file without value" 2 "$bin" check --policy-file
expect_rc "check --help documents --policy-file" 0 "$bin" check --help
expect_grep "check help" "$tmp/out" "--policy-file FILE"

# YAML policy files, and the policy block of a Helm values file (the chart's install hook check).
printf 'allowUnlistedControllers: no\ncontrollers:\n- name: example.com/ctl\n  namespaces: [team-a]\n' >"$tmp/policy.yaml"
printf '{"allowUnlistedControllers":false,"controllers":[{"name":"example.com/ctl","namespaces":["team-a"]}]}' >"$tmp/same.json"
expect_rc "policy check reads YAML (no: false, as kubectl)" 0 "$bin" policy check "$tmp/policy.yaml"
expect_grep "YAML policy: 1 controller, allowUnlistedControllers false" "$tmp/out" "1 controller, allowUnlistedControllers false"
"$bin" policy show "$tmp/policy.yaml" | grep -v sha256 >"$tmp/show-yaml"
"$bin" policy show "$tmp/same.json" | grep -v sha256 >"$tmp/show-json"
expect_eq "a YAML policy is the same policy as its JSON" "$(cmp -s "$tmp/show-yaml" "$tmp/show-json" && echo same)" same
printf 'allowUnlistedControllers: [\n' >"$tmp/broken.yaml"
printf 'just text\n' >"$tmp/scalar.yaml"
expect_rc "a YAML policy that is not a mapping exits 2" 2 "$bin" policy check "$tmp/scalar.yaml"
expect_grep "a YAML scalar policy is named as such" "$tmp/err" "jobguard policy check: $tmp/scalar.yaml: the policy must be a mapping (an object), not a scalar"
expect_rc "a YAML syntax error exits 2" 2 "$bin" policy check "$tmp/broken.yaml"
expect_grep "a YAML syntax error names file, line and column" "$tmp/err" "jobguard policy check: $tmp/broken.yaml:2:1: did not find expected node content (while parsing a flow node at line 2, column 1)"
printf 'image: {tag: x}\npolicy:\n  allowUnlistedControllers: no\n  controllers:\n  - name: example.com/ctl\n    namespaces: [team-a]\n' >"$tmp/values.yaml"
expect_rc "policy check --values takes the chart's policy block" 0 "$bin" policy check --values "$tmp/values.yaml"
expect_grep "--values: the block's controller" "$tmp/out" "1 controller, allowUnlistedControllers false"
printf 'policy:\n  allowUnlistedControllers: 3\n' >"$tmp/values-bad.yaml"
expect_rc "--values: an invalid block exits 2" 2 "$bin" policy check --values "$tmp/values-bad.yaml"
expect_grep "--values: the problem names the block" "$tmp/err" "jobguard policy check: $tmp/values-bad.yaml (.policy): allowUnlistedControllers: must be true or false, not a number"
printf 'image: {tag: x}\n' >"$tmp/values-none.yaml"
expect_rc "--values without a policy block is valid: the chart installs none" 0 "$bin" policy check --values "$tmp/values-none.yaml"
expect_grep "--values without a policy block says so" "$tmp/out" "$tmp/values-none.yaml: no policy block (.policy is absent or empty): the chart installs no policy file, and jobguard runs with its built-in defaults (every rule in deny mode)"
printf 'policy: [a]\n' >"$tmp/values-list.yaml"
expect_rc "--values: a policy that is not a mapping exits 2" 2 "$bin" policy check --values "$tmp/values-list.yaml"
expect_grep "--values: says what .policy must be" "$tmp/err" "jobguard policy check: $tmp/values-list.yaml: .policy must be an object (the policy file's members)"
printf -- '- a\n' >"$tmp/values-seq.yaml"
expect_rc "--values: a values file that is not a mapping exits 2" 2 "$bin" policy check --values "$tmp/values-seq.yaml"
expect_grep "--values: says a values file is a mapping" "$tmp/err" "jobguard policy check: $tmp/values-seq.yaml: a values file is a YAML mapping (got another kind of document)"

finish

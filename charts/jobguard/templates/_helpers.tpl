{{- /*
Values that earlier charts' values.yaml did not have, with the defaults of this chart's values.yaml.
`helm upgrade --reuse-values` renders the new templates over the old chart's values, and a values file
copied from an old `helm show values` lacks them too; every template starts by merging these in (a key
that is set, to anything, keeps its value), so that such a render gets today's defaults. The chart tests
render over every earlier values.yaml of the repository's history and compare the webhooks with a
fresh render. Add a key here whenever values.yaml gains one.
*/}}
{{- define "jobguard.defaults" -}}
{{- $targets := dict }}
{{- range $k, $_ := include "jobguard.targetTable" . | fromYaml }}{{ $_ := set $targets $k (dict "enabled" true "matchConditions" list) }}{{ end }}
{{- include "jobguard.fillMissing" (list .Values (dict
  "enforcement" "webhook"
  "vap" (dict "manifests" "")
  "policy" dict
  "policyCheck" (dict "enabled" true "activeDeadlineSeconds" 120 "resources" (dict "requests" (dict "cpu" "10m" "memory" "16Mi") "limits" (dict "memory" "64Mi")))
  "metrics" (dict
    "zeroSeries" true
    "prometheusRule" (dict "enabled" false "labels" dict "selector" "" "for" "5m" "certificateExpiryWarningDays" 14 "certificateExpiryCriticalDays" 3 "errorRatio" 0.05 "latencySeconds" 0.5 "denialsPer15m" 10
      "apiServerSelector" "job=\"apiserver\"" "apiServerFor" "5m" "apiServerLatencyRatio" 0.5 "vapPolicyRegex" "jobguard-.*")
    "dashboard" (dict "enabled" false "labels" (dict "grafana_dashboard" "1") "annotations" dict))
  "webhook" (dict
    "failurePolicy" (dict "jobs" "" "targets" "" "status" "")
    "bootstrap" true
    "jobs" (dict "enabled" true "matchConditions" list "cronJobs" true "cronJobName" "cronjobs.jobguard.io" "cronJobMatchConditions" list)
    "status" (dict "matchConditions" list))
  "targets" $targets
  "certificates" (dict "helm" (dict "newCA" false))
  "test" (dict "caSource" "webhookConfiguration")
  "kueue" (dict "configMap" "kueue-system/kueue-manager-config"))) }}
{{- end }}

{{- /* (list DST SRC): sets each key of the map SRC that the map DST lacks, recursively into maps both
have. Unlike sprig's merge it keeps a false, 0 or "" that DST holds. Prints nothing. */}}
{{- define "jobguard.fillMissing" -}}
{{- $dst := index . 0 }}
{{- range $k, $v := index . 1 }}
{{- if not (hasKey $dst $k) }}{{ $_ := set $dst $k $v }}
{{- else if and (kindIs "map" $v) (kindIs "map" (index $dst $k)) }}{{ include "jobguard.fillMissing" (list (index $dst $k) $v) }}
{{- end }}
{{- end }}
{{- end }}

{{/* Chart name, truncated to 63 characters (a DNS label). */}}
{{- define "jobguard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: <release>-<chart>, or the release name alone when it already contains the chart name.
Truncated to 50 characters so that suffixes like "-metrics" and "-selfsigned" still fit in 63.
*/}}
{{- define "jobguard.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "jobguard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "jobguard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "jobguard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "jobguard.labels" -}}
helm.sh/chart: {{ include "jobguard.chart" . }}
{{ include "jobguard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: jobguard
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "jobguard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "jobguard.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The webhook Service's DNS name, as the API server calls it and as the certificate names it. */}}
{{- define "jobguard.serviceDNS" -}}
{{- printf "%s.%s.svc" (include "jobguard.fullname" .) .Release.Namespace }}
{{- end }}

{{/* Name of the kubernetes.io/tls Secret the pods mount. */}}
{{- define "jobguard.tlsSecretName" -}}
{{- if eq .Values.certificates.mode "existingSecret" }}
{{- required "certificates.existingSecret.name is required when certificates.mode is existingSecret" .Values.certificates.existingSecret.name }}
{{- else }}
{{- default (printf "%s-tls" (include "jobguard.fullname" .)) .Values.certificates.secretName }}
{{- end }}
{{- end }}

{{/* Name of the cert-manager Certificate for the serving certificate (certManager mode). */}}
{{- define "jobguard.servingCertificateName" -}}
{{- printf "%s-serving" (include "jobguard.fullname" .) }}
{{- end }}

{{- define "jobguard.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Render-time checks that the schema cannot express. */}}
{{- define "jobguard.validate" -}}
{{- $s := .Values.server }}
{{- $min := add $s.shutdownDelaySeconds $s.drainTimeoutSeconds }}
{{- if le (int64 .Values.terminationGracePeriodSeconds) (int64 $min) }}
{{- fail (printf "terminationGracePeriodSeconds (%v) must be greater than server.shutdownDelaySeconds + server.drainTimeoutSeconds (%v), or Kubernetes kills jobguard while it still serves" .Values.terminationGracePeriodSeconds $min) }}
{{- end }}
{{- if eq .Values.certificates.mode "existingSecret" }}
{{- $_ := required "certificates.existingSecret.caBundle is required when certificates.mode is existingSecret (base64 PEM CA; certs/generate.sh prints it)" .Values.certificates.existingSecret.caBundle }}
{{- end }}
{{- include "jobguard.memoryCheck" . }}
{{- if and .Values.server.clientAuth.enabled (not .Values.server.clientAuth.caSecretName) }}
{{- fail "server.clientAuth.caSecretName is required when server.clientAuth.enabled is true" }}
{{- end }}
{{- $w := .Values.webhook }}
{{- range $g, $former := dict "jobs" "Fail" "targets" "Fail" "status" "Ignore" }}
{{- $old := dig $g "failurePolicy" "" $w }}
{{- if and $old (ne $old $former) }}
{{- fail (printf "webhook.%s.failurePolicy is no longer read: set webhook.failurePolicy.%s: %s instead (\"\" follows the rule modes; docs/modes.md)" $g $g $old) }}
{{- end }}
{{- end }}
{{- if and $w.jobs.enabled $w.jobs.cronJobs (eq $w.jobs.name $w.jobs.cronJobName) }}
{{- fail "webhook.jobs.name and webhook.jobs.cronJobName must differ" }}
{{- end }}
{{- if and $w.jobs.enabled $w.status.enabled (eq $w.jobs.name $w.status.name) }}
{{- fail "webhook.jobs.name and webhook.status.name must differ" }}
{{- end }}
{{- end }}

{{- /*
One entry of the ValidatingWebhookConfiguration's webhooks: {name, group, versions, resource (with
its /subresource), operations, failurePolicy, objectSelector, matchConditions, clientConfig,
namespaceSelector, timeoutSeconds}. Fails on a matchCondition name used twice in the webhook and on
more than the API server's 64 conditions.
*/}}
{{- define "jobguard.webhook" }}
- name: {{ .name }}
  admissionReviewVersions: ["v1", "v1beta1"]
  clientConfig:
    {{- toYaml .clientConfig | nindent 4 }}
  rules:
    - apiGroups: [{{ .group | quote }}]
      apiVersions: {{ toJson .versions }}
      operations: {{ toJson .operations }}
      resources: [{{ .resource | quote }}]
      scope: Namespaced
  failurePolicy: {{ .failurePolicy }}
  matchPolicy: Equivalent
  sideEffects: None
  timeoutSeconds: {{ .timeoutSeconds }}
  namespaceSelector:
    {{- toYaml .namespaceSelector | nindent 4 }}
  {{- with .objectSelector }}
  objectSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- $seen := dict }}
  {{- range .matchConditions }}
  {{- if hasKey $seen .name }}
  {{- fail (printf "matchConditions: the name %q is used twice in webhook %s" .name $.name) }}
  {{- end }}
  {{- $_ := set $seen .name true }}
  {{- end }}
  {{- if gt (len .matchConditions) 64 }}
  {{- fail (printf "matchConditions: webhook %s would have %d, the API server allows 64" .name (len .matchConditions)) }}
  {{- end }}
  {{- with .matchConditions }}
  matchConditions:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}

{{- /*
The exemptions of every webhook, as YAML {namespaces: [names never sent: webhook.excludedNamespaces and,
with webhook.excludeReleaseNamespace, the release namespace], expressions: [webhook.
namespaceSelectorExpressions: a namespace is sent only when its labels match all of them]}. The
webhooks' namespaceSelector is built from it (jobguard.namespaceSelector); NOTES prints it.
*/}}
{{- define "jobguard.exemptions" -}}
{{- $excluded := list }}
{{- range .Values.webhook.excludedNamespaces }}
{{- $excluded = append $excluded . }}
{{- end }}
{{- if and .Values.webhook.excludeReleaseNamespace (not (has .Release.Namespace $excluded)) }}
{{- $excluded = append $excluded .Release.Namespace }}
{{- end }}
{{- toYaml (dict "namespaces" $excluded "expressions" (.Values.webhook.namespaceSelectorExpressions | default list)) }}
{{- end }}

{{/* namespaceSelector shared by every webhook (jobguard.exemptions). */}}
{{- define "jobguard.namespaceSelector" -}}
{{- $ex := include "jobguard.exemptions" . | fromYaml }}
{{- $exprs := list }}
{{- if $ex.namespaces }}
{{- $exprs = append $exprs (dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" $ex.namespaces) }}
{{- end }}
{{- range $ex.expressions }}
{{- $exprs = append $exprs . }}
{{- end }}
{{- if $exprs }}
matchExpressions:
{{- toYaml $exprs | nindent 2 }}
{{- else -}}
{}
{{- end }}
{{- end }}

{{/* The exempt namespaces in words, for NOTES: the names, then the label condition a namespace must meet to be sent. */}}
{{- define "jobguard.exemptNamespaces" -}}
{{- $ex := include "jobguard.exemptions" . | fromYaml }}
{{- if $ex.namespaces }}{{ join ", " $ex.namespaces }}{{ else }}none by name{{ end }}
{{- with $ex.expressions }}; and every namespace whose labels do not match {{ toJson . }}{{ end }}
{{- end }}

{{- /* Built-in CRD targets (src/engine/targets.c): kind, group, served versions, plural, managedBy path,
reserved values and nested paths, as jobguard's rows (`jobguard policy show`; tests/chart/rows.mjs checks
that they agree). The status webhook filters on the path whose value jobguard binds status writers to;
the kind's CREATE/UPDATE webhook on that path and every nested one. mpijob is both built-in MPIJob rows
(v2beta1 and v1) in one. */}}
{{- define "jobguard.targetTable" }}
jobset: {kind: JobSet, group: jobset.x-k8s.io, versions: ["v1alpha2"], resource: jobsets, path: spec.managedBy, reserved: ["jobset.sigs.k8s.io/jobset-controller"], nested: ["spec.replicatedJobs[*].template.spec.managedBy"]}
trainjob: {kind: TrainJob, group: trainer.kubeflow.org, versions: ["v1alpha1"], resource: trainjobs, path: spec.managedBy, reserved: ["trainer.kubeflow.org/trainjob-controller"], nested: []}
pytorchjob: {kind: PyTorchJob, group: kubeflow.org, versions: ["v1"], resource: pytorchjobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"], nested: []}
tfjob: {kind: TFJob, group: kubeflow.org, versions: ["v1"], resource: tfjobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"], nested: []}
xgboostjob: {kind: XGBoostJob, group: kubeflow.org, versions: ["v1"], resource: xgboostjobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"], nested: []}
paddlejob: {kind: PaddleJob, group: kubeflow.org, versions: ["v1"], resource: paddlejobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"], nested: []}
jaxjob: {kind: JAXJob, group: kubeflow.org, versions: ["v1"], resource: jaxjobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"], nested: []}
mpijob: {kind: MPIJob, group: kubeflow.org, versions: ["v1", "v2beta1"], resource: mpijobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator", "kubeflow.org/mpi-operator"], nested: []}
rayjob: {kind: RayJob, group: ray.io, versions: ["v1"], resource: rayjobs, path: spec.managedBy, reserved: ["ray.io/kuberay-operator"], nested: ["spec.rayClusterSpec.managedBy"]}
raycluster: {kind: RayCluster, group: ray.io, versions: ["v1"], resource: rayclusters, path: spec.managedBy, reserved: ["ray.io/kuberay-operator"], nested: []}
rayservice: {kind: RayService, group: ray.io, versions: ["v1"], resource: rayservices, path: spec.managedBy, reserved: ["ray.io/kuberay-operator"], nested: ["spec.rayClusterConfig.managedBy"]}
raycronjob: {kind: RayCronJob, group: ray.io, versions: ["v1"], resource: raycronjobs, path: spec.managedBy, reserved: ["ray.io/kuberay-operator"], nested: ["spec.jobTemplate.managedBy", "spec.jobTemplate.rayClusterSpec.managedBy"]}
appwrapper: {kind: AppWrapper, group: workload.codeflare.dev, versions: ["v1beta2"], resource: appwrappers, path: spec.managedBy, reserved: ["workload.codeflare.dev/appwrapper-controller"], nested: []}
pipelinerun: {kind: PipelineRun, group: tekton.dev, versions: ["v1", "v1beta1"], resource: pipelineruns, path: spec.managedBy, reserved: ["tekton.dev/pipeline"], nested: []}
taskrun: {kind: TaskRun, group: tekton.dev, versions: ["v1", "v1beta1"], resource: taskruns, path: spec.managedBy, reserved: ["tekton.dev/pipeline"], nested: []}
{{- end }}

{{- /*
CEL over the paths jobguard reads, for the matchConditions (docs/webhooks.md). Input: {paths: [..],
reserved: [..] (optional)}. Each path is field names joined by dots, a name followed by [*] being a
list whose every element is walked. Without reserved, the expression is true when object or oldObject
has a non-null value at one of the paths: every rule jobguard has for a CREATE/UPDATE needs one.
With reserved (one path, the status webhooks), when that value is also none of the reserved values.
It is also true when a value on the way has a type jobguard refuses (a string where an object or a
list is read): jobguard answers those with a 400, so they must reach it. Type guards come first, so
the expression never errors (an error would follow the webhook's failurePolicy). A segment that is a
CEL reserved word or not an identifier is read with 'seg' in x / x['seg'].
*/}}
{{- define "jobguard.managedByCEL" -}}
{{- $celReserved := list "as" "break" "const" "continue" "else" "false" "for" "function" "if" "import" "in" "let" "loop" "namespace" "null" "package" "return" "true" "var" "void" "while" }}
{{- $quoted := list }}
{{- range $v := (.reserved | default list) }}
{{- $quoted = append $quoted (printf "'%s'" ($v | replace "\\" "\\\\" | replace "'" "\\'" | replace "\n" "\\n" | replace "\r" "\\r")) }}
{{- end }}
{{- $perRoot := list }}
{{- range $root := list "object" "oldObject" }}
{{- $alts := list }}
{{- range $path := $.paths }}
{{- $levels := list }}{{ $acc := $root }}
{{- range $i, $seg := splitList "." $path }}
{{- $f := trimSuffix "[*]" $seg }}
{{- $has := "" }}{{ $sel := "" }}
{{- if and (regexMatch "^[A-Za-z_][A-Za-z0-9_]*$" $f) (not (has $f $celReserved)) }}
{{- $has = printf "has(%s.%s)" $acc $f }}{{ $sel = printf "%s.%s" $acc $f }}
{{- else }}
{{- $has = printf "'%s' in %s" $f $acc }}{{ $sel = printf "%s['%s']" $acc $f }}
{{- end }}
{{- $var := printf "e%d" $i }}
{{- $levels = append $levels (dict "acc" $acc "has" $has "sel" $sel "list" (hasSuffix "[*]" $seg) "var" $var "guard" (ne $i 0)) }}
{{- $acc = ternary $var $sel (hasSuffix "[*]" $seg) }}
{{- end }}
{{- $r := "" }}
{{- range $j := until (len $levels) }}
{{- $l := index $levels (sub (len $levels) (add $j 1)) }}
{{- $in := printf "%s && %s != null" $l.has $l.sel }}
{{- if $l.list }}
{{- $in = printf "%s && (type(%s) != list || %s.exists(%s, %s != null%s))" $in $l.sel $l.sel $l.var $l.var (ternary (printf " && %s" $r) "" (ne $r "")) }}
{{- else if $r }}
{{- $in = printf "%s && %s" $in $r }}
{{- else if $quoted }}
{{- $in = printf "%s && !(%s in [%s])" $in $l.sel (join ", " $quoted) }}
{{- end }}
{{- $r = ternary (printf "(type(%s) != map || (%s))" $l.acc $in) $in $l.guard }}
{{- end }}
{{- $alts = append $alts (printf "(%s)" $r) }}
{{- end }}
{{- $perRoot = append $perRoot (printf "(%s != null && (%s))" $root (join " || " $alts)) }}
{{- end }}
{{- join " || " $perRoot }}
{{- end }}

{{- /*
The CRD target rows the chart registers, as {rows: [...]} in YAML; each row is {key (the targets.<key>
entry, "" for a policy row of its own), name (of its CREATE/UPDATE webhook), statusName (of its status
webhook), group, versions, resource, sendExpr (the CREATE/UPDATE webhook's matchCondition: managedBy
at the row's path or a nested path, in the new or the old object), expr (the status webhook's: managedBy
at the row's path and not a reserved value)}. First the enabled built-in kinds of .Values.targets, in
key order, named <key>.jobguard.io and <key>-status.jobguard.io; a policy row with the same group and
kind replaces that kind's data (the kind keeps its names, its enabled toggle and its matchConditions).
Then the policy file's other target rows, in file order, named <resource>.<group>.jobguard.io and
<resource>.<group>.status.jobguard.io (<resource>.jobguard.io, <resource>.status.jobguard.io for the core
group; the group as the first 16 hex digits of its sha256 when a name would pass 253 bytes). Fails, as
jobguard does, on a row for batch Job or CronJob (the jobs webhooks send those), and on two rows for one
group and resource or a webhook name used twice.
*/}}
{{- define "jobguard.targetRows" }}
{{- $table := include "jobguard.targetTable" . | fromYaml }}
{{- $policyRows := (.Values.policy | default dict).targets | default list }}
{{- $byKind := dict }}
{{- range $p := $policyRows }}{{ $_ := set $byKind (printf "%s/%s" $p.group $p.kind) $p }}{{ end }}
{{- $builtin := dict }}
{{- $rows := list }}
{{- range $n, $t := $table }}
{{- $key := printf "%s/%s" $t.group $t.kind }}
{{- $_ := set $builtin $key $n }}
{{- if (index $.Values.targets $n).enabled }}
{{- $row := dict "key" $n "name" (printf "%s.jobguard.io" $n) "statusName" (printf "%s-status.jobguard.io" $n) "group" $t.group "versions" $t.versions "resource" $t.resource "path" $t.path "reserved" $t.reserved "nested" $t.nested "from" (printf "targets.%s" $n) }}
{{- with index $byKind $key }}
{{- $nested := list }}{{ range .nestedPaths }}{{ $nested = append $nested .path }}{{ end }}
{{- $row = dict "key" $n "name" (printf "%s.jobguard.io" $n) "statusName" (printf "%s-status.jobguard.io" $n) "group" .group "versions" .versions "resource" .resource "path" .managedByPath "reserved" (list .reservedValue) "nested" $nested "from" (printf "policy.targets (%s, replacing targets.%s)" $key $n) }}
{{- end }}
{{- $rows = append $rows $row }}
{{- end }}
{{- end }}
{{- range $i, $p := $policyRows }}
{{- $key := printf "%s/%s" $p.group $p.kind }}
{{- if has $key (list "batch/Job" "batch/CronJob") }}
{{- fail (printf "policy.targets[%d]: batch %s is the API server's own kind: its rules are Kubernetes' and its row cannot be replaced (the jobs webhooks send it)" $i $p.kind) }}
{{- end }}
{{- if not (hasKey $builtin $key) }}
{{- $g := $p.group }}
{{- if gt (len (printf "%s.%s.status.jobguard.io" $p.resource $g)) 253 }}{{ $g = sha256sum $p.group | trunc 16 }}{{ end }}
{{- $base := ternary (printf "%s.%s" $p.resource $g) $p.resource (ne $g "") }}
{{- $nested := list }}{{ range $p.nestedPaths }}{{ $nested = append $nested .path }}{{ end }}
{{- $rows = append $rows (dict "key" "" "name" (printf "%s.jobguard.io" $base) "statusName" (printf "%s.status.jobguard.io" $base) "group" $p.group "versions" $p.versions "resource" $p.resource "path" $p.managedByPath "reserved" (list $p.reservedValue) "nested" $nested "from" (printf "policy.targets (%s)" $key)) }}
{{- end }}
{{- end }}
{{- $w := .Values.webhook }}
{{- $resources := dict "batch/jobs" "the jobs webhook" "batch/cronjobs" "the jobs webhook" }}
{{- $names := dict }}
{{- if $w.jobs.enabled }}
{{- $_ := set $names $w.jobs.name "webhook.jobs.name" }}
{{- if $w.jobs.cronJobs }}{{ $_ := set $names $w.jobs.cronJobName "webhook.jobs.cronJobName" }}{{ end }}
{{- end }}
{{- if $w.status.enabled }}
{{- with index $names $w.status.name }}{{ fail (printf "webhook.status.name %s is already used by %s" $w.status.name .) }}{{ end }}
{{- $_ := set $names $w.status.name "webhook.status.name" }}
{{- end }}
{{- $out := list }}
{{- range $r := $rows }}
{{- $gr := printf "%s/%s" $r.group $r.resource }}
{{- with index $resources $gr }}
{{- fail (printf "%s: resource %q of group %q is already sent by %s (one resource cannot be two target kinds)" $r.from $r.resource $r.group .) }}
{{- end }}
{{- $_ := set $resources $gr $r.from }}
{{- $mine := list $r.name }}
{{- if $w.status.enabled }}{{ $mine = append $mine $r.statusName }}{{ end }}
{{- range $nm := $mine }}
{{- with index $names $nm }}
{{- fail (printf "%s: its webhook name %s is already used by %s" $r.from $nm .) }}
{{- end }}
{{- $_ := set $names $nm $r.from }}
{{- end }}
{{- if not (regexMatch "^[A-Za-z_][A-Za-z0-9_-]*(\\.[A-Za-z_][A-Za-z0-9_-]*)*$" $r.path) }}
{{- fail (printf "%s: managedByPath %q must be field names joined by dots, without [*] (the status webhook's CEL matchCondition reads it)" $r.from $r.path) }}
{{- end }}
{{- range $r.nested }}
{{- if not (regexMatch "^([A-Za-z_][A-Za-z0-9_-]*(\\[\\*\\])?\\.)*[A-Za-z_][A-Za-z0-9_-]*$" .) }}
{{- fail (printf "%s: nested path %q must be field names joined by dots, a list marked with [*]" $r.from .) }}
{{- end }}
{{- end }}
{{- $sendExpr := include "jobguard.managedByCEL" (dict "paths" (prepend $r.nested $r.path)) }}
{{- $expr := include "jobguard.managedByCEL" (dict "paths" (list $r.path) "reserved" $r.reserved) }}
{{- $mc := list }}
{{- if $r.key }}{{ $mc = (index $.Values.targets $r.key).matchConditions | default list }}{{ end }}
{{- $out = append $out (dict "key" $r.key "name" $r.name "statusName" $r.statusName "group" $r.group "versions" $r.versions "resource" $r.resource "sendExpr" $sendExpr "expr" $expr "matchConditions" $mc "from" $r.from) }}
{{- end }}
{{ toYaml (dict "rows" $out) }}
{{- end }}

{{- /*
The rules each webhook can refuse a request with (`jobguard rules`; docs/webhooks.md, "Why nothing
jobguard would refuse is left out"), by webhook group: jobs (Job CREATE/UPDATE), cronjobs, jobsStatus
(jobs/status), targets (a CRD kind's CREATE/UPDATE), targetsStatus (<resource>/status). The chart tests
check that every rule ID of the values schema is in one of them.
*/}}
{{- define "jobguard.webhookRules" }}
jobs: [ALWAYS-ManagedByFormat, ALWAYS-ManagedByLength, ALWAYS-ManagedByImmutable, Policy-AllowedControllers]
cronjobs: [ALWAYS-ManagedByFormat, ALWAYS-ManagedByLength, Policy-AllowedControllers]
jobsStatus: [Policy-StatusWriters, ALWAYS-NonNeg, ALWAYS-UncountedEmpty, ALWAYS-UncountedDup, RejectCompleteJobWithFailedCondition, RejectCompleteJobWithFailureTargetCondition, RejectNotCompleteJobWithCompletionTime, RejectCompleteJobWithoutCompletionTime, RejectCompletionTimeBeforeStartTime, RejectFailedJobWithoutFailureTarget, RejectCompleteJobWithoutSuccessCriteriaMet, RejectFinishedJobWithActivePods, RejectFinishedJobWithoutStartTime, RejectFinishedJobWithUncountedTerminatedPods, RejectInvalidCompletedIndexes, RejectInvalidFailedIndexes, RejectCompletedIndexesForNonIndexedJob, RejectFailedIndexesForNoBackoffLimitPerIndex, RejectFailedIndexesOverlappingCompleted, RejectFinishedJobWithTerminatingPods, RejectMoreReadyThanActivePods, X1-SuccessCriteriaMetNonIndexed, ALWAYS-SCMFailed, ALWAYS-SCMFailureTarget, X2-SuccessCriteriaMetWithoutSuccessPolicy, ALWAYS-SuccessPolicyComplete, RejectDisablingTerminalCondition, RejectDecreasingFailedCounter, RejectDecreasingSucceededCounter, RejectMutatingCompletionTime, RejectStartTimeUpdateForUnsuspendedJob, ALWAYS-SCMDisable, ALWAYS-SCMAfterComplete]
targets: [ALWAYS-ManagedByFormat, ALWAYS-ManagedByLength, ALWAYS-ManagedByImmutable, Target-NestedManagedBy, Target-DelegationUnsupported, Policy-AllowedControllers]
targetsStatus: [Policy-StatusWriters]
{{- end }}

{{- /*
The failurePolicy of each webhook group (the keys of jobguard.webhookRules), as YAML
{<group>: {failurePolicy, deny: [rule IDs in deny mode], explicit: bool}}. A rule's mode is the one
jobguard serve ends up with: the policy's modes (the rule's ID, else "*", else deny), then --mode ID=MODE
and --disable-rule ID in server.extraArgs (docs/modes.md). A webhook is Fail when one of its rules is in
deny, Ignore otherwise (audit, warn and off never refuse, so an unreachable jobguard must not either);
webhook.failurePolicy.<jobs|targets|status> set to Fail or Ignore wins.
*/}}
{{- define "jobguard.failurePolicies" -}}
{{- $modes := deepCopy ((.Values.policy | default dict).modes | default dict) }}
{{- $args := .Values.server.extraArgs | default list }}
{{- range $i, $a := $args }}
{{- $v := "" }}{{ $flag := "" }}
{{- if or (eq $a "--mode") (eq $a "--disable-rule") }}{{ $flag = $a }}{{ if lt (add1 $i) (len $args) }}{{ $v = index $args (add1 $i) }}{{ end }}
{{- else if hasPrefix "--mode=" $a }}{{ $flag = "--mode" }}{{ $v = trimPrefix "--mode=" $a }}
{{- else if hasPrefix "--disable-rule=" $a }}{{ $flag = "--disable-rule" }}{{ $v = trimPrefix "--disable-rule=" $a }}
{{- end }}
{{- if and (eq $flag "--mode") (contains "=" $v) }}
{{- $kv := splitn "=" 2 $v }}
{{- if eq $kv._0 "*" }}{{ $modes = dict "*" $kv._1 }}{{ else }}{{ $_ := set $modes $kv._0 $kv._1 }}{{ end }}
{{- else if and (eq $flag "--disable-rule") $v }}
{{- $_ := set $modes $v "off" }}
{{- end }}
{{- end }}
{{- $default := index $modes "*" | default "deny" }}
{{- $explicit := .Values.webhook.failurePolicy | default dict }}
{{- $groupOf := dict "jobs" "jobs" "cronjobs" "jobs" "jobsStatus" "status" "targets" "targets" "targetsStatus" "status" }}
{{- $out := dict }}
{{- range $w, $rules := include "jobguard.webhookRules" . | fromYaml }}
{{- $deny := list }}
{{- range $rules }}{{ if eq (index $modes . | default $default) "deny" }}{{ $deny = append $deny . }}{{ end }}{{ end }}
{{- $e := index $explicit (index $groupOf $w) | default "" }}
{{- $_ := set $out $w (dict "failurePolicy" ($e | default (ternary "Fail" "Ignore" (gt (len $deny) 0))) "deny" $deny "explicit" (ne $e "")) }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{- /* The jobs-status webhook's own matchCondition: Jobs delegated to an external controller (in the
new or the stored object). The built-in Job controller's status writes stay inside the API server. */}}
{{- define "jobguard.jobsStatusCEL" -}}
(object != null && has(object.spec) && has(object.spec.managedBy) && object.spec.managedBy != 'kubernetes.io/job-controller') || (oldObject != null && has(oldObject.spec) && has(oldObject.spec.managedBy) && oldObject.spec.managedBy != 'kubernetes.io/job-controller')
{{- end }}

{{- /*
webhook.status.matchConditions without the condition earlier charts shipped there as a default (a
values file copied from `helm show values`, or `helm upgrade --reuse-values`, still carries it): the
template now generates it (jobguard.jobsStatusCEL), so a copied default neither pins the old expression
nor collides with the generated one. Anything else the user wrote stays. A YAML list.
*/}}
{{- define "jobguard.statusMatchConditions" -}}
{{- $former := list "has(object.spec.managedBy) && object.spec.managedBy != 'kubernetes.io/job-controller'" (include "jobguard.jobsStatusCEL" .) }}
{{- $out := list }}
{{- range (.Values.webhook.status.matchConditions | default list) }}
{{- if not (and (eq .name "external-managed-by") (has .expression $former)) }}{{ $out = append $out . }}{{ end }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{- /*
The webhooks of the ValidatingWebhookConfiguration in their order, as YAML {hooks: [{name, group}]}
(group: a key of jobguard.failurePolicies). webhook.yaml builds the same list with every field.
*/}}
{{- define "jobguard.webhookNames" -}}
{{- $w := .Values.webhook }}
{{- $out := list }}
{{- if $w.jobs.enabled }}
{{- $out = append $out (dict "name" $w.jobs.name "group" "jobs") }}
{{- if $w.jobs.cronJobs }}{{ $out = append $out (dict "name" $w.jobs.cronJobName "group" "cronjobs") }}{{ end }}
{{- end }}
{{- if $w.status.enabled }}{{ $out = append $out (dict "name" $w.status.name "group" "jobsStatus") }}{{ end }}
{{- range (include "jobguard.targetRows" . | fromYaml).rows }}
{{- $out = append $out (dict "name" .name "group" "targets") }}
{{- if $w.status.enabled }}{{ $out = append $out (dict "name" .statusName "group" "targetsStatus") }}{{ end }}
{{- end }}
{{- toYaml (dict "hooks" $out) }}
{{- end }}

{{- /*
"true" when this render installs the webhooks where no jobguard pod is ready yet and one of them is
Fail in its final form: a first install, or an upgrade whose Deployment has no ready replica (it was
enforcement vap, or it is broken). The webhooks are then rendered Ignore, so that nothing can be
refused before jobguard answers, and the post-install/post-upgrade hook of bootstrap.yaml sets the
final failurePolicies once jobguard answers a review through the Service with the caBundle the API
server holds. Needs the API server: the chart asks for Namespace kube-system (every cluster has it) to
tell a render for a cluster from `helm template`, which has none and so renders the final form, the one
an installed release converges to (GitOps tools apply that; docs/install.md, "First install").
webhook.bootstrap: false turns this off.
*/}}
{{- define "jobguard.bootstrap" -}}
{{- if and (ne .Values.enforcement "vap") .Values.webhook.bootstrap (lookup "v1" "Namespace" "" "kube-system") }}
{{- $d := lookup "apps/v1" "Deployment" .Release.Namespace (include "jobguard.fullname" .) }}
{{- if not (gt (int64 (dig "status" "readyReplicas" 0 ($d | default dict))) 0) }}
{{- $fp := include "jobguard.failurePolicies" . | fromYaml }}
{{- $fail := false }}
{{- range (include "jobguard.webhookNames" . | fromYaml).hooks }}{{ if eq (index $fp .group).failurePolicy "Fail" }}{{ $fail = true }}{{ end }}{{ end }}
{{- if $fail }}true{{ end }}
{{- end }}
{{- end }}
{{- end }}

{{- /*
The memory arithmetic of `jobguard serve` (src/server/serve.c and budget.c), so that the chart refuses
a resources.limits.memory that the server would refuse at start (exit 2): without --memory-budget, the
limit must hold the process reserve, the policy reserve (twice a policy while reloading), per
connection a base and --connection-memory-limit, and the smallest budget. Keep the numbers and the
flag defaults here in step with the server (include/jobguard/server/budget.h, serve.c's flag table).
Prints nothing; fails with the numbers.
*/}}
{{- define "jobguard.memoryCheck" -}}
{{- $srv := dict "processReserve" 16777216 "policyReserve" 33554432 "connectionBase" 16384 "minBudget" 4194304
  "maxConnections" "1024" "connectionMemoryLimit" "16KiB" "memoryBudget" "0" }}
{{- $flags := dict "--max-connections" "maxConnections" "--connection-memory-limit" "connectionMemoryLimit" "--memory-budget" "memoryBudget" }}
{{- $args := .Values.server.extraArgs | default list }}
{{- range $i, $a := $args }}
{{- range $flag, $key := $flags }}
{{- if and (eq $a $flag) (lt (add1 $i) (len $args)) }}{{ $_ := set $srv $key (index $args (add1 $i)) }}
{{- else if hasPrefix (printf "%s=" $flag) $a }}{{ $_ := set $srv $key (trimPrefix (printf "%s=" $flag) $a) }}
{{- end }}
{{- end }}
{{- end }}
{{- $units := dict "" 1 "K" 1024 "k" 1024 "Ki" 1024 "KiB" 1024 "M" 1048576 "Mi" 1048576 "MiB" 1048576 "G" 1073741824 "Gi" 1073741824 "GiB" 1073741824 }}
{{- $bytes := dict }}
{{- range $key := list "maxConnections" "connectionMemoryLimit" "memoryBudget" }}
{{- $m := regexFindAll "^([0-9]+)(K|k|Ki|KiB|M|Mi|MiB|G|Gi|GiB)?$" (index $srv $key | toString) 1 }}
{{- if $m }}{{ $_ := set $bytes $key (mul (regexFind "^[0-9]+" (first $m) | int64) (index $units (regexReplaceAll "^[0-9]+" (first $m) ""))) }}{{ end }}
{{- end }}
{{- $limit := dig "limits" "memory" "" (.Values.resources | default dict) | toString }}
{{- $q := regexFindAll "^([0-9]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$" $limit 1 }}
{{- $qunits := dict "" 1 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 }}
{{- if and $q (hasKey $bytes "maxConnections") (hasKey $bytes "connectionMemoryLimit") (eq (index $bytes "memoryBudget" | default 0 | int64) 0) }}
{{- $have := mul (regexFind "^[0-9]+" $limit | int64) (index $qunits (regexReplaceAll "^[0-9]+" $limit "")) }}
{{- $need := add $srv.processReserve $srv.policyReserve $srv.minBudget (mul $bytes.maxConnections (add $srv.connectionBase $bytes.connectionMemoryLimit)) }}
{{- if lt (int64 $have) (int64 $need) }}
{{- fail (printf "resources.limits.memory %s (%d bytes) leaves jobguard no memory budget: with --max-connections %v and --connection-memory-limit %v it needs at least %d bytes (%dMi), and jobguard serve would exit 2 at start. Raise the limit, lower --max-connections in server.extraArgs, or set --memory-budget there (docs/memory.md)" $limit (int64 $have) (index $srv "maxConnections") (index $srv "connectionMemoryLimit") (int64 $need) (div (add $need 1048575) 1048576)) }}
{{- end }}
{{- end }}
{{- end }}

{{- /*
Kueue and the hook Jobs (docs/install.md, "Kueue and the chart's hook Jobs"). A Kueue with
manageJobsWithoutQueueName suspends every Job without a queue name in the namespaces its
managedJobsNamespaceSelector selects (Kueue's jobframework: WorkloadShouldBeSuspended, and the
reconciler), and a Kueue with the pod integration gates their pods: the hook would never run and helm
would wait out its --timeout. When this render has a hook Job, this reads Kueue's Configuration from
the ConfigMap kueue.configMap (NAMESPACE/NAME, key controller_manager_config.yaml) and the release
Namespace's labels, evaluates the selector as Kueue does (absent: NotIn kube-system and Kueue's
namespace; matchLabels; matchExpressions In, NotIn, Exists, DoesNotExist) and fails the render, before
anything is applied, with the fix. `helm template` and a cluster without that Namespace find nothing:
no check. kueue.configMap "" turns it off. Prints nothing.
*/}}
{{- define "jobguard.kueueCheck" -}}
{{- $ref := splitList "/" (.Values.kueue.configMap | default "") }}
{{- if and (eq (len $ref) 2) (lookup "v1" "Namespace" "" (first $ref)) }}
{{- $cm := lookup "v1" "ConfigMap" (first $ref) (last $ref) }}
{{- $cfg := index (dig "data" dict ($cm | default dict)) "controller_manager_config.yaml" | default "" | fromYaml }}
{{- $frameworks := dig "integrations" "frameworks" list $cfg | default (list "batch/job") }}
{{- if and (not (hasKey $cfg "Error")) (eq (toString (dig "manageJobsWithoutQueueName" false $cfg)) "true") (or (has "batch/job" $frameworks) (has "pod" $frameworks)) }}
{{- $sel := $cfg.managedJobsNamespaceSelector }}
{{- if kindIs "invalid" $sel }}
{{- $sel = dict "matchExpressions" (list (dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" (list "kube-system" ($cfg.namespace | default (first $ref))))) }}
{{- end }}
{{- $ns := .Release.Namespace }}
{{- $labels := merge (dict "kubernetes.io/metadata.name" $ns) (dig "metadata" "labels" dict (lookup "v1" "Namespace" "" $ns | default dict)) }}
{{- $selected := kindIs "map" $sel }}
{{- range $k, $v := (dig "matchLabels" dict ($sel | default dict)) }}
{{- if not (and (hasKey $labels $k) (eq (toString (index $labels $k)) (toString $v))) }}{{ $selected = false }}{{ end }}
{{- end }}
{{- range (dig "matchExpressions" list ($sel | default dict)) }}
{{- $has := hasKey $labels .key }}
{{- $in := and $has (has (toString (index $labels .key)) (toStrings (.values | default list))) }}
{{- $ok := dict "In" $in "NotIn" (not $in) "Exists" $has "DoesNotExist" (not $has) }}
{{- if not (index $ok (toString .operator)) }}{{ $selected = false }}{{ end }}
{{- end }}
{{- if $selected }}
{{- $hooks := list }}
{{- $off := list }}
{{- if and (ne .Values.enforcement "vap") .Values.policy .Values.policyCheck.enabled }}{{ $hooks = append $hooks (printf "%s-policy-check" (include "jobguard.fullname" .)) }}{{ $off = append $off "policyCheck.enabled=false" }}{{ end }}
{{- if include "jobguard.bootstrap" . }}{{ $hooks = append $hooks (printf "%s-bootstrap" (include "jobguard.fullname" .)) }}{{ $off = append $off "webhook.bootstrap=false" }}{{ end }}
{{- $jobs := ternary (printf "Job %s" (first $hooks)) (printf "Jobs %s" (join " and " $hooks)) (eq (len $hooks) 1) }}
{{- $how := ternary " (Kueue's default)" "" (kindIs "invalid" $cfg.managedJobsNamespaceSelector) }}
{{- fail (printf "Kueue would suspend the hook %s, and helm would wait out its --timeout: Kueue's configuration (ConfigMap %s, controller_manager_config.yaml) sets manageJobsWithoutQueueName: true, and its managedJobsNamespaceSelector %s%s selects namespace %s. Leave the namespace out of Kueue's selector (for example add %s to the values of its kubernetes.io/metadata.name NotIn expression), restart kueue-controller-manager and retry; or install without the hooks: --set %s; or skip this check: --set kueue.configMap=\"\" (docs/install.md, \"Kueue and the chart's hook Jobs\")" $jobs (join "/" $ref) (toJson $sel) $how $ns $ns (join "," $off)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

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
{{- if and .Values.server.clientAuth.enabled (not .Values.server.clientAuth.caSecretName) }}
{{- fail "server.clientAuth.caSecretName is required when server.clientAuth.enabled is true" }}
{{- end }}
{{- $names := dict }}
{{- range concat .Values.webhook.status.matchConditions .Values.webhook.matchConditions }}
{{- if hasKey $names .name }}
{{- fail (printf "matchConditions: the name %q is used twice in the status webhook" .name) }}
{{- end }}
{{- $_ := set $names .name true }}
{{- end }}
{{- if eq .Values.webhook.jobs.name .Values.webhook.status.name }}
{{- fail "webhook.jobs.name and webhook.status.name must differ" }}
{{- end }}
{{- end }}

{{/* namespaceSelector shared by both webhooks. */}}
{{- define "jobguard.namespaceSelector" -}}
{{- $excluded := list }}
{{- range .Values.webhook.excludedNamespaces }}
{{- $excluded = append $excluded . }}
{{- end }}
{{- if and .Values.webhook.excludeReleaseNamespace (not (has .Release.Namespace $excluded)) }}
{{- $excluded = append $excluded .Release.Namespace }}
{{- end }}
{{- $exprs := list }}
{{- if $excluded }}
{{- $exprs = append $exprs (dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" $excluded) }}
{{- end }}
{{- range .Values.webhook.namespaceSelectorExpressions }}
{{- $exprs = append $exprs . }}
{{- end }}
{{- if $exprs }}
matchExpressions:
{{- toYaml $exprs | nindent 2 }}
{{- else -}}
{}
{{- end }}
{{- end }}

{{- /* Built-in CRD targets (issue 10 §1; src/targets.c): kind, group, served versions, plural, managedBy path,
reserved values, as jobguard's rows (the status webhook filters on the path whose value jobguard binds
status writers to). mpijob is both built-in MPIJob rows (v2beta1 and v1) in one. */}}
{{- define "jobguard.targetTable" }}
jobset: {kind: JobSet, group: jobset.x-k8s.io, versions: ["v1alpha2"], resource: jobsets, path: spec.managedBy, reserved: ["jobset.sigs.k8s.io/jobset-controller"]}
trainjob: {kind: TrainJob, group: trainer.kubeflow.org, versions: ["v1alpha1"], resource: trainjobs, path: spec.managedBy, reserved: ["trainer.kubeflow.org/trainjob-controller"]}
pytorchjob: {kind: PyTorchJob, group: kubeflow.org, versions: ["v1"], resource: pytorchjobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"]}
tfjob: {kind: TFJob, group: kubeflow.org, versions: ["v1"], resource: tfjobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"]}
xgboostjob: {kind: XGBoostJob, group: kubeflow.org, versions: ["v1"], resource: xgboostjobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"]}
paddlejob: {kind: PaddleJob, group: kubeflow.org, versions: ["v1"], resource: paddlejobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"]}
jaxjob: {kind: JAXJob, group: kubeflow.org, versions: ["v1"], resource: jaxjobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"]}
mpijob: {kind: MPIJob, group: kubeflow.org, versions: ["v1", "v2beta1"], resource: mpijobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator", "kubeflow.org/mpi-operator"]}
rayjob: {kind: RayJob, group: ray.io, versions: ["v1"], resource: rayjobs, path: spec.managedBy, reserved: ["ray.io/kuberay-operator"]}
raycluster: {kind: RayCluster, group: ray.io, versions: ["v1"], resource: rayclusters, path: spec.managedBy, reserved: ["ray.io/kuberay-operator"]}
rayservice: {kind: RayService, group: ray.io, versions: ["v1"], resource: rayservices, path: spec.managedBy, reserved: ["ray.io/kuberay-operator"]}
raycronjob: {kind: RayCronJob, group: ray.io, versions: ["v1"], resource: raycronjobs, path: spec.managedBy, reserved: ["ray.io/kuberay-operator"]}
appwrapper: {kind: AppWrapper, group: workload.codeflare.dev, versions: ["v1beta2"], resource: appwrappers, path: spec.managedBy, reserved: ["workload.codeflare.dev/appwrapper-controller"]}
pipelinerun: {kind: PipelineRun, group: tekton.dev, versions: ["v1", "v1beta1"], resource: pipelineruns, path: spec.managedBy, reserved: ["tekton.dev/pipeline"]}
taskrun: {kind: TaskRun, group: tekton.dev, versions: ["v1", "v1beta1"], resource: taskruns, path: spec.managedBy, reserved: ["tekton.dev/pipeline"]}
{{- end }}

{{- /*
The CRD target rows the chart registers, as {rows: [...]} in YAML; each row is {name (of its status
webhook), group, versions, resource, expr (the status webhook's matchCondition)}. First the enabled
built-in kinds of .Values.targets, in key order, named <key>-status.jobguard.io; a policy row with
the same group and kind replaces that kind's data (the kind keeps its name and its enabled toggle).
Then the policy file's other target rows, in file order, named <resource>.<group>.status.jobguard.io
(<resource>.status.jobguard.io for the core group; the group as the first 16 hex digits of its
sha256 when the name would pass 253 bytes). Fails, as jobguard does, on a row for batch Job or
CronJob (the jobs webhooks send those), and on two rows for one group and resource or a webhook name
used twice.
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
{{- $row := dict "name" (printf "%s-status.jobguard.io" $n) "group" $t.group "versions" $t.versions "resource" $t.resource "path" $t.path "reserved" $t.reserved "from" (printf "targets.%s" $n) }}
{{- with index $byKind $key }}
{{- $row = dict "name" (printf "%s-status.jobguard.io" $n) "group" .group "versions" .versions "resource" .resource "path" .managedByPath "reserved" (list .reservedValue) "from" (printf "policy.targets (%s, replacing targets.%s)" $key $n) }}
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
{{- $name := printf "%s.status.jobguard.io" $p.resource }}
{{- if $p.group }}{{ $name = printf "%s.%s.status.jobguard.io" $p.resource $p.group }}{{ end }}
{{- if gt (len $name) 253 }}{{ $name = printf "%s.%s.status.jobguard.io" $p.resource (sha256sum $p.group | trunc 16) }}{{ end }}
{{- $rows = append $rows (dict "name" $name "group" $p.group "versions" $p.versions "resource" $p.resource "path" $p.managedByPath "reserved" (list $p.reservedValue) "from" (printf "policy.targets (%s)" $key)) }}
{{- end }}
{{- end }}
{{- /* CEL keywords and reserved words: a path segment that is one, or is not a CEL identifier
(a '-' in it), is read with 'seg' in x / x['seg'] instead of has(x.seg) / x.seg. */}}
{{- $celReserved := list "as" "break" "const" "continue" "else" "false" "for" "function" "if" "import" "in" "let" "loop" "namespace" "null" "package" "return" "true" "var" "void" "while" }}
{{- $resources := dict "batch/jobs" "the jobs webhook" "batch/cronjobs" "the jobs webhook" }}
{{- $names := dict }}
{{- if $rows }}
{{- $names = dict .Values.webhook.jobs.name "webhook.jobs.name" "targets.jobguard.io" "the CRD targets webhook" }}
{{- if .Values.webhook.status.enabled }}{{ $_ := set $names .Values.webhook.status.name "webhook.status.name" }}{{ end }}
{{- if ne (len $names) (ternary 3 2 .Values.webhook.status.enabled) }}
{{- fail "webhook.jobs.name and webhook.status.name must not be targets.jobguard.io, the CRD targets webhook" }}
{{- end }}
{{- end }}
{{- $out := list }}
{{- range $r := $rows }}
{{- $gr := printf "%s/%s" $r.group $r.resource }}
{{- with index $resources $gr }}
{{- fail (printf "%s: resource %q of group %q is already sent by %s (one resource cannot be two target kinds)" $r.from $r.resource $r.group .) }}
{{- end }}
{{- $_ := set $resources $gr $r.from }}
{{- if $.Values.webhook.status.enabled }}
{{- with index $names $r.name }}
{{- fail (printf "%s: its status webhook name %s is already used by %s" $r.from $r.name .) }}
{{- end }}
{{- $_ := set $names $r.name $r.from }}
{{- end }}
{{- if not (regexMatch "^[A-Za-z_][A-Za-z0-9_-]*(\\.[A-Za-z_][A-Za-z0-9_-]*)*$" $r.path) }}
{{- fail (printf "%s: managedByPath %q must be field names joined by dots, without [*] (the status webhook's CEL matchCondition reads it)" $r.from $r.path) }}
{{- end }}
{{- $has := list }}{{ $acc := "object" }}
{{- range $seg := splitList "." $r.path }}
{{- if and (regexMatch "^[A-Za-z_][A-Za-z0-9_]*$" $seg) (not (has $seg $celReserved)) }}
{{- $has = append $has (printf "has(%s.%s)" $acc $seg) }}{{ $acc = printf "%s.%s" $acc $seg }}
{{- else }}
{{- $has = append $has (printf "'%s' in %s" $seg $acc) }}{{ $acc = printf "%s['%s']" $acc $seg }}
{{- end }}
{{- end }}
{{- $quoted := list }}
{{- range $v := $r.reserved }}
{{- $quoted = append $quoted (printf "'%s'" ($v | replace "\\" "\\\\" | replace "'" "\\'" | replace "\n" "\\n" | replace "\r" "\\r")) }}
{{- end }}
{{- $out = append $out (dict "name" $r.name "group" $r.group "versions" $r.versions "resource" $r.resource "expr" (printf "%s && !(%s in [%s])" (join " && " $has) $acc (join ", " $quoted))) }}
{{- end }}
{{ toYaml (dict "rows" $out) }}
{{- end }}

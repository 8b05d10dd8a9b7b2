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

{{- /* Built-in CRD targets (issue 10 §1): group, served versions, plural, managedBy path, reserved values. */}}
{{- define "jobguard.targetTable" }}
jobset: {group: jobset.x-k8s.io, versions: ["v1alpha2"], resource: jobsets, path: spec.managedBy, reserved: ["jobset.sigs.k8s.io/jobset-controller"]}
trainjob: {group: trainer.kubeflow.org, versions: ["v1alpha1"], resource: trainjobs, path: spec.managedBy, reserved: ["trainer.kubeflow.org/trainjob-controller"]}
pytorchjob: {group: kubeflow.org, versions: ["v1"], resource: pytorchjobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"]}
tfjob: {group: kubeflow.org, versions: ["v1"], resource: tfjobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"]}
xgboostjob: {group: kubeflow.org, versions: ["v1"], resource: xgboostjobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"]}
paddlejob: {group: kubeflow.org, versions: ["v1"], resource: paddlejobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"]}
jaxjob: {group: kubeflow.org, versions: ["v1"], resource: jaxjobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator"]}
mpijob: {group: kubeflow.org, versions: ["v1", "v2beta1"], resource: mpijobs, path: spec.runPolicy.managedBy, reserved: ["kubeflow.org/training-operator", "kubeflow.org/mpi-operator"]}
rayjob: {group: ray.io, versions: ["v1"], resource: rayjobs, path: spec.managedBy, reserved: ["ray.io/kuberay-operator"]}
raycluster: {group: ray.io, versions: ["v1"], resource: rayclusters, path: spec.managedBy, reserved: ["ray.io/kuberay-operator"]}
rayservice: {group: ray.io, versions: ["v1"], resource: rayservices, path: spec.managedBy, reserved: ["ray.io/kuberay-operator"]}
raycronjob: {group: ray.io, versions: ["v1"], resource: raycronjobs, path: spec.jobTemplate.managedBy, reserved: ["ray.io/kuberay-operator"]}
appwrapper: {group: workload.codeflare.dev, versions: ["v1beta2"], resource: appwrappers, path: spec.managedBy, reserved: ["workload.codeflare.dev/appwrapper-controller"]}
pipelinerun: {group: tekton.dev, versions: ["v1", "v1beta1"], resource: pipelineruns, path: spec.managedBy, reserved: ["tekton.dev/pipeline"]}
taskrun: {group: tekton.dev, versions: ["v1", "v1beta1"], resource: taskruns, path: spec.managedBy, reserved: ["tekton.dev/pipeline"]}
{{- end }}

{{/* Names: the release's fullname, and one per component ("<fullname>-store"). */}}
{{- define "hemra.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "hemra.name" -}}
{{- include "hemra.label" (printf "%s-%s" (include "hemra.fullname" .root) .component) -}}
{{- end -}}

{{/* A name that is also a label value or a DNS label (a pool's component label, the name KEDA
labels its autoscaler with): at most 63 characters. A longer one keeps its first 54 and ends
with a hash of the whole, so it stays the same from render to render and apart from others. */}}
{{- define "hemra.label" -}}
{{- if gt (len .) 63 -}}
{{- printf "%s-%s" (. | trunc 54 | trimSuffix "-") (sha256sum . | trunc 8) -}}
{{- else -}}
{{- . -}}
{{- end -}}
{{- end -}}

{{/* Whether executors scale with KEDA ("true" or empty): autoscaling.keda.enabled is auto
(when the cluster serves KEDA's API), true (it must) or false. */}}
{{- define "hemra.keda" -}}
{{- $enabled := .Values.autoscaling.keda.enabled -}}
{{- $served := .Capabilities.APIVersions.Has "keda.sh/v1alpha1" -}}
{{- if eq (toString $enabled) "auto" -}}
{{- if $served }}true{{ end -}}
{{- else if $enabled -}}
{{- if not $served -}}
{{- fail "autoscaling.keda.enabled: true, but the cluster serves no keda.sh/v1alpha1 API: install KEDA first, or set it to auto or false (helm template has no cluster: give it --api-versions keda.sh/v1alpha1)" -}}
{{- end -}}
true
{{- end -}}
{{- end -}}

{{- define "hemra.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "hemra.labels" -}}
{{ include "hemra.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end -}}

{{/* Every pod of the release, whatever its component. */}}
{{- define "hemra.releaseSelector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "hemra.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* A component's address inside the cluster: its Service and port. */}}
{{- define "hemra.address" -}}
{{- printf "%s:%v" (include "hemra.name" (dict "root" .root "component" .component)) .port -}}
{{- end -}}

{{- define "hemra.storeAddress" -}}
{{- include "hemra.address" (dict "root" . "component" "store" "port" .Values.store.port) -}}
{{- end -}}

{{/* The database without its password (a file of its own: HEMRA_DATABASE_PASSWORD_FILE). */}}
{{- define "hemra.databaseUrl" -}}
{{- $db := .Values.database -}}
{{- printf "postgresql://%s@%s:%v/%s?sslmode=%s" (urlquery $db.user) (required "database.host: where PostgreSQL is (the chart does not run one)" $db.host) $db.port $db.name $db.sslmode -}}
{{- end -}}

{{/* The roles whose tokens each component holds (services/auth.py HOLDS): the roles it is
called as, and the one it calls the others as. */}}
{{- define "hemra.holds" -}}
{{- $holds := dict "store" (list "user" "worker" "admin") "planner" (list "user" "admin") "importer" (list "user" "admin")
      "scorer" (list "user" "worker") "gateway" (list "user") "executor" (list "worker") -}}
{{- toJson (index $holds .) -}}
{{- end -}}

{{/* A role's token: its values, its Secret ("<fullname>-token", "-worker-token",
"-admin-token" unless named), its file in the pod and the variable naming that file. */}}
{{- define "hemra.tokenValues" -}}
{{- toJson (index .root.Values (index (dict "user" "token" "worker" "workerToken" "admin" "adminToken") .role)) -}}
{{- end -}}

{{- define "hemra.tokenFile" -}}
{{- index (dict "user" "token" "worker" "worker-token" "admin" "admin-token") . -}}
{{- end -}}

{{- define "hemra.tokenSecret" -}}
{{- $values := include "hemra.tokenValues" . | fromJson -}}
{{- $values.existingSecret | default (printf "%s-%s" (include "hemra.fullname" .root) (include "hemra.tokenFile" .role)) -}}
{{- end -}}

{{- define "hemra.serviceAccount" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "hemra.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* Secrets are files (HEMRA_TOKEN_FILE, HEMRA_WORKER_TOKEN_FILE, HEMRA_ADMIN_TOKEN_FILE,
HEMRA_DATABASE_PASSWORD_FILE), never variables. A pod gets the tokens of the roles its
component holds, and no other: one volume of them, /run/secrets/hemra. */}}
{{- define "hemra.tokenVolume" -}}
{{- $root := .root -}}
- name: tokens
  projected:
    defaultMode: 0440
    sources:
      {{- range include "hemra.holds" .component | fromJsonArray }}
      {{- $role := dict "root" $root "role" . }}
      - secret:
          name: {{ include "hemra.tokenSecret" $role }}
          items: [{key: {{ (include "hemra.tokenValues" $role | fromJson).key | quote }}, path: {{ include "hemra.tokenFile" . }}}]
      {{- end }}
{{- end -}}

{{- define "hemra.databaseVolume" -}}
{{- $db := .Values.database -}}
- name: database-secret
  secret:
    secretName: {{ required "database.existingSecret: name the Secret holding the database password" $db.existingSecret }}
    {{- if $db.urlKey }}
    items: [{key: {{ $db.urlKey | quote }}, path: url}]
    {{- else }}
    items: [{key: {{ $db.passwordKey | quote }}, path: password}]
    {{- end }}
    defaultMode: 0440
{{- end -}}

{{- define "hemra.env" -}}
{{- range include "hemra.holds" . | fromJsonArray }}
- name: {{ index (dict "user" "HEMRA_TOKEN_FILE" "worker" "HEMRA_WORKER_TOKEN_FILE" "admin" "HEMRA_ADMIN_TOKEN_FILE") . }}
  value: /run/secrets/hemra/{{ include "hemra.tokenFile" . }}
{{- end }}
{{- end -}}

{{- define "hemra.databaseEnv" -}}
{{- if .Values.database.urlKey -}}
- name: HEMRA_DATABASE_URL_FILE
  value: /run/secrets/hemra-database/url
{{- else -}}
- name: HEMRA_DATABASE_URL
  value: {{ include "hemra.databaseUrl" . | quote }}
- name: HEMRA_DATABASE_PASSWORD_FILE
  value: /run/secrets/hemra-database/password
{{- end -}}
{{- end -}}

{{- define "hemra.tokenMount" -}}
- {name: tokens, mountPath: /run/secrets/hemra, readOnly: true}
{{- end -}}

{{- define "hemra.databaseMount" -}}
- {name: database-secret, mountPath: /run/secrets/hemra-database, readOnly: true}
{{- end -}}

{{/* The read-only root filesystem's writable places: the home and /tmp. */}}
{{- define "hemra.scratchVolumes" -}}
- {name: home, emptyDir: {}}
- {name: tmp, emptyDir: {}}
{{- end -}}

{{- define "hemra.scratchMounts" -}}
- {name: home, mountPath: /var/lib/hemra}
- {name: tmp, mountPath: /tmp}
{{- end -}}

{{/* What every pod of the release shares: labels, annotations, the pod's own settings. */}}
{{- define "hemra.podMeta" -}}
labels:
  {{- include "hemra.labels" . | nindent 2 }}
  {{- with .root.Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
annotations:
  checksum/config: {{ include (print .root.Template.BasePath "/configmap.yaml") .root | sha256sum }}
  {{- with .root.Values.podAnnotations }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{- define "hemra.podSpec" -}}
serviceAccountName: {{ include "hemra.serviceAccount" .root }}
automountServiceAccountToken: false
enableServiceLinks: false
securityContext:
  {{- toYaml (.podSecurityContext | default .root.Values.podSecurityContext) | nindent 2 }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (.nodeSelector | default .root.Values.nodeSelector) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (.tolerations | default .root.Values.tolerations) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- $affinity := deepCopy (.affinity | default .root.Values.affinity | default dict) }}
{{- $spread := .root.Values.podAntiAffinity }}
{{- if and .spread (ne $spread "none") (not (hasKey $affinity "podAntiAffinity")) }}
{{- /* Replicas of one component on different nodes: a node lost takes one of them. */}}
{{- $term := dict "topologyKey" "kubernetes.io/hostname" "labelSelector" (dict "matchLabels" (include "hemra.selectorLabels" . | fromYaml)) }}
{{- if eq $spread "required" }}
{{- $_ := set $affinity "podAntiAffinity" (dict "requiredDuringSchedulingIgnoredDuringExecution" (list $term)) }}
{{- else }}
{{- $_ := set $affinity "podAntiAffinity" (dict "preferredDuringSchedulingIgnoredDuringExecution" (list (dict "weight" 100 "podAffinityTerm" $term))) }}
{{- end }}
{{- end }}
{{- with $affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* A component with more than one replica: voluntary disruptions (node drains, upgrades of
the cluster) take at most one at a time. */}}
{{- define "hemra.disruptionBudget" -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "hemra.name" . }}
  labels:
    {{- include "hemra.labels" . | nindent 4 }}
spec:
  maxUnavailable: 1
  selector:
    matchLabels:
      {{- include "hemra.selectorLabels" . | nindent 6 }}
{{- end -}}

{{/* The init container of every service but the store: the schema at head, as the store says. */}}
{{- define "hemra.waitForStore" -}}
- name: wait-for-schema
  image: {{ include "hemra.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args: ["db", "wait", "--store", {{ include "hemra.storeAddress" . | quote }}, "--timeout", "3600"]
  securityContext:
    {{- toYaml .Values.securityContext | nindent 4 }}
  resources:
    requests: {cpu: 50m, memory: 128Mi}
    limits: {cpu: 500m, memory: 256Mi}
  volumeMounts:
    {{- include "hemra.scratchMounts" . | nindent 4 }}
{{- end -}}

{{/* Native grpc probes: readiness asks for the service itself, liveness for "liveness". */}}
{{- define "hemra.grpcProbes" -}}
startupProbe:
  grpc: {port: {{ .port }}, service: liveness}
  periodSeconds: 2
  failureThreshold: 60
livenessProbe:
  grpc: {port: {{ .port }}, service: liveness}
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: 6
readinessProbe:
  grpc: {port: {{ .port }}, service: {{ .service }}}
  periodSeconds: 3
  timeoutSeconds: 5
  failureThreshold: 2
{{- end -}}

// Offline validation of rendered Kubernetes manifests.
//
//   node validate.mjs FILE.yaml...      validate every document; prints one line per failure,
//                                       then "N passed, M failed"; exit 1 on any failure.
//
// Built-in kinds are checked against Kubernetes' OpenAPI schemas (npm kubernetes-models, which
// compiles them with ajv). The schemas do not reject unknown fields or out-of-range numbers,
// so validateDoc adds a few checks of its own. CRD kinds the chart uses (cert-manager Issuer
// and Certificate, prometheus-operator ServiceMonitor and PrometheusRule) are not in kubernetes-models and are
// checked structurally here (required fields and types).
import fs from 'node:fs';
import yaml from 'js-yaml';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { Pod, Service, ServiceAccount, Secret, ConfigMap } from 'kubernetes-models/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { ValidatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { ClusterRole, ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';

const builtin = {
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'v1/Pod': Pod,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'v1/Secret': Secret,
  'v1/ConfigMap': ConfigMap,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration': ValidatingWebhookConfiguration,
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy': ValidatingAdmissionPolicy,
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding': ValidatingAdmissionPolicyBinding,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
};
const clusterScoped = new Set(['ValidatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'ClusterRole', 'ClusterRoleBinding']);

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DURATION = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;

/** Split a multi-document YAML string into objects (empty documents dropped). */
export function loadDocs(text) {
  return yaml.loadAll(text).filter((d) => d !== null && d !== undefined);
}

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isStr = (v) => typeof v === 'string' && v.length > 0;

function need(errs, cond, msg) {
  if (!cond) errs.push(msg);
}

function checkMeta(errs, doc, namespaced) {
  const md = doc.metadata;
  need(errs, isObj(md), 'metadata must be an object');
  if (!isObj(md)) return;
  need(errs, isStr(md.name) && md.name.length <= 253 && DNS1123_SUBDOMAIN.test(md.name),
    `metadata.name ${JSON.stringify(md.name)} is not a DNS-1123 subdomain`);
  if (namespaced) need(errs, isStr(md.namespace) && DNS1123_LABEL.test(md.namespace), 'metadata.namespace is required');
  for (const f of ['labels', 'annotations']) {
    if (md[f] === undefined) continue;
    need(errs, isObj(md[f]), `metadata.${f} must be a map`);
    for (const [k, v] of Object.entries(md[f] || {})) {
      need(errs, typeof v === 'string', `metadata.${f}.${k} must be a string, got ${typeof v}`);
      if (f === 'labels') need(errs, v.length <= 63, `metadata.labels.${k} is longer than 63`);
    }
  }
}

function checkIssuerRef(errs, ref, where) {
  need(errs, isObj(ref), `${where}.issuerRef is required`);
  if (!isObj(ref)) return;
  need(errs, isStr(ref.name), `${where}.issuerRef.name is required`);
  if (ref.kind !== undefined) need(errs, ['Issuer', 'ClusterIssuer'].includes(ref.kind) || isStr(ref.kind), `${where}.issuerRef.kind must be a string`);
  if (ref.group !== undefined) need(errs, typeof ref.group === 'string', `${where}.issuerRef.group must be a string`);
}

// Structural checks for the CRDs (fields the CRDs mark required, plus the types we use).
const crds = {
  'cert-manager.io/v1/Issuer': (doc, errs) => {
    const s = doc.spec;
    need(errs, isObj(s), 'spec is required');
    if (!isObj(s)) return;
    const kinds = ['selfSigned', 'ca', 'acme', 'vault', 'venafi'].filter((k) => s[k] !== undefined);
    need(errs, kinds.length === 1, `spec must have exactly one issuer type, has ${JSON.stringify(kinds)}`);
    if (s.ca !== undefined) need(errs, isObj(s.ca) && isStr(s.ca.secretName), 'spec.ca.secretName is required');
    if (s.selfSigned !== undefined) need(errs, isObj(s.selfSigned), 'spec.selfSigned must be an object');
  },
  'cert-manager.io/v1/Certificate': (doc, errs) => {
    const s = doc.spec;
    need(errs, isObj(s), 'spec is required');
    if (!isObj(s)) return;
    need(errs, isStr(s.secretName) && DNS1123_SUBDOMAIN.test(s.secretName), 'spec.secretName is required');
    checkIssuerRef(errs, s.issuerRef, 'spec');
    need(errs, isStr(s.commonName) || (Array.isArray(s.dnsNames) && s.dnsNames.length > 0),
      'spec needs commonName or dnsNames');
    if (s.dnsNames !== undefined) need(errs, Array.isArray(s.dnsNames) && s.dnsNames.every((n) => DNS1123_SUBDOMAIN.test(n)), 'spec.dnsNames must be DNS names');
    for (const f of ['duration', 'renewBefore']) {
      if (s[f] !== undefined) need(errs, typeof s[f] === 'string' && DURATION.test(s[f]), `spec.${f} must be a Go duration, got ${JSON.stringify(s[f])}`);
    }
    if (s.isCA !== undefined) need(errs, typeof s.isCA === 'boolean', 'spec.isCA must be a boolean');
    if (s.privateKey !== undefined) {
      const pk = s.privateKey;
      need(errs, isObj(pk), 'spec.privateKey must be an object');
      if (pk.algorithm !== undefined) need(errs, ['RSA', 'ECDSA', 'Ed25519'].includes(pk.algorithm), 'spec.privateKey.algorithm must be RSA, ECDSA or Ed25519');
      if (pk.size !== undefined) need(errs, Number.isInteger(pk.size), 'spec.privateKey.size must be an integer');
      if (pk.rotationPolicy !== undefined) need(errs, ['Never', 'Always'].includes(pk.rotationPolicy), 'spec.privateKey.rotationPolicy must be Never or Always');
    }
    const usages = ['signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement',
      'data encipherment', 'cert sign', 'crl sign', 'encipher only', 'decipher only', 'any', 'server auth',
      'client auth', 'code signing', 'email protection', 's/mime', 'ipsec end system', 'ipsec tunnel',
      'ipsec user', 'timestamping', 'ocsp signing', 'microsoft sgc', 'netscape sgc'];
    if (s.usages !== undefined) need(errs, Array.isArray(s.usages) && s.usages.every((u) => usages.includes(u)), `spec.usages has an unknown usage: ${JSON.stringify(s.usages)}`);
  },
  'monitoring.coreos.com/v1/ServiceMonitor': (doc, errs) => {
    const s = doc.spec;
    need(errs, isObj(s), 'spec is required');
    if (!isObj(s)) return;
    need(errs, isObj(s.selector), 'spec.selector is required');
    need(errs, Array.isArray(s.endpoints) && s.endpoints.length > 0, 'spec.endpoints must be a non-empty list');
    for (const [i, e] of (s.endpoints || []).entries()) {
      need(errs, isStr(e.port) || e.targetPort !== undefined, `spec.endpoints[${i}] needs port or targetPort`);
      for (const f of ['interval', 'scrapeTimeout']) {
        if (e[f] !== undefined) need(errs, typeof e[f] === 'string' && DURATION.test(e[f]), `spec.endpoints[${i}].${f} must be a duration`);
      }
      if (e.scheme !== undefined) need(errs, ['http', 'https'].includes(e.scheme), `spec.endpoints[${i}].scheme must be http or https`);
    }
    if (s.namespaceSelector !== undefined) {
      need(errs, isObj(s.namespaceSelector), 'spec.namespaceSelector must be an object');
    }
  },
  // The operator's PrometheusRule CRD: groups of named rules, each an alert or a record with an
  // expression; promtool parses the expressions (run.sh).
  'monitoring.coreos.com/v1/PrometheusRule': (doc, errs) => {
    const g = doc.spec?.groups;
    need(errs, Array.isArray(g) && g.length > 0, 'spec.groups must be a non-empty list');
    for (const [i, grp] of (Array.isArray(g) ? g : []).entries()) {
      need(errs, isStr(grp.name) && grp.name !== '', `spec.groups[${i}].name is required`);
      need(errs, Array.isArray(grp.rules) && grp.rules.length > 0, `spec.groups[${i}].rules must be a non-empty list`);
      for (const [j, r] of (grp.rules || []).entries()) {
        const where = `spec.groups[${i}].rules[${j}]`;
        need(errs, isStr(r.alert) !== isStr(r.record), `${where} needs exactly one of alert and record`);
        need(errs, isStr(r.expr) || typeof r.expr === 'number', `${where}.expr is required`);
        if (r.for !== undefined) need(errs, typeof r.for === 'string' && DURATION.test(r.for), `${where}.for must be a duration`);
        for (const f of ['labels', 'annotations']) {
          if (r[f] !== undefined) need(errs, isObj(r[f]) && Object.values(r[f]).every(isStr), `${where}.${f} must map strings to strings`);
        }
      }
    }
  },
};

// Extra checks for what the OpenAPI schemas miss (ranges, field names we know matter).
function extraBuiltin(doc, errs) {
  const walkPorts = (ports, where) => {
    for (const [i, p] of (ports || []).entries()) {
      for (const f of ['port', 'containerPort', 'targetPort']) {
        if (typeof p[f] === 'number') need(errs, p[f] >= 1 && p[f] <= 65535, `${where}[${i}].${f} ${p[f]} is out of range`);
        if (typeof p[f] === 'string') need(errs, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(p[f]) && p[f].length <= 15, `${where}[${i}].${f} is not a port name`);
      }
    }
  };
  if (doc.kind === 'Service') walkPorts(doc.spec?.ports, 'spec.ports');
  const pod = doc.kind === 'Pod' ? doc.spec : doc.spec?.template?.spec;
  if (pod) {
    for (const [i, c] of (pod.containers || []).entries()) {
      walkPorts(c.ports, `containers[${i}].ports`);
      need(errs, (c.ports || []).every((p) => !p.name || p.name.length <= 15), `containers[${i}] port names must be at most 15 characters`);
      for (const m of c.volumeMounts || []) {
        need(errs, (pod.volumes || []).some((v) => v.name === m.name), `containers[${i}] mounts unknown volume ${m.name}`);
      }
    }
  }
  if (doc.kind === 'ClusterRole') {
    for (const [i, r] of (doc.rules || []).entries()) {
      need(errs, Array.isArray(r.verbs) && r.verbs.length > 0, `rules[${i}].verbs must be a non-empty list`);
      need(errs, !!r.nonResourceURLs || (Array.isArray(r.apiGroups) && Array.isArray(r.resources)), `rules[${i}] needs apiGroups and resources`);
    }
  }
  if (doc.kind === 'ClusterRoleBinding') {
    for (const [i, s] of (doc.subjects || []).entries()) {
      if (s.kind === 'ServiceAccount') need(errs, isStr(s.namespace) && isStr(s.name), `subjects[${i}]: a ServiceAccount needs name and namespace`);
    }
  }
  if (doc.kind === 'ValidatingWebhookConfiguration') {
    for (const [i, w] of (doc.webhooks || []).entries()) {
      if (w.timeoutSeconds !== undefined) need(errs, w.timeoutSeconds >= 1 && w.timeoutSeconds <= 30, `webhooks[${i}].timeoutSeconds must be between 1 and 30 seconds`);
      need(errs, (w.name || '').split('.').length >= 3, `webhooks[${i}].name must be fully qualified (three segments)`);
      const names = (w.matchConditions || []).map((m) => m.name);
      need(errs, new Set(names).size === names.length, `webhooks[${i}].matchConditions names must be unique`);
      need(errs, names.length <= 64, `webhooks[${i}] has more than 64 matchConditions`);
    }
    const names = (doc.webhooks || []).map((w) => w.name);
    need(errs, new Set(names).size === names.length, 'webhook names must be unique');
  }
}

/** Validate one document; returns a list of error strings (empty when valid). */
export function validateDoc(doc) {
  const errs = [];
  if (!isObj(doc)) return ['document is not an object'];
  need(errs, isStr(doc.apiVersion), 'apiVersion is required');
  need(errs, isStr(doc.kind), 'kind is required');
  const key = `${doc.apiVersion}/${doc.kind}`;
  const Model = builtin[key];
  if (Model) {
    try {
      new Model(doc).validate();
    } catch (e) {
      errs.push(String(e.message || e));
    }
    checkMeta(errs, doc, !clusterScoped.has(doc.kind));
    need(errs, !clusterScoped.has(doc.kind) || doc.metadata?.namespace === undefined, `${doc.kind} is cluster-scoped: no metadata.namespace`);
    extraBuiltin(doc, errs);
  } else if (crds[key]) {
    checkMeta(errs, doc, true);
    crds[key](doc, errs);
  } else {
    errs.push(`no schema for ${key}: add it to tests/chart/validate.mjs`);
  }
  return errs;
}

export function docId(doc) {
  return `${doc?.kind}/${doc?.metadata?.name}`;
}

// CLI
if (import.meta.url === `file://${process.argv[1]}`) {
  let passed = 0;
  let failed = 0;
  for (const f of process.argv.slice(2)) {
    let docs;
    try {
      docs = loadDocs(fs.readFileSync(f, 'utf8'));
    } catch (e) {
      console.log(`FAIL ${f}: ${e.message}`);
      failed++;
      continue;
    }
    for (const d of docs) {
      const errs = validateDoc(d);
      if (errs.length) {
        failed++;
        console.log(`FAIL ${f} ${docId(d)}: ${errs.join('; ')}`);
      } else passed++;
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

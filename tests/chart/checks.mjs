// Chart assertions for charts/jobguard, on the output of a real helm binary. Run by run.sh:
//
//   node checks.mjs --chart DIR --work DIR --helm PATH [--ca-bundle-file F] [-v]
//
// Renders the chart with `helm template` for the default values, each certificate mode and each
// toggle, runs `helm lint --strict` with the same values, validates every rendered document
// (validate.mjs) and asserts the content; renders that must fail (values schema, `required`,
// `fail`) must fail with the expected message under both commands. The upgrade scenarios, which
// depend on the chart's `lookup` of the TLS Secret, and NOTES.txt are rendered against
// fakeapi.mjs (`--dry-run=server`). Then `helm package` must give an archive that renders like the
// directory, and a self-test breaks the chart in many ways and checks that each break fails the
// check it names. One line is printed per failed check (all with -v), then "N passed, M failed".
// Exit status 1 on any failure.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import yaml from 'js-yaml';
import { parse as celParse, run as celRun } from '@bufbuild/cel';
import { loadDocs, validateDoc, docId } from './validate.mjs';

// ---------------------------------------------------------------- arguments
const argv = process.argv.slice(2);
const opt = { verbose: false };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '-v') opt.verbose = true;
  else if (['--chart', '--work', '--helm', '--ca-bundle-file', '--vap-file', '--jobguard'].includes(a)) opt[a.slice(2).replace(/-(.)/g, (_, c) => c.toUpperCase())] = argv[++i];
  else { console.error(`checks.mjs: unknown argument ${a}`); process.exit(2); }
}
if (!opt.chart || !opt.work || !opt.helm) {
  console.error('usage: node checks.mjs --chart DIR --work DIR --helm PATH [--ca-bundle-file F] [--vap-file F] [--jobguard BIN] [-v]');
  process.exit(2);
}
// The repository around the chart (the server's sources, README, docs), fixed before the self-test
// points opt.chart at broken copies.
const TOP = path.resolve(opt.chart, '..', '..');
fs.rmSync(opt.work, { recursive: true, force: true });
fs.mkdirSync(opt.work, { recursive: true });

// ---------------------------------------------------------------- check bookkeeping
class Ctx {
  /** only: render labels this context renders (a mutant needs only the renders its check uses). */
  constructor(only = null) { this.passed = 0; this.failed = 0; this.failures = []; this.only = only; }
  check(name, cond, detail = '') {
    if (cond) {
      this.passed++;
      if (opt.verbose && this === main) console.log(`ok   ${name}`);
    } else {
      this.failed++;
      this.failures.push(name);
      if (this === main) console.log(`FAIL ${name}${detail ? `: ${detail}` : ''}`);
    }
    return !!cond;
  }
  wants(label) { return !this.only || this.only.includes(label); }
}
const main = new Ctx();

// ---------------------------------------------------------------- the stand-in API server
// Helm reads its kubeconfig only for --dry-run=server; every other command gets one that does
// not exist, so no user's cluster is ever contacted.
const apiObjects = path.join(opt.work, 'cluster.json');
const api = spawn(process.execPath, [new URL('./fakeapi.mjs', import.meta.url).pathname, apiObjects], { stdio: ['ignore', 'pipe', 'inherit'] });
const apiPort = await new Promise((resolve, reject) => {
  api.stdout.once('data', (d) => resolve(Number(String(d).trim())));
  api.once('exit', (code) => reject(new Error(`fakeapi.mjs exited with ${code}`)));
});
process.on('exit', () => api.kill());
const fakeKubeconfig = path.join(opt.work, 'kubeconfig');
fs.writeFileSync(fakeKubeconfig, yaml.dump({
  apiVersion: 'v1', kind: 'Config', 'current-context': 'fake',
  clusters: [{ name: 'fake', cluster: { server: `http://127.0.0.1:${apiPort}` } }],
  contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake' } }],
  users: [{ name: 'fake', user: {} }],
}));
const helmHome = path.join(opt.work, 'helm-home');
const helmEnv = {
  ...process.env, HELM_CACHE_HOME: `${helmHome}/cache`, HELM_CONFIG_HOME: `${helmHome}/config`,
  HELM_DATA_HOME: `${helmHome}/data`, KUBECONFIG: path.join(opt.work, 'no-cluster'),
};
function helm(args, { cluster } = {}) {
  const env = cluster ? { ...helmEnv, KUBECONFIG: fakeKubeconfig } : helmEnv;
  if (cluster) fs.writeFileSync(apiObjects, JSON.stringify(cluster === true ? [] : cluster));
  return spawnSync(opt.helm, args, { encoding: 'utf8', env });
}

// ---------------------------------------------------------------- rendering
let seq = 0;

/** Values arguments for helm: o.values (written to a file, passed with -f) and o.set (--set). */
function valueArgs(o) {
  const args = [];
  if (o.values) {
    const f = path.join(opt.work, `r${++seq}-values.yaml`);
    fs.writeFileSync(f, yaml.dump(o.values));
    args.push('-f', f);
  }
  for (const s of o.set || []) args.push('--set', s);
  return args;
}

/**
 * Render the chart with `helm template`. o: {values, set: [..], name, namespace, upgrade,
 * lookup: [objects in the cluster], kubeVersion, chart, extraArgs: [..]}. With o.lookup the render goes to the
 * stand-in API server, so the chart's lookup finds those objects. Returns {ok, docs, err, out}.
 */
function render(o = {}) {
  const kube = o.kubeVersion ?? '1.30.0';
  const r = helm(['template', o.name ?? 'jobguard', o.chart ?? opt.chart, '--namespace', o.namespace ?? 'default',
    '--kube-version', kube, ...(o.upgrade ? ['--is-upgrade'] : []),
    ...(o.lookup ? ['--dry-run=server', '--disable-openapi-validation'] : []), ...(o.extraArgs || []), ...valueArgs(o)], { cluster: o.lookup });
  if (r.status !== 0) return { ok: false, err: r.stderr || r.stdout || `exit ${r.status}` };
  let docs;
  try {
    docs = loadDocs(r.stdout);
  } catch (e) {
    return { ok: false, err: `rendered YAML does not parse: ${e.message}` };
  }
  return { ok: true, docs, out: r.stdout };
}

/** `helm lint --strict` with the values of o. Returns {ok, out}. */
function lint(o = {}) {
  const r = helm(['lint', '--strict', o.chart ?? opt.chart, '--namespace', o.namespace ?? 'default',
    '--kube-version', o.kubeVersion ?? '1.30.0', ...valueArgs(o)]);
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

/** NOTES.txt as `helm install` prints it (dry run against the stand-in API server). */
function notes(o = {}) {
  const r = helm(['install', o.name ?? 'jobguard', opt.chart, '--namespace', o.namespace ?? 'default',
    '--dry-run=server', '--disable-openapi-validation', '-o', 'json', ...valueArgs(o)], { cluster: true });
  try {
    return { ok: r.status === 0, notes: JSON.parse(r.stdout).info.notes, err: r.stderr };
  } catch {
    return { ok: false, err: r.stderr || r.stdout };
  }
}

// ---------------------------------------------------------------- helpers
const find = (docs, kind, pred = () => true) => docs.filter((d) => d.kind === kind && pred(d));
const one = (docs, kind, pred) => { const l = find(docs, kind, pred); return l.length === 1 ? l[0] : undefined; };
const eq = (a, b) => isDeepStrictEqual(a, b);
const sorted = (a) => [...(a || [])].sort();
const b64 = (s) => Buffer.from(s, 'base64').toString('utf8');
const argVal = (args, flag) => { const i = (args || []).indexOf(flag); return i >= 0 ? args[i + 1] : undefined; };
const selects = (selector, labels) => !!selector && Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);
const mainContainer = (dep) => dep?.spec?.template?.spec?.containers?.find((c) => c.name === 'jobguard');
const webhookDoc = (docs) => one(docs, 'ValidatingWebhookConfiguration');
const CLUSTER_SCOPED = ['ValidatingWebhookConfiguration', 'ClusterRole', 'ClusterRoleBinding'];
const isTestHook = (d) => d?.metadata?.annotations?.['helm.sh/hook'] === 'test';
const testEnv = (pod) => Object.fromEntries((pod?.spec?.containers?.[0]?.env || []).map((e) => [e.name, e.value]));
const wh = (docs, name) => webhookDoc(docs)?.webhooks?.find((w) => w.name === name);
// The API server's check of webhook names: unique, a DNS subdomain of at least three labels.
const webhookNamesOk = (vwc) => {
  const names = (vwc?.webhooks || []).map((w) => w.name);
  return names.length > 0 && new Set(names).size === names.length && names.every((n) => n.length <= 253 &&
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?){2,}$/.test(n));
};
// CEL: matchConditions must parse; a status webhook's condition is evaluated on sample objects (the
// API server gives webhooks `object` as a dynamic map).
const celError = (expr) => { try { celParse(expr); return null; } catch (e) { return e.message; } };
const celMap = (v) => (Array.isArray(v) ? v.map(celMap) : v && typeof v === 'object' ? new Map(Object.entries(v).map(([k, x]) => [k, celMap(x)])) : v);
/** An object with value at path; a segment name[*] is a list whose second element holds the rest. */
const objAt = (path, value) => path.split('.').reduceRight((acc, seg) => (seg.endsWith('[*]')
  ? { [seg.slice(0, -3)]: [{ other: 1 }, acc] } : { [seg]: acc }), value);
/** The first matchCondition of w on (object, oldObject): true, false or 'error: ...'. */
const sends = (w, obj, old = null) => {
  try {
    const r = celRun(w?.matchConditions?.[0]?.expression ?? 'false', { object: celMap(obj), oldObject: celMap(old) });
    return typeof r === 'boolean' ? r : `error: ${r}`;
  } catch (e) { return `error: ${e.message}`; }
};
/** The status condition is false without the field and for each reserved value, true for another value. */
const sendsOnlyExternal = (w, path, reserved) => {
  const got = [sends(w, {}), sends(w, { spec: {} }), ...reserved.map((r) => sends(w, objAt(path, r), objAt(path, r))),
    sends(w, objAt(path, 'kueue.x-k8s.io/multikueue'), objAt(path, 'kueue.x-k8s.io/multikueue'))];
  return [eq(got, [false, false, ...reserved.map(() => false), true]), JSON.stringify(got)];
};
/**
 * The managed-by condition of a CREATE/UPDATE webhook: true for managedBy at each path (in the new
 * object, in the old one only, empty, a wrong type on the way), false without (nothing, an empty
 * spec, labels only, a null value, an empty list).
 */
const sendsOnlyManaged = (w, paths) => {
  const want = []; const got = [];
  const t = (what, v, obj, old) => { want.push(`${what}: ${v}`); got.push(`${what}: ${sends(w, obj, old)}`); };
  for (const p of paths) {
    t(`new ${p}`, true, objAt(p, 'kueue.x-k8s.io/multikueue'));
    t(`old ${p}`, true, { spec: {} }, objAt(p, 'kueue.x-k8s.io/multikueue'));
    t(`empty ${p}`, true, objAt(p, ''));
    t(`null ${p}`, false, objAt(p, null), objAt(p, null));
    const parent = p.split('.').slice(0, -1).join('.');
    t(`string at ${parent}`, true, objAt(parent, 'x'));
  }
  t('no spec', false, { metadata: { name: 'x' } });
  t('empty spec', false, { spec: {} }, { spec: {} });
  t('labels and suspend', false, { metadata: { labels: { a: 'b' } }, spec: { suspend: false } }, { spec: { suspend: true } });
  return [eq(got, want), JSON.stringify(got.filter((g, i) => g !== want[i]))];
};
const jobsExpr = (o) => `(${o} != null && has(${o}.spec) && has(${o}.spec.managedBy) && ${o}.spec.managedBy != 'kubernetes.io/job-controller')`;
const STATUS_EXPR = `${jobsExpr('object')} || ${jobsExpr('oldObject')}`;

function x509(pem) {
  try { return new crypto.X509Certificate(pem); } catch { return null; }
}

/** Render, requiring success; validates every document against the schemas; lints with the same values. */
function renderOk(ctx, label, o) {
  if (!ctx.wants(label)) return null;
  const r = render(o);
  if (!ctx.check(`${label}: renders`, r.ok, r.err?.trim())) return null;
  for (const d of r.docs) {
    const errs = validateDoc(d);
    ctx.check(`${label}: ${docId(d)} passes schema validation`, errs.length === 0, errs.join('; '));
  }
  if (ctx === main && !o.lookup) {
    const l = lint(o);
    ctx.check(`${label}: helm lint --strict passes`, l.ok, l.out.trim().split('\n').slice(-6).join(' | '));
  }
  return r;
}

/**
 * Render, which must fail with a message matching re. Values the schema refuses must fail
 * `helm lint --strict` too (lint: true); `required` and `fail` are only warnings in lint mode.
 */
function renderFails(ctx, label, o, re, { lint: linted = false } = {}) {
  if (!ctx.wants(label)) return;
  const r = render(o);
  ctx.check(label, !r.ok && re.test(r.err || ''), r.ok ? 'rendered, but must fail' : `wrong error: ${r.err?.trim().slice(0, 300)}`);
  if (ctx === main && linted) {
    const l = lint(o);
    ctx.check(`${label} (helm lint --strict)`, !l.ok && re.test(l.out), l.ok ? 'lint passed, but must fail' : `wrong error: ${l.out.trim().slice(0, 300)}`);
  }
}

// ---------------------------------------------------------------- assertion groups
/** Everything that must hold for any rendering with default server/webhook values. */
function assertCore(ctx, label, docs, { name = 'jobguard', namespace = 'default', fullname = 'jobguard' } = {}) {
  const c = (n, cond, d) => ctx.check(`${label}: ${n}`, cond, d);
  const dep = one(docs, 'Deployment');
  c('one Deployment', !!dep);
  if (!dep) return;
  const pod = dep.spec.template.spec;
  const podLabels = dep.spec.template.metadata?.labels || {};
  const ctr = mainContainer(dep);
  c('container jobguard exists', !!ctr);
  if (!ctr) return;
  const args = ctr.args || [];
  c('Deployment name is the fullname', dep.metadata.name === fullname, dep.metadata.name);
  c('everything is in the release namespace',
    docs.filter((d) => !CLUSTER_SCOPED.includes(d.kind)).every((d) => d.metadata.namespace === namespace),
    docs.map((d) => `${docId(d)}@${d.metadata.namespace}`).join(' '));
  c('selector selects the pod template', selects(dep.spec.selector?.matchLabels, podLabels));
  c('replicas 2', dep.spec.replicas === 2, String(dep.spec.replicas));
  c('rolling update maxUnavailable 0', dep.spec.strategy?.type === 'RollingUpdate' && dep.spec.strategy?.rollingUpdate?.maxUnavailable === 0,
    JSON.stringify(dep.spec.strategy));
  c('rolling update maxSurge >= 1', (dep.spec.strategy?.rollingUpdate?.maxSurge ?? 0) >= 1);
  const tsc = pod.topologySpreadConstraints || [];
  c('spread over nodes, as a rule (topology spread on hostname selecting the pods, DoNotSchedule)',
    tsc.some((t) => t.topologyKey === 'kubernetes.io/hostname' && t.whenUnsatisfiable === 'DoNotSchedule' &&
      selects(t.labelSelector?.matchLabels, podLabels)),
    JSON.stringify(tsc));
  // Command line
  c('command is /usr/local/bin/jobguard serve', eq(ctr.command, ['/usr/local/bin/jobguard']) && args[0] === 'serve',
    JSON.stringify([ctr.command, args[0]]));
  c('--tls-cert-file /tls/tls.crt', argVal(args, '--tls-cert-file') === '/tls/tls.crt');
  c('--tls-private-key-file /tls/tls.key', argVal(args, '--tls-private-key-file') === '/tls/tls.key');
  c('--log-format json', argVal(args, '--log-format') === 'json');
  c('--log-level info', argVal(args, '--log-level') === 'info');
  c('--service-name is the Service DNS name', argVal(args, '--service-name') === `${fullname}.${namespace}.svc`, argVal(args, '--service-name'));
  c('flags alternate with their values', args.length % 2 === 1 && args.slice(1).every((a, i) => (i % 2 === 0) === a.startsWith('--')),
    JSON.stringify(args));
  const port = Number(argVal(args, '--port'));
  const opsPort = Number(argVal(args, '--ops-port'));
  const ports = Object.fromEntries((ctr.ports || []).map((p) => [p.name, p.containerPort]));
  c('--port 9443 matches containerPort webhook', port === 9443 && ports.webhook === 9443, JSON.stringify(ports));
  c('--ops-port 8080 matches containerPort metrics', opsPort === 8080 && ports.metrics === 8080);
  // Probes on the ops port
  const probePort = (p) => (typeof p === 'string' ? ports[p] : p);
  c('readiness probe GET /readyz on the ops port', ctr.readinessProbe?.httpGet?.path === '/readyz' &&
    probePort(ctr.readinessProbe.httpGet.port) === opsPort && !ctr.readinessProbe.httpGet.scheme);
  c('liveness probe GET /healthz on the ops port', ctr.livenessProbe?.httpGet?.path === '/healthz' &&
    probePort(ctr.livenessProbe.httpGet.port) === opsPort);
  // Shutdown
  const delay = Number(argVal(args, '--shutdown-delay'));
  const drain = Number(argVal(args, '--drain-timeout'));
  c('--shutdown-delay 5 and --drain-timeout 10', delay === 5 && drain === 10, `${delay} ${drain}`);
  c('terminationGracePeriodSeconds > shutdown delay + drain timeout',
    pod.terminationGracePeriodSeconds > delay + drain, `${pod.terminationGracePeriodSeconds} vs ${delay}+${drain}`);
  // PSS restricted
  const psc = pod.securityContext || {};
  const sc = ctr.securityContext || {};
  const nonRoot = (sc.runAsNonRoot ?? psc.runAsNonRoot) === true;
  const uid = sc.runAsUser ?? psc.runAsUser;
  c('runAsNonRoot with UID 65532', nonRoot && uid === 65532, `${nonRoot} ${uid}`);
  c('readOnlyRootFilesystem', sc.readOnlyRootFilesystem === true);
  c('allowPrivilegeEscalation false', sc.allowPrivilegeEscalation === false);
  c('not privileged', sc.privileged !== true);
  c('capabilities drop ALL, add none', eq(sc.capabilities?.drop, ['ALL']) && !(sc.capabilities?.add?.length));
  c('seccomp RuntimeDefault', (sc.seccompProfile?.type ?? psc.seccompProfile?.type) === 'RuntimeDefault');
  c('no host namespaces', !pod.hostNetwork && !pod.hostPID && !pod.hostIPC);
  c('automountServiceAccountToken false on the pod', pod.automountServiceAccountToken === false);
  const sa = one(docs, 'ServiceAccount', (d) => !isTestHook(d));
  c('ServiceAccount exists, is used, and does not automount a token',
    !!sa && pod.serviceAccountName === sa.metadata.name && sa.automountServiceAccountToken === false);
  // jobguard uses no Kubernetes API: the only RBAC is the helm test's, bound to the test's own account
  const rbac = docs.filter((d) => /^(Cluster)?Role(Binding)?$/.test(d.kind));
  c('no RBAC objects but the helm test hook\'s, and none binds jobguard\'s ServiceAccount', rbac.every(isTestHook) &&
    !rbac.some((d) => (d.subjects || []).some((x) => x.kind === 'ServiceAccount' && x.name === pod.serviceAccountName)),
  rbac.map(docId).join());
  c('resources: requests set, memory limit set, no CPU limit',
    !!ctr.resources?.requests?.cpu && !!ctr.resources?.requests?.memory && !!ctr.resources?.limits?.memory && !ctr.resources?.limits?.cpu,
    JSON.stringify(ctr.resources));
  // TLS volume
  const mount = (ctr.volumeMounts || []).find((m) => m.mountPath === '/tls');
  const vol = (pod.volumes || []).find((v) => v.name === mount?.name);
  c('TLS Secret mounted read-only at /tls', !!mount && mount.readOnly === true && !!vol?.secret?.secretName);
  c('TLS mount has no subPath (a rotated Secret reaches the pod)', (ctr.volumeMounts || []).every((m) => !m.subPath));
  c('the CA key is not mounted', !!vol && Array.isArray(vol.secret?.items) && vol.secret.items.every((i) => !/ca\.key/.test(i.key)) &&
    sorted(vol.secret.items.map((i) => i.path)).join() === 'tls.crt,tls.key', JSON.stringify(vol?.secret?.items));
  c('Secret files readable by fsGroup (mode 0440 needs fsGroup)',
    (vol?.secret?.defaultMode ?? 0o644) & 0o004 || Number.isInteger(psc.fsGroup), `${vol?.secret?.defaultMode} ${psc.fsGroup}`);
  // Services
  const svc = one(docs, 'Service', (s) => s.metadata.name === fullname);
  c('webhook Service 443 -> webhook port', !!svc && svc.spec.ports.length === 1 && svc.spec.ports[0].port === 443 &&
    (svc.spec.ports[0].targetPort === 'webhook' || svc.spec.ports[0].targetPort === 9443), JSON.stringify(svc?.spec?.ports));
  c('webhook Service selects the pods', selects(svc?.spec?.selector, podLabels));
  const msvc = one(docs, 'Service', (s) => s.metadata.name === `${fullname}-metrics`);
  c('metrics Service on the ops port', !!msvc && msvc.spec.ports.some((p) => p.port === 8080 &&
    (p.targetPort === 'metrics' || p.targetPort === 8080)) && selects(msvc.spec.selector, podLabels));
  // Webhook configuration
  const vwc = webhookDoc(docs);
  c('one ValidatingWebhookConfiguration', !!vwc);
  if (!vwc) return;
  c('VWC is cluster-scoped (no namespace)', !vwc.metadata.namespace);
  c('webhook names are unique, fully qualified DNS names', webhookNamesOk(vwc), JSON.stringify(vwc.webhooks.map((w) => w.name)));
  const unparsed = vwc.webhooks.flatMap((w) => (w.matchConditions || []).map((m) => [w.name, celError(m.expression)]).filter(([, e]) => e));
  c('every matchCondition parses as CEL', unparsed.length === 0, JSON.stringify(unparsed));
  const w1 = wh(docs, 'jobs.jobguard.io');
  const wc = wh(docs, 'cronjobs.jobguard.io');
  const w2 = wh(docs, 'jobs-status.jobguard.io');
  c('webhooks jobs.jobguard.io, cronjobs.jobguard.io and jobs-status.jobguard.io first',
    eq(vwc.webhooks.slice(0, 3).map((w) => w.name), ['jobs.jobguard.io', 'cronjobs.jobguard.io', 'jobs-status.jobguard.io']),
    JSON.stringify(vwc.webhooks.map((w) => w.name)));
  if (!w1 || !wc || !w2) return;
  for (const [n, w] of [['jobs', w1], ['cronjobs', wc]]) {
    c(`${n} webhook rule: batch/v1 ${n} CREATE/UPDATE`, w.rules.length === 1 && eq(w.rules[0].apiGroups, ['batch']) &&
      eq(w.rules[0].apiVersions, ['v1']) && eq(sorted(w.rules[0].operations), ['CREATE', 'UPDATE']) &&
      eq(w.rules[0].resources, [n]), JSON.stringify(w.rules));
  }
  c('cronjobs webhook failurePolicy Fail', wc.failurePolicy === 'Fail');
  c('status webhook rule: batch/v1 jobs/status UPDATE only', w2.rules.length === 1 && eq(w2.rules[0].apiGroups, ['batch']) &&
    eq(w2.rules[0].apiVersions, ['v1']) && eq(w2.rules[0].operations, ['UPDATE']) && eq(w2.rules[0].resources, ['jobs/status']),
  JSON.stringify(w2.rules));
  c('jobs webhook failurePolicy Fail', w1.failurePolicy === 'Fail');
  c('status webhook failurePolicy Fail (every rule in deny, the default)', w2.failurePolicy === 'Fail');
  c('status webhook matchConditions: external-managed-by only', eq(w2.matchConditions, [{ name: 'external-managed-by', expression: STATUS_EXPR }]),
    JSON.stringify(w2.matchConditions));
  c('jobs webhook matchConditions: managed-by only', eq(w1.matchConditions?.map((m) => m.name), ['managed-by']));
  c('jobs webhook managed-by (CEL) sends a Job with spec.managedBy (new or old) and no other', ...sendsOnlyManaged(w1, ['spec.managedBy']));
  c('cronjobs webhook matchConditions: managed-by only', eq(wc.matchConditions?.map((m) => m.name), ['managed-by']));
  c('cronjobs webhook managed-by (CEL) sends a CronJob with spec.jobTemplate.spec.managedBy (new or old) and no other',
    ...sendsOnlyManaged(wc, ['spec.jobTemplate.spec.managedBy']));
  c('status webhook managed-by (CEL) sends only a Job delegated to an external controller', ...sendsOnlyExternal(w2, 'spec.managedBy', ['kubernetes.io/job-controller']));
  for (const [n, w] of [['jobs', w1], ['cronjobs', wc], ['status', w2]]) {
    c(`${n} webhook sideEffects None`, w.sideEffects === 'None');
    c(`${n} webhook admissionReviewVersions [v1, v1beta1]`, eq(w.admissionReviewVersions, ['v1', 'v1beta1']));
    c(`${n} webhook matchPolicy Equivalent`, w.matchPolicy === 'Equivalent');
    c(`${n} webhook timeoutSeconds 5`, w.timeoutSeconds === 5);
    c(`${n} webhook scope Namespaced`, w.rules.every((r) => r.scope === 'Namespaced'));
    c(`${n} webhook calls the webhook Service at /validate`, w.clientConfig?.service?.name === fullname &&
      w.clientConfig.service.namespace === namespace && w.clientConfig.service.path === '/validate' &&
      (w.clientConfig.service.port ?? 443) === svc?.spec?.ports?.[0]?.port && !w.clientConfig.url, JSON.stringify(w.clientConfig?.service));
    const exprs = w.namespaceSelector?.matchExpressions || [];
    const notIn = exprs.find((e) => e.key === 'kubernetes.io/metadata.name' && e.operator === 'NotIn');
    c(`${n} webhook namespaceSelector excludes kube-system and ${namespace}`, !!notIn &&
      eq(sorted(notIn.values), sorted([...new Set(['kube-system', namespace])])), JSON.stringify(w.namespaceSelector));
    c(`${n} webhook has no objectSelector by default`, !w.objectSelector || Object.keys(w.objectSelector).length === 0);
  }
  // helm test hook
  const test = one(docs, 'Pod', isTestHook);
  c('helm test hook pod exists', !!test);
  if (test) {
    const tc = test.spec.containers[0];
    const env = Object.fromEntries((tc.env || []).map((e) => [e.name, e.value]));
    c('test pod uses curlimages/curl', /^curlimages\/curl:/.test(tc.image), tc.image);
    c('test pod posts to the webhook Service', env.URL === `https://${fullname}.${namespace}.svc:443/validate?timeout=5s`, env.URL);
    let review;
    try { review = JSON.parse(env.REVIEW); } catch { review = null; }
    c('test AdmissionReview is a v1 Job CREATE with managedBy Acme.io/foo', review?.apiVersion === 'admission.k8s.io/v1' &&
      review.kind === 'AdmissionReview' && review.request?.operation === 'CREATE' && review.request?.kind?.kind === 'Job' &&
      review.request?.object?.spec?.managedBy === 'Acme.io/foo' && !!review.request.uid);
    const script = (tc.command || []).join('\n') + (tc.args || []).join('\n');
    c('test pod expects HTTP 200, the uid and allowed false', /"allowed": \*false/.test(script) && /= 200/.test(script) &&
      script.includes(review?.request?.uid ?? '@@'));
    c('test pod verifies TLS (no -k/--insecure)', /--cacert/.test(script) && !/\s(-k|--insecure)\s/.test(script));
    c('test pod is PSS restricted', test.spec.automountServiceAccountToken === false && tc.securityContext?.allowPrivilegeEscalation === false &&
      eq(tc.securityContext?.capabilities?.drop, ['ALL']) && test.spec.securityContext?.runAsNonRoot === true &&
      test.spec.securityContext?.seccompProfile?.type === 'RuntimeDefault');
    c('test pod never runs as jobguard\'s ServiceAccount', test.spec.serviceAccountName !== pod.serviceAccountName || !test.spec.serviceAccountName);
    if (env.CA_SOURCE === 'webhookConfiguration') testViaApi(c, docs, test, env, { fullname, namespace, vwc });
  }
  return { dep, pod, ctr, args, vol, vwc, w1, w2, test };
}

/**
 * caSource webhookConfiguration: the test pod reads the caBundle of the release's webhook
 * configuration with a short-lived token of its own ServiceAccount, which may get that one object
 * and nothing else; the ServiceAccount and its RBAC are test hooks created before the pod.
 */
function testViaApi(c, docs, test, env, { fullname, namespace, vwc }) {
  const sa = one(docs, 'ServiceAccount', isTestHook);
  const role = one(docs, 'ClusterRole', isTestHook);
  const binding = one(docs, 'ClusterRoleBinding', isTestHook);
  c('test pod reads the caBundle of the release\'s ValidatingWebhookConfiguration from the API server',
    env.VWC === vwc?.metadata?.name && env.VWC === fullname && env.APISERVER === 'https://kubernetes.default.svc' && !env.CA_BUNDLE,
  JSON.stringify(env));
  const vol = (test.spec.volumes || []).find((v) => v.projected);
  const src = vol?.projected?.sources || [];
  const tok = src.find((x) => x.serviceAccountToken)?.serviceAccountToken;
  const mnt = (test.spec.containers[0].volumeMounts || []).find((m) => m.name === vol?.name);
  c('test pod: a projected token of at most 10 minutes and the cluster CA at /var/run/secrets/jobguard-test, no TLS Secret',
    tok?.path === 'token' && tok.expirationSeconds <= 600 && mnt?.mountPath === '/var/run/secrets/jobguard-test' && mnt.readOnly === true &&
    src.some((x) => x.configMap?.name === 'kube-root-ca.crt' && eq(x.configMap.items, [{ key: 'ca.crt', path: 'ca.crt' }])) &&
    !(test.spec.volumes || []).some((v) => v.secret), JSON.stringify(test.spec.volumes));
  c('test ServiceAccount: a test hook created before the pod, runs the pod, no automounted token',
    !!sa && test.spec.serviceAccountName === sa.metadata.name && sa.automountServiceAccountToken === false &&
    Number(sa.metadata.annotations['helm.sh/hook-weight'] ?? 0) < Number(test.metadata.annotations?.['helm.sh/hook-weight'] ?? 0),
  JSON.stringify(sa?.metadata));
  c('test ClusterRole: get on the release\'s ValidatingWebhookConfiguration only', eq(role?.rules, [{
    apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: [fullname], verbs: ['get'] }]),
  JSON.stringify(role?.rules));
  c('test ClusterRoleBinding: the test ClusterRole to the test ServiceAccount only, created before the pod',
    eq(binding?.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role?.metadata?.name }) &&
    eq(binding?.subjects, [{ kind: 'ServiceAccount', name: sa?.metadata?.name, namespace }]) &&
    Number(binding?.metadata?.annotations?.['helm.sh/hook-weight'] ?? 0) < Number(test.metadata.annotations?.['helm.sh/hook-weight'] ?? 0),
  JSON.stringify(binding));
  c('test hooks are deleted once the test passes, and before the next run', [sa, role, binding, test].every((d) =>
    d?.metadata?.annotations?.['helm.sh/hook-delete-policy'] === 'before-hook-creation,hook-succeeded'));
}

function certChecks(ctx, label, secret, caBundle, { fullname = 'jobguard', namespace = 'default' } = {}) {
  const c = (n, cond, d) => ctx.check(`${label}: ${n}`, cond, d);
  const caPem = b64(secret.data['ca.crt'] || '');
  const ca = x509(caPem);
  const leaf = x509(b64(secret.data['tls.crt'] || ''));
  let key;
  try { key = crypto.createPrivateKey(b64(secret.data['tls.key'] || '')); } catch { key = null; }
  c('Secret has ca.crt, tls.crt, tls.key that parse', !!ca && !!leaf && !!key);
  if (!ca || !leaf || !key) return {};
  c('caBundle equals the CA in the Secret', caBundle === secret.data['ca.crt'], 'caBundle differs from Secret ca.crt');
  c('CA is a CA', ca.ca === true);
  c('serving certificate is signed by the CA', leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
  c('tls.key matches tls.crt', leaf.checkPrivateKey(key));
  c('keys are ECDSA P-256', ca.publicKey.asymmetricKeyDetails?.namedCurve === 'prime256v1' &&
    leaf.publicKey.asymmetricKeyDetails?.namedCurve === 'prime256v1');
  const want = [fullname, `${fullname}.${namespace}`, `${fullname}.${namespace}.svc`, `${fullname}.${namespace}.svc.cluster.local`];
  const sans = (leaf.subjectAltName || '').split(', ').map((s) => s.replace(/^DNS:/, ''));
  c('serving certificate SANs are the Service names', eq(sorted(sans), sorted(want)), leaf.subjectAltName);
  const days = (x) => (new Date(x.validTo) - new Date(x.validFrom)) / 86400e3;
  c('serving certificate valid ~365 days', Math.abs(days(leaf) - 365) < 2, String(days(leaf)));
  c('CA valid ~3650 days', Math.abs(days(ca) - 3650) < 2, String(days(ca)));
  const na = Number(secret.metadata.annotations?.['jobguard.io/serving-cert-not-after']);
  c('not-after annotation matches tls.crt', Math.abs(na * 1000 - new Date(leaf.validTo)) < 120e3, `${na} vs ${leaf.validTo}`);
  return { ca, leaf };
}

// ---------------------------------------------------------------- scenarios
/** The existingSecret caBundle: from certs/generate.sh when run.sh provides it. */
const caBundle = () => (opt.caBundleFile ? fs.readFileSync(opt.caBundleFile, 'utf8').trim()
  : Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64'));

function scenarios(ctx) {
  const c = (n, cond, d) => ctx.check(n, cond, d);

  // 1. defaults (helm certificate mode)
  const def = renderOk(ctx, 'default', {});
  if (def) {
    const docs = def.docs;
    const core = assertCore(ctx, 'default', docs);
    const kinds = sorted(docs.map((d) => d.kind));
    c('default: objects are Deployment, PDB, Secret, 2 Services, ServiceAccount, VWC; the test Pod, ServiceAccount, ClusterRole and binding',
      eq(kinds, sorted(['Deployment', 'PodDisruptionBudget', 'Pod', 'Secret', 'Service', 'Service', 'ServiceAccount', 'ValidatingWebhookConfiguration',
        'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'])), kinds.join());
    const pdb = one(docs, 'PodDisruptionBudget');
    c('default: PDB minAvailable 1 selecting the pods', pdb?.spec?.minAvailable === 1 &&
      selects(pdb.spec.selector?.matchLabels, core?.dep?.spec?.template?.metadata?.labels));
    const secret = one(docs, 'Secret');
    c('default: TLS Secret is kubernetes.io/tls and mounted by the pods', secret?.type === 'kubernetes.io/tls' &&
      core?.vol?.secret?.secretName === secret.metadata.name, `${secret?.type} ${core?.vol?.secret?.secretName}`);
    if (secret && core?.w1) {
      c('default: both webhooks carry the same caBundle', !!core.w1.clientConfig.caBundle &&
        core.w1.clientConfig.caBundle === core.w2.clientConfig.caBundle);
      certChecks(ctx, 'default certs', secret, core.w1.clientConfig.caBundle);
      c('default: the test pod does not mount the TLS Secret (it verifies with the webhook configuration\'s caBundle)',
        !!core.test && !core.test.spec.volumes?.some((v) => v.secret));
    }
    c('default: no NetworkPolicy, ServiceMonitor or cert-manager objects',
      docs.every((d) => !['NetworkPolicy', 'ServiceMonitor', 'Certificate', 'Issuer'].includes(d.kind)));
  }
  // CRD targets: per kind, a CREATE/UPDATE webhook whose condition reads the kind's managedBy path
  // and nested paths, and a status webhook whose condition reads its managedBy path.
  // All 15 built-in kinds are on by default; targets.<key>.enabled: false leaves one out.
  const TARGETS = {
    jobset: ['jobset.x-k8s.io', ['v1alpha2'], 'jobsets', 'spec.managedBy', ['jobset.sigs.k8s.io/jobset-controller'], ['spec.replicatedJobs[*].template.spec.managedBy']],
    trainjob: ['trainer.kubeflow.org', ['v1alpha1'], 'trainjobs', 'spec.managedBy', ['trainer.kubeflow.org/trainjob-controller'], []],
    pytorchjob: ['kubeflow.org', ['v1'], 'pytorchjobs', 'spec.runPolicy.managedBy', ['kubeflow.org/training-operator'], []],
    tfjob: ['kubeflow.org', ['v1'], 'tfjobs', 'spec.runPolicy.managedBy', ['kubeflow.org/training-operator'], []],
    xgboostjob: ['kubeflow.org', ['v1'], 'xgboostjobs', 'spec.runPolicy.managedBy', ['kubeflow.org/training-operator'], []],
    paddlejob: ['kubeflow.org', ['v1'], 'paddlejobs', 'spec.runPolicy.managedBy', ['kubeflow.org/training-operator'], []],
    jaxjob: ['kubeflow.org', ['v1'], 'jaxjobs', 'spec.runPolicy.managedBy', ['kubeflow.org/training-operator'], []],
    mpijob: ['kubeflow.org', ['v1', 'v2beta1'], 'mpijobs', 'spec.runPolicy.managedBy', ['kubeflow.org/training-operator', 'kubeflow.org/mpi-operator'], []],
    rayjob: ['ray.io', ['v1'], 'rayjobs', 'spec.managedBy', ['ray.io/kuberay-operator'], ['spec.rayClusterSpec.managedBy']],
    raycluster: ['ray.io', ['v1'], 'rayclusters', 'spec.managedBy', ['ray.io/kuberay-operator'], []],
    rayservice: ['ray.io', ['v1'], 'rayservices', 'spec.managedBy', ['ray.io/kuberay-operator'], ['spec.rayClusterConfig.managedBy']],
    raycronjob: ['ray.io', ['v1'], 'raycronjobs', 'spec.managedBy', ['ray.io/kuberay-operator'], ['spec.jobTemplate.managedBy', 'spec.jobTemplate.rayClusterSpec.managedBy']],
    appwrapper: ['workload.codeflare.dev', ['v1beta2'], 'appwrappers', 'spec.managedBy', ['workload.codeflare.dev/appwrapper-controller'], []],
    pipelinerun: ['tekton.dev', ['v1', 'v1beta1'], 'pipelineruns', 'spec.managedBy', ['tekton.dev/pipeline'], []],
    taskrun: ['tekton.dev', ['v1', 'v1beta1'], 'taskruns', 'spec.managedBy', ['tekton.dev/pipeline'], []],
  };
  const allTargets = (enabled) => Object.fromEntries(Object.keys(TARGETS).map((k) => [k, { enabled: typeof enabled === 'function' ? enabled(k) : enabled }]));
  // The webhook names of the built-in kinds that are on, in the chart's order (key order, each kind's pair).
  const kindHooks = (keys, status = true) => sorted(keys).flatMap((k) => (status ? [`${k}.jobguard.io`, `${k}-status.jobguard.io`] : [`${k}.jobguard.io`]));
  const JOBS_HOOKS = ['jobs.jobguard.io', 'cronjobs.jobguard.io', 'jobs-status.jobguard.io'];
  const names = (docs) => webhookDoc(docs)?.webhooks?.map((w) => w.name);
  // The CEL accessor of a path (the status condition must read exactly it).
  const accessor = (path) => `object.${path}`;
  // on: {key: true}, or 'replaced' (a policy row supplies the data: checked on its own)
  const checkTargets = (label, docs, on) => {
    const v = one(docs, 'ValidatingWebhookConfiguration');
    for (const n of Object.keys(TARGETS)) {
      const [g, vers, res, path, reserved, nested] = TARGETS[n];
      const mws = (v?.webhooks || []).filter((w) => w.name === `${n}.jobguard.io`);
      const sws = (v?.webhooks || []).filter((w) => w.name === `${n}-status.jobguard.io`);
      const [mw] = mws;
      const [sw] = sws;
      if (on[n] === 'replaced') continue;
      if (!on[n]) { c(`${label}: ${n} webhooks absent`, !mw && !sw && !(v?.webhooks || []).some((w) => w.rules.some((r) => r.resources[0].split('/')[0] === res))); continue; }
      c(`${label}: ${n} webhook rule ${res} CREATE/UPDATE`, mws.length === 1 && eq(mw.rules, [{ apiGroups: [g], apiVersions: vers, operations: ['CREATE', 'UPDATE'], resources: [res], scope: 'Namespaced' }]),
        JSON.stringify(mw?.rules));
      c(`${label}: ${n} webhook failurePolicy Fail`, mw?.failurePolicy === 'Fail');
      c(`${label}: ${n} webhook matchConditions: managed-by only`, eq(mw?.matchConditions?.map((m) => m.name), ['managed-by']));
      c(`${label}: ${n} webhook managed-by (CEL) sends ${[path, ...nested].join(', ')} (new or old) and no other`, ...sendsOnlyManaged(mw, [path, ...nested]));
      c(`${label}: ${n} status webhook rule ${res}/status UPDATE`, sws.length === 1 && eq(sw.rules, [{ apiGroups: [g], apiVersions: vers, operations: ['UPDATE'], resources: [`${res}/status`], scope: 'Namespaced' }]));
      c(`${label}: ${n} status matchCondition reads ${path}`, eq(sw?.matchConditions?.map((m) => m.name), ['external-managed-by']) &&
        sw.matchConditions[0].expression.includes(`${accessor(path)} in [${reserved.map((r) => `'${r}'`).join(', ')}]`), JSON.stringify(sw?.matchConditions));
      c(`${label}: ${n} status failurePolicy Fail (Policy-StatusWriters in deny)`, sw?.failurePolicy === 'Fail');
      c(`${label}: ${n} status matchCondition (CEL) is true only for a ${path} other than ${reserved.join(', ')}`, ...sendsOnlyExternal(sw, path, reserved));
    }
  };
  if (def) {
    checkTargets('default', def.docs, Object.fromEntries(Object.keys(TARGETS).map((k) => [k, true])));
    c('default: webhooks are jobs, cronjobs, jobs-status and the 15 kinds\' <kind> and <kind>-status webhooks', eq(names(def.docs),
      [...JOBS_HOOKS, ...kindHooks(Object.keys(TARGETS))]), JSON.stringify(names(def.docs)));
  }
  // Toggling one kind off removes its two webhooks and nothing else.
  const oneOff = renderOk(ctx, 'targets jaxjob off', { set: ['targets.jaxjob.enabled=false'] });
  if (oneOff) {
    checkTargets('targets jaxjob off', oneOff.docs, Object.fromEntries(Object.keys(TARGETS).map((k) => [k, k !== 'jaxjob'])));
    if (def) {
      const strip = (docs) => JSON.parse(JSON.stringify(webhookDoc(docs)?.webhooks || [], (k, x) => (k === 'caBundle' ? undefined : x)));
      const want = strip(def.docs).filter((w) => w.name !== 'jaxjob-status.jobguard.io' && w.name !== 'jaxjob.jobguard.io');
      c('targets jaxjob off: the default webhooks less exactly jaxjob.jobguard.io and jaxjob-status.jobguard.io', eq(strip(oneOff.docs), want));
    }
  }
  const someOn = { jobset: true, mpijob: true };
  const partial = renderOk(ctx, 'targets partial', { values: { targets: allTargets((k) => !!someOn[k]) } });
  if (partial) checkTargets('targets partial', partial.docs, someOn);
  const none = renderOk(ctx, 'targets none', { values: { targets: allTargets(false) } });
  if (none) {
    checkTargets('targets none', none.docs, {});
    c('targets none: only jobs.jobguard.io, cronjobs.jobguard.io and jobs-status.jobguard.io', eq(names(none.docs), JOBS_HOOKS));
  }
  renderFails(ctx, 'targets bad enabled type', { values: { targets: { jobset: { enabled: 'yes' } } } }, /enabled/);
  renderFails(ctx, 'targets unknown kind', { values: { targets: { cronjob: { enabled: true } } } }, /cronjob|additional/i);

  // The policy file's own target rows (POLICY.targets): a row for a built-in kind replaces that
  // kind's data under its names (JAXJob, MPIJob); the others get webhooks named
  // <resource>.<group>.jobguard.io and <resource>.<group>.status.jobguard.io (Widget), or
  // <resource>.jobguard.io and <resource>.status.jobguard.io (Gadget, core group).
  const pt = renderOk(ctx, 'policy targets', { values: { policy: POLICY } });
  // run.sh checks this render against `jobguard policy show` of the same policy (rows.mjs)
  if (pt && ctx === main) fs.writeFileSync(path.join(opt.work, 'policy-render.yaml'), pt.out);
  if (pt) {
    const v = webhookDoc(pt.docs);
    c('policy targets: webhook names are unique, fully qualified DNS names', webhookNamesOk(v), JSON.stringify(names(pt.docs)));
    const rules = (res) => (v?.webhooks || []).flatMap((w) => w.rules).filter((r) => eq(r.resources, [res]));
    const hook = (name) => (v?.webhooks || []).filter((w) => w.name === name);
    checkTargets('policy targets', pt.docs, { ...Object.fromEntries(Object.keys(TARGETS).map((k) => [k, true])), mpijob: 'replaced', jaxjob: 'replaced' });
    c('policy targets: webhook names are the default ones plus widgets.example.com and gadgets, each with its status webhook',
      eq(names(pt.docs), [...JOBS_HOOKS, ...kindHooks(Object.keys(TARGETS)), 'widgets.example.com.jobguard.io', 'widgets.example.com.status.jobguard.io',
        'gadgets.jobguard.io', 'gadgets.status.jobguard.io']), JSON.stringify(names(pt.docs)));
    const jax = hook('jaxjob.jobguard.io');
    c('policy targets: the JAXJob row replacing the built-in gives one jaxjobs rule and one jaxjob-status webhook',
      rules('jaxjobs').length === 1 && hook('jaxjob-status.jobguard.io').length === 1 && rules('jaxjobs/status').length === 1);
    c('policy targets: the JAXJob row\'s nested path spec.replicaSpecs[*].managedBy is read by jaxjob.jobguard.io',
      ...sendsOnlyManaged(jax[0], ['spec.runPolicy.managedBy', 'spec.replicaSpecs[*].managedBy']));
    const mpi = hook('mpijob-status.jobguard.io');
    c('policy targets: the MPIJob row replaces the built-in data (v2beta1, kubeflow.org/mpi-operator only)',
      rules('mpijobs').length === 1 && eq(rules('mpijobs')[0].apiVersions, ['v2beta1']) && mpi.length === 1 &&
      eq(mpi[0].rules, [{ apiGroups: ['kubeflow.org'], apiVersions: ['v2beta1'], operations: ['UPDATE'], resources: ['mpijobs/status'], scope: 'Namespaced' }]) &&
      mpi[0].matchConditions[0].expression.includes("object.spec.runPolicy.managedBy in ['kubeflow.org/mpi-operator']"),
    JSON.stringify([rules('mpijobs'), mpi]));
    c('policy targets: widgets.example.com.jobguard.io: widgets CREATE/UPDATE (example.com v1, v1beta1), Fail', hook('widgets.example.com.jobguard.io').length === 1 &&
      eq(hook('widgets.example.com.jobguard.io')[0].rules, [{ apiGroups: ['example.com'], apiVersions: ['v1', 'v1beta1'], operations: ['CREATE', 'UPDATE'], resources: ['widgets'], scope: 'Namespaced' }]) &&
      hook('widgets.example.com.jobguard.io')[0].failurePolicy === 'Fail', JSON.stringify(rules('widgets')));
    c('policy targets: widgets.example.com.jobguard.io managed-by (CEL) reads spec.control.managedBy and spec.parts[*].template.spec.managedBy',
      ...sendsOnlyManaged(hook('widgets.example.com.jobguard.io')[0], ['spec.control.managedBy', 'spec.parts[*].template.spec.managedBy']));
    const wsw = hook('widgets.example.com.status.jobguard.io');
    c('policy targets: widgets.example.com.status.jobguard.io: widgets/status UPDATE, matchCondition on spec.control.managedBy, Fail',
      wsw.length === 1 && eq(wsw[0].rules, [{ apiGroups: ['example.com'], apiVersions: ['v1', 'v1beta1'], operations: ['UPDATE'], resources: ['widgets/status'], scope: 'Namespaced' }]) &&
      wsw[0].matchConditions[0].expression.includes("object.spec.control.managedBy in ['example.com/widget-controller']") &&
      wsw[0].failurePolicy === 'Fail' && wsw[0].sideEffects === 'None' && wsw[0].timeoutSeconds === 5 &&
      eq(wsw[0].namespaceSelector, wh(pt.docs, 'jobs-status.jobguard.io')?.namespaceSelector), JSON.stringify(wsw));
    c('policy targets: every matchCondition parses as CEL', v?.webhooks?.every((w) => (w.matchConditions || []).every((m) => !celError(m.expression))));
    c('policy targets: mpijob status matchCondition (CEL) is true only for a managedBy other than kubeflow.org/mpi-operator',
      ...sendsOnlyExternal(mpi[0], 'spec.runPolicy.managedBy', ['kubeflow.org/mpi-operator']));
    c('policy targets: widgets status matchCondition (CEL) is true only for a spec.control.managedBy other than its controller',
      ...sendsOnlyExternal(wsw[0], 'spec.control.managedBy', ['example.com/widget-controller']));
    const gsw = hook('gadgets.status.jobguard.io');
    c("policy targets: gadgets status matchCondition (CEL) is true only for a spec['managed-by'].namespace other than acme's \\ runner",
      ...sendsOnlyExternal(gsw[0], 'spec.managed-by.namespace', ["acme's \\ runner"]));
    c('policy targets: gadgets.jobguard.io managed-by (CEL) reads spec[\'managed-by\'].namespace', ...sendsOnlyManaged(hook('gadgets.jobguard.io')[0], ['spec.managed-by.namespace']));
    c('policy targets: gadgets (core group): rules with apiGroups [""], and a CEL matchCondition with quoted segments and escaped value',
      rules('gadgets').length === 1 && eq(rules('gadgets')[0].apiGroups, ['']) && gsw.length === 1 &&
      eq(gsw[0].rules, [{ apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['gadgets/status'], scope: 'Namespaced' }]) &&
      gsw[0].matchConditions[0].expression.includes("'managed-by' in object.spec && object.spec['managed-by'] != null") &&
      gsw[0].matchConditions[0].expression.includes("!(object.spec['managed-by']['namespace'] in ['acme\\'s \\\\ runner'])"),
    JSON.stringify([rules('gadgets'), gsw?.[0]?.matchConditions]));
  }
  // A kind's enabled toggle still decides when the policy replaces its data; the policy's own kinds
  // render without any built-in kind.
  const ptOff = renderOk(ctx, 'policy targets, built-in kinds off', { values: { policy: POLICY, targets: allTargets(false) } });
  if (ptOff) {
    checkTargets('policy targets, built-in kinds off', ptOff.docs, {});
    c('policy targets, built-in kinds off: webhooks are jobs, cronjobs, jobs-status, and widgets and gadgets with their status webhooks',
      eq(names(ptOff.docs), [...JOBS_HOOKS, 'widgets.example.com.jobguard.io', 'widgets.example.com.status.jobguard.io', 'gadgets.jobguard.io', 'gadgets.status.jobguard.io']));
  }
  const ptNoStatus = renderOk(ctx, 'policy targets, status webhook disabled', { values: { policy: POLICY, webhook: { status: { enabled: false } } } });
  if (ptNoStatus) c('policy targets, status webhook disabled: jobs, cronjobs and every kind\'s CREATE/UPDATE webhook, no status webhook',
    eq(names(ptNoStatus.docs), ['jobs.jobguard.io', 'cronjobs.jobguard.io', ...kindHooks(Object.keys(TARGETS), false), 'widgets.example.com.jobguard.io', 'gadgets.jobguard.io']));
  const policyTarget = (t) => ({ group: 'example.com', versions: ['v1'], kind: 'Widget', resource: 'widgets', managedByPath: 'spec.managedBy', reservedValue: 'example.com/widget-controller', ...t });
  renderFails(ctx, 'policy row for batch CronJob fails (jobguard refuses it too)', { values: { policy: { targets: [policyTarget({ group: 'batch', kind: 'CronJob', resource: 'cronjobs', managedByPath: 'spec.jobTemplate.spec.managedBy', reservedValue: 'kubernetes.io/job-controller' })] } } },
    /policy\.targets\[0\]: batch CronJob is the API server's own kind/);
  const longGroup = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(25), 'example.com'].join('.'); // 229 bytes: widgets.<group>.status.jobguard.io would be 256
  const lg = renderOk(ctx, 'policy target with a 229-byte group', { values: { policy: { targets: [policyTarget({ group: longGroup })] } } });
  if (lg) {
    const h = crypto.createHash('sha256').update(longGroup).digest('hex').slice(0, 16);
    c('policy target with a 229-byte group: webhooks named with the sha256 of the group', webhookNamesOk(webhookDoc(lg.docs)) &&
      eq(wh(lg.docs, `widgets.${h}.jobguard.io`)?.rules?.[0]?.apiGroups, [longGroup]) && eq(wh(lg.docs, `widgets.${h}.status.jobguard.io`)?.rules?.[0]?.apiGroups, [longGroup]),
    JSON.stringify(names(lg.docs)?.slice(-2)));
  }
  renderFails(ctx, 'policy target for a resource a built-in kind sends fails', { values: { policy: { targets: [policyTarget({ group: 'kubeflow.org', kind: 'MPIJobV3', resource: 'mpijobs' })] } } },
    /resource "mpijobs" of group "kubeflow.org" is already sent by targets\.mpijob/);
  renderFails(ctx, 'policy target for batch jobs of another kind fails', { values: { policy: { targets: [policyTarget({ group: 'batch', kind: 'Work', resource: 'jobs' })] } } },
    /resource "jobs" of group "batch" is already sent by the jobs webhook/);
  renderFails(ctx, 'status webhook name taken by a target fails', { set: ['webhook.status.name=jobset-status.jobguard.io'] },
    /jobset-status\.jobguard\.io is already used by webhook\.status\.name/);
  renderFails(ctx, 'jobs webhook named after a target kind fails', { set: ['webhook.jobs.name=jobset.jobguard.io'] }, /jobset\.jobguard\.io is already used by webhook\.jobs\.name/);
  renderFails(ctx, 'cronjobs webhook named as the jobs webhook fails', { set: ['webhook.jobs.cronJobName=jobs.jobguard.io'] }, /webhook\.jobs\.name and webhook\.jobs\.cronJobName must differ/);
  renderFails(ctx, 'schema rejects [*] in a policy managedByPath', { values: { policy: { targets: [policyTarget({ managedByPath: 'spec.parts[*].managedBy' })] } } },
    /policy[./]targets[./]0[./]managedByPath/, { lint: true });
  renderFails(ctx, 'managedByPath with [*] fails in the template too (--skip-schema-validation)',
    { values: { policy: { targets: [policyTarget({ managedByPath: 'spec.parts[*].managedBy' })] } }, extraArgs: ['--skip-schema-validation'] },
    /policy\.targets \(example\.com\/Widget\): managedByPath "spec\.parts\[\*\]\.managedBy" must be field names joined by dots/);
  renderFails(ctx, 'a nested path with [*] at its end fails in the template (--skip-schema-validation)',
    { values: { policy: { targets: [policyTarget({ nestedPaths: [{ path: 'spec.parts[*]', reservedValue: '' }] })] } }, extraArgs: ['--skip-schema-validation'] },
    /policy\.targets \(example\.com\/Widget\): nested path "spec\.parts\[\*\]" must be field names joined by dots/);
  renderFails(ctx, 'schema rejects an upper-case policy target group', { values: { policy: { targets: [policyTarget({ group: 'Example.com' })] } } },
    /policy[./]targets[./]0[./]group/, { lint: true });
  // A rule ID jobguard does not know would pass the chart, be refused by the running pods (which
  // keep the old policy) and stop the next restart: the schema knows the IDs (run.sh checks the
  // list against `jobguard rules`) and the modes.
  renderFails(ctx, 'schema rejects an unknown rule ID in policy.modes', { values: { policy: { modes: { 'Policy-AllowedController': 'audit' } } } },
    /Policy-AllowedController/, { lint: true });
  renderOk(ctx, 'schema accepts * and rule IDs in policy.modes', { values: { policy: { modes: { '*': 'audit', 'Policy-AllowedControllers': 'warn', 'Target-DelegationUnsupported': 'off' } } } });

  // Monitoring: off by default; when on, a PrometheusRule and the dashboard ConfigMap (run.sh checks
  // their queries with promtool against a running jobguard).
  const mon = renderOk(ctx, 'monitoring', { values: { metrics: { prometheusRule: { enabled: true }, dashboard: { enabled: true } } } });
  if (mon) {
    const pr = one(mon.docs, 'PrometheusRule');
    const alerts = (pr?.spec?.groups || []).flatMap((g) => g.rules.map((r) => r.alert));
    c('monitoring: a PrometheusRule alerting on down, certificate expiry, refused policy, errors, shedding, latency and denials, and on the API server\'s calls to the webhooks',
      eq(alerts, ['JobguardDown', 'JobguardCertificateExpiresSoon', 'JobguardCertificateExpiresVerySoon', 'JobguardPolicyFileRefused',
        'JobguardWebhookErrors', 'JobguardRequestsShed', 'JobguardSlowAdmission', 'JobguardDenials',
        'JobguardWebhookCallsFailing', 'JobguardWebhookFailingOpen', 'JobguardWebhookCallErrors', 'JobguardWebhookNearTimeout']), JSON.stringify(alerts));
    const apiRules = (pr?.spec?.groups || []).find((g) => g.name === 'jobguard-apiserver')?.rules || [];
    const names = (webhookDoc(mon.docs)?.webhooks || []).map((w) => w.name);
    c('monitoring: the API-server-side alerts select job="apiserver" and exactly the names of the rendered webhooks (33)', names.length === 33 && apiRules.length === 4 &&
      apiRules.every((r) => { const m = r.expr.match(/job="apiserver",name=~"([^"]*)"/); return m && eq(m[1].split('|').map((x) => x.replaceAll('\\\\.', '.')), names); }),
    JSON.stringify(apiRules.map((r) => r.expr.slice(0, 120))));
    c('monitoring: the alerts select the metrics Service the ServiceMonitor scrapes, in the release namespace',
      (pr?.spec?.groups?.[0]?.rules || []).every((r) => r.expr.includes('job="jobguard-metrics",namespace="default"')));
    const cm = one(mon.docs, 'ConfigMap', (d) => d.metadata.name === 'jobguard-dashboard');
    let dash = null;
    try { dash = JSON.parse(cm?.data?.['jobguard.json']); } catch { /* checked next */ }
    c('monitoring: the dashboard ConfigMap holds the dashboard JSON, labelled for the Grafana sidecar',
      dash?.uid === 'jobguard' && cm?.metadata?.labels?.grafana_dashboard === '1' && dash.panels.length >= 8);
  }
  const noMon = renderOk(ctx, 'no monitoring by default', {});
  if (noMon) c('no monitoring by default: no PrometheusRule, no dashboard', find(noMon.docs, 'PrometheusRule').length === 0 &&
    !find(noMon.docs, 'ConfigMap').some((d) => d.metadata.name.endsWith('-dashboard')));

  // The policy check hook: the rendered policy checked by jobguard before any pod sees it.
  const hk = renderOk(ctx, 'policy check hook', { values: { policy: POLICY } });
  if (hk) {
    const isHook = (d) => /-policy-check$/.test(d.metadata?.name || '');
    const cm = one(hk.docs, 'ConfigMap', isHook), job = one(hk.docs, 'Job', isHook);
    const release = one(hk.docs, 'ConfigMap', (d) => /-policy$/.test(d.metadata.name));
    const ann = (d) => d?.metadata?.annotations || {};
    c('policy check hook: a ConfigMap and a Job, pre-install and pre-upgrade hooks, ConfigMap first',
      ann(cm)['helm.sh/hook'] === 'pre-install,pre-upgrade' && ann(job)['helm.sh/hook'] === 'pre-install,pre-upgrade' &&
      Number(ann(cm)['helm.sh/hook-weight']) < Number(ann(job)['helm.sh/hook-weight']), JSON.stringify([ann(cm), ann(job)]));
    c('policy check hook: it checks the very policy.json the pods mount', !!release && cm?.data?.['policy.json'] === release.data['policy.json']);
    const pod = job?.spec?.template?.spec, ctr = pod?.containers?.[0];
    c('policy check hook: the Job runs `jobguard policy check /policy/policy.json` from the hook ConfigMap, once',
      eq([...(ctr?.command || []), ...(ctr?.args || [])], ['/usr/local/bin/jobguard', 'policy', 'check', '--strict', '/policy/policy.json']) &&
      pod?.volumes?.[0]?.configMap?.name === cm?.metadata?.name && job?.spec?.backoffLimit === 0 && pod?.restartPolicy === 'Never',
      JSON.stringify(ctr));
    c('policy check hook: no token, restricted security, its message kept on failure',
      pod?.automountServiceAccountToken === false && ctr?.securityContext?.allowPrivilegeEscalation === false &&
      ctr?.terminationMessagePolicy === 'FallbackToLogsOnError' && job?.metadata?.annotations?.['helm.sh/hook-delete-policy'] === 'before-hook-creation,hook-succeeded');
  }
  const noPol = renderOk(ctx, 'no policy check hook without a policy', {});
  if (noPol) c('no policy check hook without a policy', find(noPol.docs, 'Job').length === 0);
  const off = renderOk(ctx, 'policy check hook disabled', { values: { policy: POLICY, policyCheck: { enabled: false } } });
  if (off) c('policy check hook disabled: no hook Job', find(off.docs, 'Job').length === 0);

  // enforcement (docs/vap.md): vap renders exactly the objects `jobguard vap` printed and nothing
  // else (no Deployment, webhook or certificate), but for the bindings' namespaceSelector: the
  // webhooks' exemptions, from their one definition; both renders them next to the webhook. A set
  // printed for another policy, or with --mode overrides next to the webhook, fails the render.
  if (opt.vapFile) {
    const manifests = fs.readFileSync(opt.vapFile, 'utf8');
    const printed = yaml.loadAll(manifests).filter(Boolean);
    const vapKinds = new Set(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    const bindings = (docs) => docs.filter((d) => d.kind === 'ValidatingAdmissionPolicyBinding');
    const withoutSelector = (l) => l.map((d) => { const x = structuredClone(d); if (x.spec.matchResources) delete x.spec.matchResources.namespaceSelector; if (x.spec.matchResources && !Object.keys(x.spec.matchResources).length) delete x.spec.matchResources; return x; });
    const vap = renderOk(ctx, 'enforcement vap', { values: { enforcement: 'vap', vap: { manifests } } });
    if (vap) {
      c('enforcement vap: only the ValidatingAdmissionPolicies and bindings', vap.docs.length > 0 && vap.docs.every((d) => vapKinds.has(d.kind)), vap.docs.map(docId).join(', '));
      // Helm orders a template's documents by kind; the objects themselves are unchanged
      // (and Helm's toYaml writes keys sorted: compared with keys sorted)
      const canon = (v) => (Array.isArray(v) ? v.map(canon) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])])) : v);
      const sorted = (l) => JSON.stringify(l.map((d) => [docId(d), canon(d)]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
      c('enforcement vap: the objects jobguard vap printed', sorted(withoutSelector(vap.docs)) === sorted(withoutSelector(printed)));
      c('enforcement vap: every object carries the digest of .Values.policy', vap.docs.every((d) => /^[0-9a-f]{64}$/.test(d.metadata.annotations?.['jobguard.io/policy-sha256'] || '')));
    }
    const both = renderOk(ctx, 'enforcement both', { values: { enforcement: 'both', vap: { manifests } } });
    if (both) {
      c('enforcement both: the webhook and its Deployment', !!one(both.docs, 'Deployment') && !!one(both.docs, 'ValidatingWebhookConfiguration'));
      c('enforcement both: and every printed object', both.docs.filter((d) => vapKinds.has(d.kind)).length === printed.length);
      const webSel = wh(both.docs, 'jobs.jobguard.io')?.namespaceSelector;
      c('enforcement both: every binding has the webhooks\' namespaceSelector', bindings(both.docs).length > 0 &&
        bindings(both.docs).every((b) => eq(b.spec.matchResources?.namespaceSelector, webSel)), JSON.stringify(webSel));
    }
    // the exemptions follow the one definition: other excluded namespaces and a label expression
    const exempt = { excludedNamespaces: ['kube-system', 'kube-public'], namespaceSelectorExpressions: [{ key: 'jobguard.io/ignore', operator: 'DoesNotExist' }] };
    const ex = renderOk(ctx, 'enforcement both, namespace exemptions', { namespace: 'ops', values: { enforcement: 'both', vap: { manifests }, webhook: exempt } });
    if (ex) {
      const webSel = wh(ex.docs, 'jobs.jobguard.io')?.namespaceSelector;
      c('enforcement both, namespace exemptions: the bindings\' are the webhooks\'', bindings(ex.docs).every((b) => eq(b.spec.matchResources?.namespaceSelector, webSel)) &&
        eq(webSel?.matchExpressions?.[0]?.values, ['kube-system', 'kube-public', 'ops']), JSON.stringify(webSel));
      // and `jobguard vap` outside the chart prints the same with the same exemptions
      if (opt.jobguard) {
        const r = spawnSync(opt.jobguard, ['vap', '--output', 'json', '--exclude-namespace', 'kube-system', '--exclude-namespace', 'kube-public', '--exclude-namespace', 'ops',
          '--namespace-selector-expression', JSON.stringify(exempt.namespaceSelectorExpressions[0])], { encoding: 'utf8' });
        const own = r.status === 0 ? bindings(JSON.parse(r.stdout).items) : [];
        c('jobguard vap --exclude-namespace/--namespace-selector-expression: the chart\'s exemptions', own.length > 0 && own.every((b) => eq(b.spec.matchResources?.namespaceSelector, webSel)), r.stderr);
      }
    }
    const vapMon = renderOk(ctx, 'enforcement vap with the PrometheusRule', { values: { enforcement: 'vap', vap: { manifests }, metrics: { prometheusRule: { enabled: true } } } });
    if (vapMon) {
      const groups = one(vapMon.docs, 'PrometheusRule')?.spec?.groups || [];
      c('enforcement vap with the PrometheusRule: only the API server\'s policy evaluation alert (no jobguard to scrape, no webhook)',
        eq(groups.map((g) => [g.name, g.rules.map((r) => r.alert)]), [['jobguard-vap', ['JobguardPolicyEvaluationErrors']]]) &&
        groups[0].rules[0].expr.includes('apiserver_validating_admission_policy_check_total{job="apiserver",policy=~"jobguard-.*",error_type!="no_error"}'), JSON.stringify(groups));
    }
    const web = renderOk(ctx, 'enforcement webhook ignores vap.manifests', { values: { vap: { manifests } } });
    if (web) c('enforcement webhook: no ValidatingAdmissionPolicy', !web.docs.some((d) => vapKinds.has(d.kind)));
    // one source of truth: objects printed for another policy, or with --mode overrides
    const digest = printed[0]?.metadata?.annotations?.['jobguard.io/policy-sha256'];
    const polDigest = crypto.createHash('sha256').update(JSON.stringify({ allowUnlistedControllers: false, controllers: [{ name: 'acme.io/a' }] })).digest('hex');
    renderFails(ctx, 'enforcement vap: a set printed for another policy fails, naming both digests', { values: { enforcement: 'vap', vap: { manifests },
      policy: { controllers: [{ name: 'acme.io/a' }], allowUnlistedControllers: false } } }, new RegExp(`sha256 ${digest}, but \\.Values\\.policy has sha256 ${polDigest}`));
    renderFails(ctx, 'enforcement vap: objects without a digest fail', { values: { enforcement: 'vap', vap: { manifests: manifests.replace(/^ {4}jobguard\.io\/policy-sha256: .*\n/mg, '') } } }, /sha256 none, but \.Values\.policy has sha256 [0-9a-f]{64}/);
    if (opt.jobguard) {
      const dir = fs.mkdtempSync(path.join(opt.work, 'vap-'));
      const values = path.join(dir, 'values.yaml');
      const policy = { controllers: [{ name: 'acme.io/<a>', namespaces: ['team-*'] }], allowUnlistedControllers: false, modes: { '*': 'deny', 'ALWAYS-ManagedByFormat': 'warn' } };
      fs.writeFileSync(values, yaml.dump({ enforcement: 'both', policy }));
      const gen = (args) => spawnSync(opt.jobguard, ['vap', '--values', values, ...args], { encoding: 'utf8' });
      const g = gen([]);
      c('jobguard vap --values: prints', g.status === 0, g.stderr);
      const ok = renderOk(ctx, 'enforcement both with jobguard vap --values of the same values', { values: { enforcement: 'both', policy, vap: { manifests: g.stdout } } });
      if (ok) c('enforcement both with jobguard vap --values: the digest is the chart\'s', bindings(ok.docs).length > 0);
      const m = gen(['--mode', 'Policy-AllowedControllers=warn']);
      renderFails(ctx, 'enforcement both: a set printed with --mode fails', { values: { enforcement: 'both', policy, vap: { manifests: m.stdout } } },
        /printed with --mode Policy-AllowedControllers=warn, so its modes contradict the webhook's/);
      renderOk(ctx, 'enforcement vap: a set printed with --mode is the operator\'s choice without a webhook', { values: { enforcement: 'vap', policy, vap: { manifests: m.stdout } } });
    }
  }
  renderFails(ctx, 'enforcement vap without vap.manifests fails', { values: { enforcement: 'vap' } }, /enforcement: vap needs vap.manifests/);
  renderFails(ctx, 'enforcement outside webhook, vap, both fails', { values: { enforcement: 'vpa' } }, /enforcement/, { lint: true });


  if (ctx.wants('NOTES')) {
    const n = notes();
    c('NOTES: helm install prints them', n.ok && /jobguard .* is installed/.test(n.notes || ''), n.err?.trim() || n.notes);
    c('NOTES: no warning with two replicas', n.ok && !/WARNING/.test(n.notes || ''), n.notes);
    c('NOTES: list the 15 CRD kinds with their webhooks', n.ok &&
      /15 CRD kinds, one CREATE\/UPDATE webhook each \(<kind>\.jobguard\.io\), failurePolicy Fail:\n\s+appwrappers\.workload\.codeflare\.dev, .*taskruns\.tekton\.dev/.test(n.notes || '') &&
      /one status webhook per CRD kind \(15\)/.test(n.notes || ''), n.notes);
    c('NOTES: jobs and cronjobs webhooks, and what reaches jobguard', n.ok && /- jobs\.jobguard\.io: jobs CREATE\/UPDATE, failurePolicy Fail\n\s+- cronjobs\.jobguard\.io: cronjobs CREATE\/UPDATE/.test(n.notes || '') &&
      /only when the new or the old object has managedBy/.test(n.notes || ''), n.notes);
    const np = notes({ values: { policy: POLICY, targets: allTargets(false) } });
    c('NOTES: policy target rows are listed (a core-group resource without a trailing dot)', np.ok &&
      /2 CRD kinds, one CREATE\/UPDATE webhook each \(<kind>\.jobguard\.io\), failurePolicy Fail:\n\s+widgets\.example\.com, gadgets\n/.test(np.notes || ''), np.err?.trim() || np.notes);
    const nn = notes({ values: { targets: allTargets(false) } });
    c('NOTES: no CRD line without target rows', nn.ok && !/CRD kinds, one CREATE\/UPDATE webhook|status webhook per CRD kind/.test(nn.notes || ''), nn.notes);
    const nos = notes({ values: { webhook: { objectSelector: { matchLabels: { 'jobguard.io/checked': 'true' } } } } });
    c('NOTES: an objectSelector is warned about', nos.ok && /WARNING: webhook\.objectSelector is set: anyone who may create or label/.test(nos.notes || ''), nos.err?.trim() || nos.notes);
    c('NOTES: no objectSelector warning by default', n.ok && !/objectSelector/.test(n.notes || ''), n.notes);
    const njp = notes({ set: ['webhook.jobs.enabled=false'], values: { policy: { allowUnlistedControllers: false, controllers: [{ name: 'example.com/a' }] } } });
    c('NOTES: Job webhooks off while the policy restricts Jobs: a warning that the allow-list is not enforced on Jobs', njp.ok &&
      /WARNING: webhook\.jobs\.enabled=false but the policy restricts Jobs \(allowUnlistedControllers: false\)/.test(njp.notes || ''), njp.err?.trim() || njp.notes);
    c('NOTES: no such warning with the Job webhooks on', n.ok && !/policy restricts Jobs/.test(n.notes || ''));
    const nau = notes({ values: { policy: { modes: { '*': 'audit' } } } });
    c('NOTES: every rule in audit: every webhook Ignore, and an outage refuses nothing', nau.ok &&
      !/failurePolicy Fail/.test(nau.notes || '') && /What an outage refuses[^\n]*\n  nothing: no rule any webhook enforces is in deny mode/.test(nau.notes || ''), nau.notes);
    c('NOTES: every rule in deny (the default): the Fail webhooks are named as refusing writes during an outage', n.ok &&
      /What an outage refuses[^\n]*\n  the writes sent by the Fail webhooks above \(cronjobs, jobs, jobsStatus, targets, targetsStatus\)/.test(n.notes || ''), n.notes);
    c('NOTES: the exempt namespaces by name, not the selector of the sent ones', n.ok && /Exempt \(never sent to jobguard\): namespaces kube-system, default\n/.test(n.notes || '') &&
      !/Not sent to jobguard/.test(n.notes || ''), n.notes);
    const nj = notes({ set: ['webhook.jobs.enabled=false'] });
    c('NOTES: webhook.jobs.enabled=false is said', nj.ok && /no Job and CronJob webhooks \(webhook\.jobs\.enabled=false\)/.test(nj.notes || ''), nj.err?.trim() || nj.notes);
    c('NOTES: helm mode recommends cert-manager for GitOps renders and names the expiry metric', n.ok &&
      /every render makes a new CA[\s\S]*Use certificates\.mode=certManager/.test(n.notes || '') &&
      /jobguard_certificate_expiry_timestamp_seconds/.test(n.notes || ''), n.notes);
    const ncm = notes({ values: { certificates: { mode: 'certManager' } } });
    c('NOTES: no GitOps advice in certManager mode', ncm.ok && !/every render makes a new CA/.test(ncm.notes || ''), ncm.err?.trim() || ncm.notes);
    c('NOTES: helm test says it verifies with the caBundle the API server holds', n.ok && /verifies jobguard with the caBundle the API server holds/.test(n.notes || ''), n.notes);
    const n1 = notes({ set: ['replicaCount=1'] });
    c('NOTES: replicaCount 1 warns', n1.ok && /WARNING: one replica/.test(n1.notes || ''), n1.err?.trim() || n1.notes);
    c('NOTES: a default install says it denies with jobguard\'s own rules and how to start in audit', n.ok &&
      /Rule modes: deny for every rule policy\.modes does not name\./.test(n.notes || '') &&
      /Target-DelegationUnsupported/.test(n.notes || '') &&
      /--set-json 'policy\.modes=\{"\*":"audit"\}'/.test(n.notes || ''), n.notes);
    const na = notes({ values: { policy: { modes: { '*': 'audit', 'Policy-AllowedControllers': 'deny' } } } });
    c('NOTES: started in audit, it says so and drops the hint', na.ok &&
      /Rule modes: audit for every rule policy\.modes does not name \(1 named\)\./.test(na.notes || '') &&
      /admission audit/.test(na.notes || '') && !/To start without refusing/.test(na.notes || ''), na.err?.trim() || na.notes);
  }

  // 2. another release name and namespace
  const other = renderOk(ctx, 'release prod in jobguard-system', { name: 'prod', namespace: 'jobguard-system' });
  if (other) {
    const core = assertCore(ctx, 'release prod', other.docs, { name: 'prod', namespace: 'jobguard-system', fullname: 'prod-jobguard' });
    const secret = one(other.docs, 'Secret');
    if (secret && core?.w1) certChecks(ctx, 'release prod certs', secret, core.w1.clientConfig.caBundle, { fullname: 'prod-jobguard', namespace: 'jobguard-system' });
  }

  // 3. certificate mode certManager (self-signed CA chain made by the chart)
  const cm = renderOk(ctx, 'certManager', { values: { certificates: { mode: 'certManager' } } });
  if (cm) {
    const docs = cm.docs;
    const core = assertCore(ctx, 'certManager', docs);
    c('certManager: the chart renders no Secret', find(docs, 'Secret').length === 0);
    const issuers = find(docs, 'Issuer');
    const certs = find(docs, 'Certificate');
    const serving = certs.find((x) => !x.spec.isCA);
    const caCert = certs.find((x) => x.spec.isCA === true);
    c('certManager: self-signed Issuer, CA Certificate, CA Issuer, serving Certificate',
      issuers.some((i) => i.spec.selfSigned) && issuers.some((i) => i.spec.ca?.secretName === caCert?.spec?.secretName) &&
      !!caCert && !!serving && issuers.some((i) => i.spec.selfSigned && i.metadata.name === caCert.spec.issuerRef.name));
    c('certManager: serving Certificate is issued by the CA Issuer', issuers.some((i) => i.spec.ca &&
      i.metadata.name === serving?.spec?.issuerRef?.name && (serving.spec.issuerRef.kind ?? 'Issuer') === 'Issuer'));
    c('certManager: serving Certificate writes the Secret the pods mount', serving?.spec?.secretName === core?.vol?.secret?.secretName);
    c('certManager: serving Certificate names the Service', eq(sorted(serving?.spec?.dnsNames),
      sorted(['jobguard', 'jobguard.default', 'jobguard.default.svc', 'jobguard.default.svc.cluster.local'])));
    c('certManager: ECDSA P-256 keys', certs.every((x) => x.spec.privateKey?.algorithm === 'ECDSA' && x.spec.privateKey?.size === 256));
    c('certManager: cert-manager objects use cert-manager.io/v1', [...issuers, ...certs].every((x) => x.apiVersion === 'cert-manager.io/v1'));
    const ann = core?.vwc?.metadata?.annotations?.['cert-manager.io/inject-ca-from'];
    c('certManager: VWC has the CA injector annotation for the serving Certificate', ann === `default/${serving?.metadata?.name}`, ann);
    c('certManager: no caBundle in clientConfig (cert-manager injects it)', core?.vwc?.webhooks?.every((w) => !w.clientConfig.caBundle));
    c('certManager: helm test verifies with the caBundle cert-manager injected into the webhook configuration',
      testEnv(core?.test).CA_SOURCE === 'webhookConfiguration' && testEnv(core?.test).VWC === core?.vwc?.metadata?.name);
  }
  const cmRef = renderOk(ctx, 'certManager with issuerRef', {
    values: { certificates: { mode: 'certManager', certManager: { issuerRef: { name: 'corp-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' } } } },
  });
  if (cmRef) {
    c('certManager with issuerRef: no Issuer objects, one Certificate using the ClusterIssuer',
      find(cmRef.docs, 'Issuer').length === 0 && find(cmRef.docs, 'Certificate').length === 1 &&
      eq(one(cmRef.docs, 'Certificate')?.spec?.issuerRef, { group: 'cert-manager.io', kind: 'ClusterIssuer', name: 'corp-ca' }));
  }

  // 4. certificate mode existingSecret (caBundle from certs/generate.sh when run.sh provides it)
  const bundle = caBundle();
  const ex = renderOk(ctx, 'existingSecret', { values: { certificates: { mode: 'existingSecret', existingSecret: { name: 'my-tls', caBundle: bundle } } } });
  if (ex) {
    const core = assertCore(ctx, 'existingSecret', ex.docs);
    c('existingSecret: the chart renders no Secret and no cert-manager objects',
      ex.docs.every((d) => !['Secret', 'Certificate', 'Issuer'].includes(d.kind)));
    c('existingSecret: pods mount the user Secret', core?.vol?.secret?.secretName === 'my-tls', core?.vol?.secret?.secretName);
    c('existingSecret: both webhooks carry the given caBundle', core?.vwc?.webhooks?.every((w) => w.clientConfig.caBundle === bundle));
    c('existingSecret: the test pod verifies with the webhook configuration\'s caBundle', testEnv(core?.test).CA_SOURCE === 'webhookConfiguration');
    if (opt.caBundleFile) c('existingSecret: caBundle from certs/generate.sh is a PEM CA', x509(b64(bundle))?.ca === true);
  }
  const exSecret = renderOk(ctx, 'existingSecret, test caSource secret', { values: { certificates: { mode: 'existingSecret', existingSecret: { name: 'my-tls', caBundle: bundle } }, test: { caSource: 'secret' } } });
  if (exSecret) {
    const t = one(exSecret.docs, 'Pod', isTestHook);
    c('existingSecret, test caSource secret: test pod verifies with the given caBundle, no token, no test RBAC', testEnv(t).CA_BUNDLE === bundle &&
      testEnv(t).CA_SOURCE === 'secret' && !(t?.spec?.volumes || []).some((v) => v.secret || v.projected) && exSecret.docs.filter(isTestHook).length === 1);
  }
  // The fallback: the Secret's CA, no token and no RBAC; the script says it checked the Service only.
  const ts = renderOk(ctx, 'test caSource secret', { set: ['test.caSource=secret'] });
  if (ts) {
    const t = one(ts.docs, 'Pod', isTestHook);
    const secret = one(ts.docs, 'Secret');
    c('test caSource secret: test pod verifies with ca.crt of the TLS Secret, without a token or a ServiceAccount of its own',
      testEnv(t).CA_SOURCE === 'secret' && !!secret && t?.spec?.volumes?.some((v) => v.secret?.secretName === secret.metadata.name &&
        eq(v.secret.items, [{ key: 'ca.crt', path: 'ca.crt' }])) && !t.spec.serviceAccountName && !t.spec.volumes.some((v) => v.projected) &&
      ts.docs.filter(isTestHook).length === 1, JSON.stringify(t?.spec?.volumes));
    c('test caSource secret: the script says it checked the Service only', /the Service only: the caBundle the API server holds is not checked/
      .test((t?.spec?.containers?.[0]?.command || []).join('\n')));
  }
  renderFails(ctx, 'existingSecret without caBundle fails (required)',
    { values: { certificates: { mode: 'existingSecret', existingSecret: { name: 'my-tls' } } } }, /caBundle is required/);
  renderFails(ctx, 'existingSecret without name fails (required)',
    { values: { certificates: { mode: 'existingSecret', existingSecret: { caBundle: bundle } } } }, /existingSecret\.name is required/);

  // 5. toggles
  const sm = renderOk(ctx, 'serviceMonitor', { values: { metrics: { serviceMonitor: { enabled: true, labels: { release: 'kps' } } } } });
  if (sm) {
    const mon = one(sm.docs, 'ServiceMonitor');
    const msvc = one(sm.docs, 'Service', (s) => s.metadata.name === 'jobguard-metrics');
    const wsvc = one(sm.docs, 'Service', (s) => s.metadata.name === 'jobguard');
    c('serviceMonitor: one monitoring.coreos.com/v1 ServiceMonitor', mon?.apiVersion === 'monitoring.coreos.com/v1');
    c('serviceMonitor: selects the metrics Service only', selects(mon?.spec?.selector?.matchLabels, msvc?.metadata?.labels) &&
      !selects(mon?.spec?.selector?.matchLabels, wsvc?.metadata?.labels));
    c('serviceMonitor: scrapes the metrics port at /metrics every 30s', mon?.spec?.endpoints?.[0]?.port === msvc?.spec?.ports?.[0]?.name &&
      mon.spec.endpoints[0].path === '/metrics' && mon.spec.endpoints[0].interval === '30s');
    c('serviceMonitor: extra labels', mon?.metadata?.labels?.release === 'kps');
    c('serviceMonitor: watches the release namespace', eq(mon?.spec?.namespaceSelector?.matchNames, ['default']));
  }
  const np = renderOk(ctx, 'networkPolicy', { values: { networkPolicy: { enabled: true } } });
  if (np) {
    const pol = one(np.docs, 'NetworkPolicy');
    const labels = one(np.docs, 'Deployment')?.spec?.template?.metadata?.labels;
    c('networkPolicy: selects the jobguard pods', selects(pol?.spec?.podSelector?.matchLabels, labels));
    c('networkPolicy: Ingress and Egress policy types', eq(sorted(pol?.spec?.policyTypes), ['Egress', 'Ingress']));
    const inPorts = (pol?.spec?.ingress || []).flatMap((r) => (r.ports || []).map((p) => p.port));
    c('networkPolicy: ingress to the webhook and metrics ports', eq(sorted(inPorts), ['metrics', 'webhook']), JSON.stringify(inPorts));
    c('networkPolicy: webhook port open to any source (the API server has no selector)',
      (pol?.spec?.ingress || []).some((r) => (r.ports || []).some((p) => p.port === 'webhook') && !r.from));
    c('networkPolicy: no egress', eq(pol?.spec?.egress, []));
  }
  const npDns = renderOk(ctx, 'networkPolicy allowDNS', {
    values: { networkPolicy: { enabled: true, allowDNS: true, metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] } },
  });
  if (npDns) {
    const pol = one(npDns.docs, 'NetworkPolicy');
    c('networkPolicy allowDNS: egress only to port 53', (pol?.spec?.egress || []).length === 1 &&
      pol.spec.egress[0].ports.every((p) => p.port === 53));
    c('networkPolicy metricsFrom: metrics ingress restricted', (pol?.spec?.ingress || []).some((r) =>
      r.ports?.some((p) => p.port === 'metrics') && r.from?.[0]?.namespaceSelector));
  }
  const noPdb = renderOk(ctx, 'PDB disabled', { set: ['podDisruptionBudget.enabled=false'] });
  if (noPdb) c('PDB disabled: no PodDisruptionBudget', find(noPdb.docs, 'PodDisruptionBudget').length === 0);
  const single = renderOk(ctx, 'replicaCount 1', { set: ['replicaCount=1'] });
  if (single) {
    c('replicaCount 1: no PDB that would block node drains', find(single.docs, 'PodDisruptionBudget').length === 0);
  }
  const three = renderOk(ctx, 'replicaCount 3', { set: ['replicaCount=3'] });
  if (three) c('replicaCount 3: replicas 3 and a PDB', one(three.docs, 'Deployment')?.spec?.replicas === 3 && !!one(three.docs, 'PodDisruptionBudget'));

  const objSel = { matchExpressions: [{ key: 'jobguard.io/ignore', operator: 'DoesNotExist' }] };
  const os = renderOk(ctx, 'objectSelector', { values: { webhook: { objectSelector: objSel } } });
  if (os) {
    const hooks = webhookDoc(os.docs)?.webhooks || [];
    const isStatus = (w) => w.rules.some((r) => r.resources.some((x) => x.endsWith('/status')));
    c('objectSelector: on the 17 CREATE/UPDATE webhooks', hooks.filter((w) => !isStatus(w)).length === 17 &&
      hooks.filter((w) => !isStatus(w)).every((w) => eq(w.objectSelector, objSel)));
    c('objectSelector: never on a status webhook (16)', hooks.filter(isStatus).length === 16 && hooks.filter(isStatus).every((w) => !w.objectSelector));
  }

  const extra = [{ name: 'not-dry-run', expression: '!request.dryRun' }];
  const mc = renderOk(ctx, 'extra matchConditions', { values: { webhook: { matchConditions: extra } } });
  if (mc) {
    c('extra matchConditions: appended after managed-by on the jobs webhook', eq(wh(mc.docs, 'jobs.jobguard.io')?.matchConditions?.slice(1), extra) &&
      wh(mc.docs, 'jobs.jobguard.io').matchConditions[0].name === 'managed-by');
    c('extra matchConditions: appended after external-managed-by on the status webhook',
      eq(wh(mc.docs, 'jobs-status.jobguard.io')?.matchConditions, [{ name: 'external-managed-by', expression: STATUS_EXPR }, ...extra]));
    c('extra matchConditions: appended to every webhook (33)', webhookDoc(mc.docs)?.webhooks?.length === 33 &&
      webhookDoc(mc.docs).webhooks.every((w) => w.matchConditions.length === 2 && eq(w.matchConditions[1], extra[0])));
  }
  // Per-kind lists land on their own webhook only, after its managed-by condition.
  const own = (n) => [{ name: `only-${n}`, expression: 'true' }];
  const pk = renderOk(ctx, 'per-kind matchConditions', { values: { webhook: { jobs: { matchConditions: own('jobs'), cronJobMatchConditions: own('cronjobs') } },
    targets: { jobset: { enabled: true, matchConditions: own('jobset') } } } });
  if (pk) {
    const lists = Object.fromEntries((webhookDoc(pk.docs)?.webhooks || []).map((w) => [w.name, (w.matchConditions || []).map((m) => m.name)]));
    c('per-kind matchConditions: each on its own webhook, after managed-by, nowhere else',
      eq(lists['jobs.jobguard.io'], ['managed-by', 'only-jobs']) && eq(lists['cronjobs.jobguard.io'], ['managed-by', 'only-cronjobs']) &&
      eq(lists['jobset.jobguard.io'], ['managed-by', 'only-jobset']) && eq(lists['jobset-status.jobguard.io'], ['external-managed-by']) &&
      Object.entries(lists).filter(([, l]) => l.some((x) => x.startsWith('only-'))).length === 3, JSON.stringify(lists));
  }
  renderFails(ctx, 'a per-kind matchCondition named managed-by fails', { values: { targets: { jobset: { enabled: true, matchConditions: [{ name: 'managed-by', expression: 'true' }] } } } },
    /the name "managed-by" is used twice in webhook jobset\.jobguard\.io/);
  renderFails(ctx, 'more than 64 matchConditions on a webhook fails',
    { values: { webhook: { matchConditions: Array.from({ length: 40 }, (_, i) => ({ name: `g${i}`, expression: 'true' })),
      jobs: { matchConditions: Array.from({ length: 30 }, (_, i) => ({ name: `j${i}`, expression: 'true' })) } } } },
    /webhook jobs\.jobguard\.io would have 71, the API server allows 64/);
  renderFails(ctx, 'duplicate matchCondition name fails',
    { values: { webhook: { matchConditions: [{ name: 'external-managed-by', expression: 'true' }] } } }, /used twice/);
  const noStatusMc = renderOk(ctx, 'status matchConditions emptied', { values: { webhook: { status: { matchConditions: [] } } } });
  if (noStatusMc) c('status matchConditions emptied: the status webhook keeps the generated external-managed-by alone', eq(wh(noStatusMc.docs, 'jobs-status.jobguard.io')?.matchConditions, [{ name: 'external-managed-by', expression: STATUS_EXPR }]));

  const noStatus = renderOk(ctx, 'status webhook disabled', { set: ['webhook.status.enabled=false'] });
  if (noStatus) c('status webhook disabled: no status webhook', (webhookDoc(noStatus.docs)?.webhooks || []).length === 17 &&
    webhookDoc(noStatus.docs).webhooks.every((w) => w.rules.every((r) => r.resources.every((x) => !x.includes('/')))));
  const noJobs = renderOk(ctx, 'jobs webhooks disabled', { set: ['webhook.jobs.enabled=false'] });
  if (noJobs) c('jobs webhooks disabled: no jobs and cronjobs webhooks; jobs-status and the CRD kinds stay',
    eq(webhookDoc(noJobs.docs)?.webhooks?.map((w) => w.name)?.slice(0, 2), ['jobs-status.jobguard.io', 'appwrapper.jobguard.io']) &&
    !webhookDoc(noJobs.docs).webhooks.some((w) => w.rules.some((r) => ['jobs', 'cronjobs'].includes(r.resources[0]))));

  const fp = renderOk(ctx, 'failure policies and timeout', {
    set: ['webhook.failurePolicy.jobs=Ignore', 'webhook.failurePolicy.status=Fail', 'webhook.failurePolicy.targets=Ignore', 'webhook.timeoutSeconds=10'],
  });
  if (fp) {
    c('failure policies: jobs and cronjobs Ignore, status Fail', wh(fp.docs, 'jobs.jobguard.io')?.failurePolicy === 'Ignore' &&
      wh(fp.docs, 'cronjobs.jobguard.io')?.failurePolicy === 'Ignore' && wh(fp.docs, 'jobs-status.jobguard.io')?.failurePolicy === 'Fail');
    c('failure policies: every CRD kind Ignore, every CRD status webhook Fail', webhookDoc(fp.docs).webhooks.slice(3).every((w) =>
      w.failurePolicy === (w.rules[0].resources[0].endsWith('/status') ? 'Fail' : 'Ignore')));
    c('timeoutSeconds 10 on every webhook', webhookDoc(fp.docs)?.webhooks?.every((w) => w.timeoutSeconds === 10));
  }
  const fpT = renderOk(ctx, 'targets failurePolicy alone', { set: ['webhook.failurePolicy.targets=Ignore'] });
  if (fpT) {
    c('targets failurePolicy alone: the CRD kinds Ignore, jobs and cronjobs still Fail', wh(fpT.docs, 'jobset.jobguard.io')?.failurePolicy === 'Ignore' &&
      wh(fpT.docs, 'jobs.jobguard.io')?.failurePolicy === 'Fail' && wh(fpT.docs, 'cronjobs.jobguard.io')?.failurePolicy === 'Fail');
  }
  // failurePolicy follows the rule modes: a webhook is Fail exactly when a rule it can refuse with is
  // in deny mode. The groups below are written from docs/webhooks.md's rule table, not from the chart.
  const groupOf = (w) => {
    const r = w.rules[0].resources[0];
    if (r === 'jobs') return 'jobs';
    if (r === 'cronjobs') return 'cronjobs';
    if (r === 'jobs/status') return 'jobsStatus';
    return r.endsWith('/status') ? 'targetsStatus' : 'targets';
  };
  const CRUD = ['ALWAYS-ManagedByFormat', 'ALWAYS-ManagedByLength', 'Policy-AllowedControllers'];
  const enforcedBy = (rule) => {
    const g = [];
    if (CRUD.includes(rule) || rule === 'ALWAYS-ManagedByImmutable') g.push('jobs', 'targets');
    if (CRUD.includes(rule)) g.push('cronjobs');
    if (rule.startsWith('Target-')) g.push('targets');
    if (rule === 'Policy-StatusWriters') g.push('jobsStatus', 'targetsStatus');
    if (!g.length) g.push('jobsStatus'); // the Job status rules
    return g;
  };
  const fpOf = (docs) => Object.fromEntries((webhookDoc(docs)?.webhooks || []).map((w) => [w.name, w.failurePolicy]));
  for (const m of ['audit', 'warn', 'off']) {
    const r = renderOk(ctx, `every rule in ${m}`, { values: { policy: { modes: { '*': m } } } });
    if (r) c(`every rule in ${m}: every webhook (33) is Ignore`, Object.values(fpOf(r.docs)).length === 33 &&
      Object.values(fpOf(r.docs)).every((x) => x === 'Ignore'), JSON.stringify(fpOf(r.docs)));
  }
  const ruleIds = Object.keys(JSON.parse(fs.readFileSync(path.join(opt.chart, 'values.schema.json'), 'utf8')).properties.policy.properties.modes.properties).filter((k) => k !== '*');
  for (const rule of ['ALWAYS-ManagedByFormat', 'ALWAYS-ManagedByImmutable', 'Policy-AllowedControllers', 'Policy-StatusWriters', 'ALWAYS-NonNeg', 'RejectMutatingCompletionTime', 'Target-NestedManagedBy', 'Target-DelegationUnsupported']) {
    for (const base of ['audit', 'warn']) {
      const r = renderOk(ctx, `${rule} in deny, the rest ${base}`, { values: { policy: { modes: { '*': base, [rule]: 'deny' } } } });
      if (!r) continue;
      const hooks = webhookDoc(r.docs)?.webhooks || [];
      const wrong = hooks.filter((w) => (w.failurePolicy === 'Fail') !== enforcedBy(rule).includes(groupOf(w))).map((w) => `${w.name}=${w.failurePolicy}`);
      c(`${rule} in deny, the rest ${base}: exactly the webhooks that enforce it (${enforcedBy(rule).join(', ')}) are Fail`, hooks.length === 33 && wrong.length === 0, wrong.join(' '));
    }
  }
  const allDenyButOne = renderOk(ctx, 'every rule deny but the CREATE/UPDATE ones', { values: { policy: { modes: Object.fromEntries(
    [...CRUD, 'ALWAYS-ManagedByImmutable', 'Target-NestedManagedBy', 'Target-DelegationUnsupported'].map((k) => [k, 'audit'])) } } });
  if (allDenyButOne) c('every rule deny but the CREATE/UPDATE ones: CREATE/UPDATE webhooks Ignore, status webhooks Fail',
    (webhookDoc(allDenyButOne.docs)?.webhooks || []).every((w) => w.failurePolicy === (groupOf(w).endsWith('tatus') ? 'Fail' : 'Ignore')), JSON.stringify(fpOf(allDenyButOne.docs)));
  const cli = renderOk(ctx, '--mode and --disable-rule in server.extraArgs', { values: { policy: { modes: { '*': 'audit', 'Policy-StatusWriters': 'deny' } },
    server: { extraArgs: ['--mode=ALWAYS-ManagedByImmutable=deny', '--disable-rule=Policy-StatusWriters'] } } });
  if (cli) c('--mode and --disable-rule in server.extraArgs: --mode ID=deny makes its webhooks Fail, --disable-rule ID turns one off (jobs and CRD kinds Fail, cronjobs and status Ignore)',
    (webhookDoc(cli.docs)?.webhooks || []).every((w) => w.failurePolicy === (['jobs', 'targets'].includes(groupOf(w)) ? 'Fail' : 'Ignore')), JSON.stringify(fpOf(cli.docs)));
  const pinned = renderOk(ctx, 'explicit failurePolicy wins over the modes', { values: { policy: { modes: { '*': 'audit' } }, webhook: { failurePolicy: { jobs: 'Fail' } } } });
  if (pinned) c('explicit failurePolicy wins over the modes: webhook.failurePolicy.jobs=Fail with every rule in audit makes jobs and cronjobs Fail, the others Ignore',
    (webhookDoc(pinned.docs)?.webhooks || []).every((w) => w.failurePolicy === (['jobs', 'cronjobs'].includes(groupOf(w)) ? 'Fail' : 'Ignore')), JSON.stringify(fpOf(pinned.docs)));
  const formerDefaults = renderOk(ctx, 'former failurePolicy defaults are ignored', { values: { policy: { modes: { '*': 'audit' } },
    webhook: { jobs: { failurePolicy: 'Fail' }, targets: { failurePolicy: 'Fail' }, status: { failurePolicy: 'Ignore' } } } });
  if (formerDefaults) c('former failurePolicy defaults are ignored: webhook.<group>.failurePolicy at the former defaults (a copied values file) pins nothing, every webhook Ignore in audit',
    Object.values(fpOf(formerDefaults.docs)).every((x) => x === 'Ignore'), JSON.stringify(fpOf(formerDefaults.docs)));
  const formerCel = renderOk(ctx, 'a copied former status matchCondition', { values: { webhook: { status: { matchConditions: [
    { name: 'external-managed-by', expression: "has(object.spec.managedBy) && object.spec.managedBy != 'kubernetes.io/job-controller'" }] } } } });
  if (ctx.wants('a copied former status matchCondition')) c('a copied former status matchCondition: dropped, the generated condition alone',
    !!formerCel && eq(wh(formerCel.docs, 'jobs-status.jobguard.io')?.matchConditions, [{ name: 'external-managed-by', expression: STATUS_EXPR }]), JSON.stringify(formerCel && wh(formerCel.docs, 'jobs-status.jobguard.io')?.matchConditions));
  renderFails(ctx, 'webhook.jobs.failurePolicy=Ignore (no longer read) fails naming its replacement', { set: ['webhook.jobs.failurePolicy=Ignore'] },
    /webhook\.jobs\.failurePolicy is no longer read: set webhook\.failurePolicy\.jobs: Ignore instead/);
  renderFails(ctx, 'webhook.status.failurePolicy=Fail (no longer read) fails naming its replacement', { set: ['webhook.status.failurePolicy=Fail'] },
    /webhook\.status\.failurePolicy is no longer read: set webhook\.failurePolicy\.status: Fail instead/);
  {
    const tpl = fs.readFileSync(path.join(opt.chart, 'templates/_helpers.tpl'), 'utf8');
    const table = yaml.load(tpl.match(/define "jobguard\.webhookRules" \}\}\n([\s\S]*?)\{\{- end \}\}/)?.[1] || '{}');
    const inTable = new Set(Object.values(table).flat());
    c('jobguard.webhookRules names every rule ID of the schema, and no other', ruleIds.length > 30 && ruleIds.every((r) => inTable.has(r)) && [...inTable].every((r) => ruleIds.includes(r)),
      JSON.stringify(ruleIds.filter((r) => !inTable.has(r))));
    c('jobguard.webhookRules agrees with the rule table of this test', Object.entries(table).every(([g, rules]) => rules.every((r) => enforcedBy(r).includes(g))) &&
      ruleIds.every((r) => enforcedBy(r).every((g) => table[g].includes(r))));
  }
  const renamed = renderOk(ctx, 'webhook names overridden', { set: ['webhook.jobs.name=jobs.example.com', 'webhook.jobs.cronJobName=cronjobs.example.com', 'webhook.status.name=status.jobs.example.com'] });
  if (renamed) c('webhook names overridden', eq(webhookDoc(renamed.docs)?.webhooks?.map((w) => w.name).slice(0, 3), ['jobs.example.com', 'cronjobs.example.com', 'status.jobs.example.com']));

  const nsv = renderOk(ctx, 'namespace exemptions', {
    namespace: 'ops',
    values: { webhook: { excludedNamespaces: ['kube-system', 'kube-public'], excludeReleaseNamespace: false,
      namespaceSelectorExpressions: [{ key: 'jobguard.io/ignore', operator: 'DoesNotExist' }] } },
  });
  if (nsv) {
    const sel = wh(nsv.docs, 'jobs.jobguard.io')?.namespaceSelector;
    c('namespace exemptions: NotIn the listed namespaces only, plus the label expression', eq(sel, { matchExpressions: [
      { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kube-public'] },
      { key: 'jobguard.io/ignore', operator: 'DoesNotExist' }] }), JSON.stringify(sel));
  }
  const noExcl = renderOk(ctx, 'no namespace exemptions', { values: { webhook: { excludedNamespaces: [], excludeReleaseNamespace: false } } });
  if (noExcl) c('no namespace exemptions: empty namespaceSelector', eq(wh(noExcl.docs, 'jobs.jobguard.io')?.namespaceSelector, {}));

  const noCron = renderOk(ctx, 'cronJobs disabled', { set: ['webhook.jobs.cronJobs=false'] });
  if (noCron) c('cronJobs disabled: no cronjobs webhook', !wh(noCron.docs, 'cronjobs.jobguard.io') && eq(wh(noCron.docs, 'jobs.jobguard.io')?.rules?.[0]?.resources, ['jobs']) &&
    !webhookDoc(noCron.docs).webhooks.some((w) => w.rules.some((r) => r.resources.includes('cronjobs'))));

  const tls13 = renderOk(ctx, 'tlsMinVersion 1.3', { set: ['server.tlsMinVersion=1.3'] });
  if (tls13) c('tlsMinVersion 1.3: --tls-min-version 1.3', argVal(mainContainer(one(tls13.docs, 'Deployment'))?.args, '--tls-min-version') === '1.3');
  const def12 = def && argVal(mainContainer(one(def.docs, 'Deployment'))?.args, '--tls-min-version');
  if (def) c('default: --tls-min-version 1.2', def12 === '1.2', def12);

  const noZero = renderOk(ctx, 'metrics.zeroSeries false', { set: ['metrics.zeroSeries=false'] });
  if (noZero) c('metrics.zeroSeries false: --metrics-zero-series false', argVal(mainContainer(one(noZero.docs, 'Deployment'))?.args, '--metrics-zero-series') === 'false');
  if (def) c('default: no --metrics-zero-series (the server\'s default, true)', !mainContainer(one(def.docs, 'Deployment'))?.args?.some((a) => a.startsWith('--metrics-zero-series')));
  renderFails(ctx, 'metrics.zeroSeries "no" fails the schema', { set: ['metrics.zeroSeries=no'] }, /zeroSeries/, { lint: true });

  const mtls = renderOk(ctx, 'clientAuth', { values: { server: { clientAuth: { enabled: true, caSecretName: 'apiserver-client-ca' } } } });
  if (mtls) {
    const dep = one(mtls.docs, 'Deployment');
    const args = mainContainer(dep)?.args;
    c('clientAuth: --client-ca-file and --client-cn kube-apiserver', argVal(args, '--client-ca-file') === '/client-ca/ca.crt' &&
      argVal(args, '--client-cn') === 'kube-apiserver', JSON.stringify(args));
    c('clientAuth: client CA Secret mounted', dep?.spec?.template?.spec?.volumes?.some((v) => v.secret?.secretName === 'apiserver-client-ca'));
  }
  renderFails(ctx, 'clientAuth without caSecretName fails', { set: ['server.clientAuth.enabled=true'] }, /caSecretName is required/);

  const knobs = renderOk(ctx, 'scheduling and image knobs', {
    values: {
      server: { extraArgs: ['--parity=1.36'], extraEnv: [{ name: 'JOBGUARD_LOG_LEVEL', value: 'debug' }] },
      priorityClassName: 'system-cluster-critical',
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }],
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'infra', operator: 'Exists' }] }] } } },
      podAnnotations: { 'example.com/a': 'b' },
      podLabels: { team: 'platform' },
      imagePullSecrets: [{ name: 'regcred' }],
      image: { repository: 'registry.example.com/jobguard', digest: `sha256:${'a'.repeat(64)}` },
      topologySpreadConstraints: [],
      fullnameOverride: 'guard',
    },
  });
  if (knobs) {
    const dep = one(knobs.docs, 'Deployment');
    const pod = dep?.spec?.template?.spec;
    const ctr = mainContainer(dep);
    c('knobs: extraArgs appended', ctr?.args?.at(-1) === '--parity=1.36');
    c('knobs: extraEnv', ctr?.env?.some((e) => e.name === 'JOBGUARD_LOG_LEVEL'));
    c('knobs: priorityClassName', pod?.priorityClassName === 'system-cluster-critical');
    c('knobs: tolerations, affinity', pod?.tolerations?.[0]?.key === 'dedicated' && !!pod?.affinity?.nodeAffinity);
    c('knobs: podAnnotations and podLabels', dep?.spec?.template?.metadata?.annotations?.['example.com/a'] === 'b' &&
      dep.spec.template.metadata.labels.team === 'platform');
    c('knobs: imagePullSecrets', eq(pod?.imagePullSecrets, [{ name: 'regcred' }]));
    c('knobs: image digest wins over tag', ctr?.image === `registry.example.com/jobguard@sha256:${'a'.repeat(64)}`, ctr?.image);
    c('knobs: topologySpreadConstraints [] removes them', !pod?.topologySpreadConstraints);
    c('knobs: fullnameOverride names everything', dep?.metadata?.name === 'guard' &&
      webhookDoc(knobs.docs)?.webhooks?.every((w) => w.clientConfig.service.name === 'guard') &&
      argVal(ctr?.args, '--service-name') === 'guard.default.svc');
  }
  const tag = renderOk(ctx, 'image tag', { set: ['image.tag=1.2.3'] });
  if (tag) c('image tag: repository:tag', mainContainer(one(tag.docs, 'Deployment'))?.image === 'jobguard:1.2.3');

  const grace = renderOk(ctx, 'longer shutdown', { set: ['server.shutdownDelaySeconds=20', 'server.drainTimeoutSeconds=15', 'terminationGracePeriodSeconds=40'] });
  if (grace) {
    const args = mainContainer(one(grace.docs, 'Deployment'))?.args;
    c('longer shutdown: flags follow the values', argVal(args, '--shutdown-delay') === '20' && argVal(args, '--drain-timeout') === '15');
  }
  renderFails(ctx, 'terminationGracePeriodSeconds not above shutdown delay + drain fails',
    { set: ['server.shutdownDelaySeconds=25', 'server.drainTimeoutSeconds=10', 'terminationGracePeriodSeconds=30'] }, /terminationGracePeriodSeconds/);
  renderFails(ctx, 'Kubernetes 1.27 is refused (matchConditions need 1.28)', { kubeVersion: '1.27.9' }, /kubeVersion/);

  // 6. the values schema rejects bad values; the message names the value (Helm 3 writes the path
  // a.b.0, Helm 4 /a/b/0)
  const schemaError = (p) => new RegExp(`don't meet the specifications of the schema[\\s\\S]*${p.split('.').join('[./]')}\\b`);
  const bad = [
    ['replicaCount "two"', { replicaCount: 'two' }, 'replicaCount'],
    ['replicaCount 0', { replicaCount: 0 }, 'replicaCount'],
    ['unknown certificate mode', { certificates: { mode: 'vault' } }, 'certificates.mode'],
    ['unknown top-level value (typo)', { replicas: 3 }, 'replicas'],
    ['timeoutSeconds 31', { webhook: { timeoutSeconds: 31 } }, 'webhook.timeoutSeconds'],
    ['failurePolicy "fail"', { webhook: { jobs: { failurePolicy: 'fail' } } }, 'webhook.jobs.failurePolicy'],
    ['targets failurePolicy "fail"', { webhook: { targets: { failurePolicy: 'fail' } } }, 'webhook.targets.failurePolicy'],
    ['jobs enabled "no"', { webhook: { jobs: { enabled: 'no' } } }, 'webhook.jobs.enabled'],
    ['a target matchCondition without expression', { targets: { jobset: { enabled: true, matchConditions: [{ name: 'x' }] } } }, 'targets.jobset.matchConditions.0'],
    ['tlsMinVersion 1.1', { server: { tlsMinVersion: '1.1' } }, 'server.tlsMinVersion'],
    ['allowPrivilegeEscalation true', { securityContext: { allowPrivilegeEscalation: true } }, 'securityContext.allowPrivilegeEscalation'],
    ['runAsNonRoot false', { podSecurityContext: { runAsNonRoot: false } }, 'podSecurityContext.runAsNonRoot'],
    ['capabilities without drop ALL', { securityContext: { capabilities: { drop: ['NET_RAW'] } } }, 'securityContext.capabilities.drop'],
    ['webhook name not fully qualified', { webhook: { jobs: { name: 'jobs' } } }, 'webhook.jobs.name'],
    ['matchCondition without expression', { webhook: { matchConditions: [{ name: 'x' }] } }, 'webhook.matchConditions.0'],
    ['operation DELETE', { webhook: { jobs: { operations: ['CREATE', 'DELETE'] } } }, 'webhook.jobs.operations.1'],
    ['port 70000', { server: { port: 70000 } }, 'server.port'],
    ['caBundle not base64', { certificates: { existingSecret: { caBundle: '-----BEGIN' } } }, 'certificates.existingSecret.caBundle'],
    ['image digest malformed', { image: { digest: 'latest' } }, 'image.digest'],
    ['test caSource "vwc"', { test: { caSource: 'vwc' } }, 'test.caSource'],
  ];
  for (const [n, v, p] of bad) renderFails(ctx, `schema rejects ${n}`, { values: v }, schemaError(p), { lint: true });
  renderFails(ctx, 'schema rejects --set replicaCount=two', { set: ['replicaCount=two'] }, schemaError('replicaCount'), { lint: true });

  // First install against a cluster (Namespace kube-system answers, no jobguard Deployment): every
  // webhook Ignore and the bootstrap hook that sets the final failurePolicies; run.sh runs its script.
  const ksys = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } };
  const boot = renderOk(ctx, 'first install against a cluster', { lookup: [ksys] });
  if (boot) {
    const hooks = webhookDoc(boot.docs)?.webhooks || [];
    c('first install against a cluster: every webhook (33) Ignore', hooks.length === 33 && hooks.every((w) => w.failurePolicy === 'Ignore'));
    const job = one(boot.docs, 'Job', (d) => d.metadata.name === 'jobguard-bootstrap');
    const role = one(boot.docs, 'ClusterRole', (d) => d.metadata.name === 'jobguard-bootstrap');
    const env = Object.fromEntries((job?.spec?.template?.spec?.containers?.[0]?.env || []).map((e) => [e.name, e.value]));
    let ops = [];
    try { ops = JSON.parse(env.PATCH); } catch { /* checked next */ }
    c('first install against a cluster: a post-install/post-upgrade hook Job whose patch sets Fail, by index and name, on exactly the webhooks of the final form',
      job?.metadata?.annotations?.['helm.sh/hook'] === 'post-install,post-upgrade' &&
      eq(ops.filter((o) => o.op === 'test').map((o) => o.value), (webhookDoc(def?.docs || [])?.webhooks || []).filter((w) => w.failurePolicy === 'Fail').map((w) => w.name)) &&
      ops.filter((o) => o.op === 'replace').every((o) => o.value === 'Fail' && /^\/webhooks\/\d+\/failurePolicy$/.test(o.path)) &&
      ops.filter((o) => o.op === 'test').every((o) => hooks[Number(o.path.split('/')[2])]?.name === o.value), env.PATCH);
    c('first install against a cluster: its ClusterRole may get and patch this one configuration only, and is deleted whatever the outcome',
      eq(role?.rules, [{ apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: ['jobguard'], verbs: ['get', 'patch'] }]) &&
      /hook-failed/.test(role?.metadata?.annotations?.['helm.sh/hook-delete-policy'] || ''));
  }
  const bootAudit = renderOk(ctx, 'first install against a cluster, every rule in audit', { lookup: [ksys], values: { policy: { modes: { '*': 'audit' } } } });
  if (bootAudit) c('first install against a cluster, every rule in audit: no bootstrap hook (nothing to set)', !find(bootAudit.docs, 'Job').some((d) => d.metadata.name === 'jobguard-bootstrap'));
  const bootOff = renderOk(ctx, 'first install against a cluster with webhook.bootstrap=false', { lookup: [ksys], set: ['webhook.bootstrap=false'] });
  if (bootOff) c('first install against a cluster with webhook.bootstrap=false: the final form at once, no hook',
    (webhookDoc(bootOff.docs)?.webhooks || []).every((w) => w.failurePolicy === 'Fail') && !find(bootOff.docs, 'Job').some((d) => d.metadata.name === 'jobguard-bootstrap'));
  if (def) c('default: helm template (no cluster) renders the final form, no bootstrap hook', !find(def.docs, 'Job').some((d) => d.metadata.name === 'jobguard-bootstrap') &&
    (webhookDoc(def.docs)?.webhooks || []).every((w) => w.failurePolicy === 'Fail'));

  // Kueue (jobguard.kueueCheck): with manageJobsWithoutQueueName Kueue suspends the hook Jobs in the
  // namespaces its managedJobsNamespaceSelector selects; the render fails at once, naming the hooks,
  // the selector and the way out, and goes on whenever Kueue would leave the hooks alone. The stand-in
  // holds Kueue's Namespace and ConfigMap (as Kueue's manifests install them) and the release Namespace.
  {
    const kns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kueue-system' } };
    const relNs = (labels = {}) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default', labels: { 'kubernetes.io/metadata.name': 'default', ...labels } } });
    const kcm = (cfg, ns = 'kueue-system') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kueue-manager-config', namespace: ns },
      data: { 'controller_manager_config.yaml': `apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n${cfg}` } });
    const manage = 'manageJobsWithoutQueueName: true\n';
    const sel = (s) => `${manage}managedJobsNamespaceSelector: ${JSON.stringify(s)}\n`;
    const pol = { policy: { allowUnlistedControllers: false } };
    const hint = (jobs, off) => new RegExp(`Kueue would suspend the hook ${jobs}, and helm would wait out its --timeout: Kueue's configuration \\(ConfigMap kueue-system/kueue-manager-config, ` +
      `controller_manager_config\\.yaml\\) sets manageJobsWithoutQueueName: true, and its managedJobsNamespaceSelector .* selects namespace default\\. Leave the namespace out of Kueue's selector .*` +
      `install without the hooks: --set ${off}; or skip this check: --set kueue\\.configMap=""`);
    const both = hint('Jobs jobguard-policy-check and jobguard-bootstrap', 'policyCheck\\.enabled=false,webhook\\.bootstrap=false');
    renderFails(ctx, 'Kueue manages Jobs without a queue name (default selector), the install fails at once with the hint', { values: pol, lookup: [ksys, kns, relNs(), kcm(manage)] },
      new RegExp(`${both.source.replace(' .* selects', ' \\{"matchExpressions":\\[\\{"key":"kubernetes\\.io/metadata\\.name","operator":"NotIn","values":\\["kube-system","kueue-system"\\]\\}\\]\\} \\(Kueue\'s default\\) selects')}`));
    renderFails(ctx, 'Kueue, an upgrade fails the same (pre-upgrade policy check)', { upgrade: true, values: pol, lookup: [kns, relNs(), kcm(manage)] }, hint('Job jobguard-policy-check', 'policyCheck\\.enabled=false'));
    renderFails(ctx, 'Kueue, no policy, fails naming only the bootstrap hook', { lookup: [ksys, kns, relNs(), kcm(manage)] }, hint('Job jobguard-bootstrap', 'webhook\\.bootstrap=false'));
    renderFails(ctx, 'Kueue, the pod integration alone fails too (it gates the hooks\' pods)', { values: pol, lookup: [ksys, kns, relNs(), kcm(`${manage}integrations: {frameworks: [pod]}\n`)] }, both);
    renderFails(ctx, 'Kueue, matchLabels the namespace has, fails', { values: pol, lookup: [ksys, kns, relNs({ team: 'ml' }), kcm(sel({ matchLabels: { team: 'ml' } }))] }, both);
    renderFails(ctx, 'Kueue, matchExpressions In and Exists the namespace meets, fails', { values: pol, lookup: [ksys, kns, relNs({ team: 'ml' }),
      kcm(sel({ matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['default', 'x'] }, { key: 'team', operator: 'Exists' }] }))] }, both);
    renderFails(ctx, 'Kueue, an empty selector (every namespace) fails', { values: pol, lookup: [ksys, kns, relNs(), kcm(sel({}))] }, both);
    renderFails(ctx, 'Kueue, the release namespace not created yet (helm --create-namespace), fails by its name label', { values: pol, lookup: [ksys, kns,
      kcm(sel({ matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['default'] }] }))] }, both);
    const proceeds = [
      ['no Kueue Namespace (a ConfigMap of that name elsewhere is not read)', [ksys, relNs(), kcm(manage, 'other')]],
      ['Kueue\'s shipped configuration (manageJobsWithoutQueueName commented out)', [ksys, kns, relNs(), kcm('integrations: {frameworks: [batch/job, pod]}\n')]],
      ['manageJobsWithoutQueueName false', [ksys, kns, relNs(), kcm('manageJobsWithoutQueueName: false\n')]],
      ['the release namespace in the selector\'s NotIn', [ksys, kns, relNs(), kcm(sel({ matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kueue-system', 'default'] }] }))]],
      ['matchLabels the namespace lacks', [ksys, kns, relNs({ team: 'ops' }), kcm(sel({ matchLabels: { team: 'ml' } }))]],
      ['matchExpressions DoesNotExist a label the namespace has', [ksys, kns, relNs({ 'kueue.x-k8s.io/exempt': '' }), kcm(sel({ matchExpressions: [{ key: 'kueue.x-k8s.io/exempt', operator: 'DoesNotExist' }] }))]],
      ['Kueue without the batch/job and pod integrations', [ksys, kns, relNs(), kcm(`${manage}integrations: {frameworks: [jobset.x-k8s.io/jobset]}\n`)]],
    ];
    for (const [n, objs] of proceeds) {
      const r = renderOk(ctx, `Kueue proceeds, ${n}`, { values: pol, lookup: objs });
      if (r) c(`Kueue proceeds, ${n}: both hook Jobs rendered`, ['jobguard-policy-check', 'jobguard-bootstrap'].every((j) => one(r.docs, 'Job', (d) => d.metadata.name === j)));
    }
    renderOk(ctx, 'Kueue proceeds, kueue.configMap "" skips the check', { values: pol, set: ['kueue.configMap='], lookup: [ksys, kns, relNs(), kcm(manage)] });
    renderOk(ctx, 'Kueue proceeds, no hook Job (policyCheck.enabled=false, webhook.bootstrap=false)', { values: pol, set: ['policyCheck.enabled=false', 'webhook.bootstrap=false'], lookup: [ksys, kns, relNs(), kcm(manage)] });
    renderOk(ctx, 'Kueue proceeds, installed in Kueue\'s own namespace, which the default selector leaves out', { values: pol, namespace: 'kueue-system', lookup: [ksys, kns, kcm(manage)] });
  }

  // The memory limit: the chart refuses what `jobguard serve` would refuse at start, by the server's own
  // numbers, read here from its sources (the reserves of budget.h, the flag defaults of src/cli/serve.c).
  {
    const src = TOP;
    const h = fs.readFileSync(path.join(src, 'include/jobguard/server/budget.h'), 'utf8');
    const serve = fs.readFileSync(path.join(src, 'src/cli/serve.c'), 'utf8');
    const macro = (n) => { const m = h.match(new RegExp(`#define ${n} \\(\\(uint64_t\\)(\\d+) << (\\d+)\\)`)); return m ? Number(m[1]) * 2 ** Number(m[2]) : NaN; };
    // a row of serve's flag table: {"name", short, "META", "help" "help"..., "DEFAULT", K_UINT|K_BYTES, ...}
    const flag = (n) => serve.match(new RegExp(`\\{"${n}",[\\s\\S]*?"([^"]+)",\\s*K_(?:UINT|BYTES),`))?.[1];
    const bytes = (v) => { const m = String(v).match(/^(\d+)(KiB|Ki|K|k|MiB|Mi|M|GiB|Gi|G)?$/); return m ? Number(m[1]) * ({ undefined: 1, K: 1024, k: 1024, Ki: 1024, KiB: 1024, M: 2 ** 20, Mi: 2 ** 20, MiB: 2 ** 20, G: 2 ** 30, Gi: 2 ** 30, GiB: 2 ** 30 })[m[2]] : NaN; };
    const need = (conns, connMem) => macro('JG_BUDGET_PROCESS_RESERVE') + macro('JG_BUDGET_POLICY_RESERVE') + macro('JG_BUDGET_MIN') +
      conns * (macro('JG_BUDGET_CONNECTION_BASE') + connMem);
    const dflt = need(Number(flag('max-connections')), bytes(flag('connection-memory-limit')));
    if (c('memory limit: the server\'s reserves and flag defaults are read from its sources', Number.isFinite(dflt) && dflt > 0, `${dflt}`)) {
      renderOk(ctx, 'memory limit exactly what the server needs', { set: [`resources.limits.memory=${dflt}`] });
      renderFails(ctx, 'memory limit one byte short of what the server needs fails', { set: [`resources.limits.memory=${dflt - 1}`] },
        new RegExp(`resources\\.limits\\.memory ${dflt - 1} \\(${dflt - 1} bytes\\) leaves jobguard no memory budget: .* needs at least ${dflt} bytes`));
      const small = need(256, 65536);
      renderOk(ctx, 'memory limit with --max-connections and --connection-memory-limit in server.extraArgs', { values: { resources: { limits: { memory: `${small}` } },
        server: { extraArgs: ['--max-connections=256', '--connection-memory-limit=64KiB'] } } });
      renderFails(ctx, 'memory limit short for the extraArgs\' connections fails', { values: { resources: { limits: { memory: `${small - 1}` } },
        server: { extraArgs: ['--max-connections=256', '--connection-memory-limit=64KiB'] } } }, /needs at least/);
      renderOk(ctx, 'memory limit below the reserves with --memory-budget set (the server does not compute one)', { values: { resources: { limits: { memory: '32Mi' } },
        server: { extraArgs: ['--memory-budget=8Mi'] } } });
      renderOk(ctx, 'memory limit in decimal units (200M)', { set: ['resources.limits.memory=200M'] });
    }
  }

  // 7. lookup: certificates stay stable across upgrades (rendered against the stand-in API server
  // holding the objects given in lookup; plain `helm template` finds nothing, as on a first install)
  if (def) {
    const secret = one(def.docs, 'Secret');
    const caBundle = wh(def.docs, 'jobs.jobguard.io')?.clientConfig?.caBundle;
    const up = renderOk(ctx, 'upgrade with the Secret in the cluster', { upgrade: true, lookup: [secret] });
    if (up) {
      const s2 = one(up.docs, 'Secret');
      c('upgrade: same CA, serving certificate and key', eq(s2?.data, secret.data));
      c('upgrade: same caBundle in both webhooks', webhookDoc(up.docs)?.webhooks?.every((w) => w.clientConfig.caBundle === caBundle));
      c('upgrade: not-after annotation kept', s2?.metadata?.annotations?.['jobguard.io/serving-cert-not-after'] ===
        secret.metadata.annotations['jobguard.io/serving-cert-not-after']);
    }
    // A new CA under a running Deployment (certificates.secretName changed) is refused; newCA=true takes one.
    const dep = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'jobguard', namespace: 'default' }, status: { readyReplicas: 2 } };
    renderFails(ctx, 'upgrade whose Secret is missing under a running Deployment (secretName changed) fails', { upgrade: true, lookup: [secret, dep], set: ['certificates.secretName=other-tls'] },
      /certificates: Secret default\/other-tls does not exist, so this upgrade would make a new CA/);
    const newCA = renderOk(ctx, 'upgrade with certificates.helm.newCA', { upgrade: true, lookup: [secret, dep], set: ['certificates.helm.newCA=true'] });
    if (newCA) c('upgrade with certificates.helm.newCA: a new CA although the Secret exists, in the Secret and every caBundle',
      one(newCA.docs, 'Secret')?.data?.['ca.crt'] !== secret.data['ca.crt'] &&
      webhookDoc(newCA.docs)?.webhooks?.every((w) => w.clientConfig.caBundle === one(newCA.docs, 'Secret')?.data?.['ca.crt']));
    const renamed = renderOk(ctx, 'upgrade with a new fullnameOverride', { upgrade: true, lookup: [secret, dep], set: ['fullnameOverride=jg2'] });
    if (renamed) c('upgrade with a new fullnameOverride: not refused (a new Deployment, bootstrapped)', !!one(renamed.docs, 'Secret'));
    const fresh = renderOk(ctx, 'install again without lookup', {});
    if (fresh) c('without lookup a new CA is made (the lookup path above is what keeps it)',
      one(fresh.docs, 'Secret')?.data?.['ca.crt'] !== secret.data['ca.crt']);
    const expiring = JSON.parse(JSON.stringify(secret));
    expiring.metadata.annotations['jobguard.io/serving-cert-not-after'] = String(Math.floor(Date.now() / 1000) + 30 * 86400);
    const ren = renderOk(ctx, 'upgrade 30 days before expiry', { upgrade: true, lookup: [expiring] });
    if (ren) {
      const s3 = one(ren.docs, 'Secret');
      c('renewal: same CA (caBundle unchanged)', s3?.data?.['ca.crt'] === secret.data['ca.crt'] && s3?.data?.['ca.key'] === secret.data['ca.key'] &&
        webhookDoc(ren.docs)?.webhooks?.every((w) => w.clientConfig.caBundle === caBundle));
      c('renewal: new serving certificate and key', s3?.data?.['tls.crt'] !== secret.data['tls.crt'] && s3?.data?.['tls.key'] !== secret.data['tls.key']);
      if (s3) certChecks(ctx, 'renewal certs', s3, caBundle);
    }
    const foreign = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'jobguard-tls', namespace: 'default' }, type: 'kubernetes.io/tls',
      data: { 'tls.crt': secret.data['tls.crt'], 'tls.key': secret.data['tls.key'] } };
    const fr = renderOk(ctx, 'upgrade over a Secret without a CA', { upgrade: true, lookup: [foreign] });
    if (fr) {
      const s4 = one(fr.docs, 'Secret');
      c('Secret without CA: a new CA and certificate are made', !!s4?.data?.['ca.key'] && s4.data['ca.crt'] !== secret.data['ca.crt']);
      if (s4) certChecks(ctx, 'Secret without CA certs', s4, wh(fr.docs, 'jobs.jobguard.io')?.clientConfig?.caBundle);
    }
    const elsewhere = JSON.parse(JSON.stringify(secret));
    elsewhere.metadata.namespace = 'other';
    const ew = renderOk(ctx, 'lookup is namespaced', { upgrade: true, lookup: [elsewhere] });
    if (ew) c('lookup is namespaced: a Secret in another namespace is not reused', one(ew.docs, 'Secret')?.data?.['ca.crt'] !== secret.data['ca.crt']);
  }

  // policy: {} renders nothing; a policy block becomes a ConfigMap (toJson), mounted whole and
  // passed with --policy-file; the schema refuses wrong shapes and types
  if (def) {
    const ctr = mainContainer(one(def.docs, 'Deployment'));
    c('default: no policy ConfigMap, no --policy-file, no policy volume', find(def.docs, 'ConfigMap').length === 0 &&
      !(ctr?.args || []).includes('--policy-file') && !(ctr?.volumeMounts || []).some((m) => m.name === 'policy'));
  }
  const pol = renderOk(ctx, 'policy', { values: { policy: POLICY } });
  if (pol) {
    const docs = pol.docs;
    const cm = one(docs, 'ConfigMap', (d) => !d.metadata?.annotations?.['helm.sh/hook']);
    c('policy: one ConfigMap <fullname>-policy in the release namespace', cm?.metadata?.name === 'jobguard-policy' &&
      cm.metadata.namespace === 'default', cm?.metadata?.name);
    let parsed = null;
    try { parsed = JSON.parse(cm?.data?.['policy.json']); } catch { /* checked below */ }
    c('policy: ConfigMap policy.json is the values as JSON', eq(parsed, POLICY), cm?.data?.['policy.json']);
    // run.sh hands this to the real `jobguard policy check`
    if (ctx === main && cm?.data?.['policy.json']) fs.writeFileSync(path.join(opt.work, 'policy.json'), cm.data['policy.json']);
    const dep = one(docs, 'Deployment');
    const ctr = mainContainer(dep);
    c('policy: --policy-file /policy/policy.json', argVal(ctr?.args, '--policy-file') === '/policy/policy.json', JSON.stringify(ctr?.args));
    c('policy: flags still alternate with their values', (ctr?.args || []).slice(1).every((a, i) => (i % 2 === 0) === a.startsWith('--')));
    const mount = (ctr?.volumeMounts || []).find((m) => m.mountPath === '/policy');
    const vol = (dep?.spec?.template?.spec?.volumes || []).find((v) => v.name === mount?.name);
    c('policy: the ConfigMap is mounted read-only at /policy without subPath (updates reach the pod)',
      !!mount && mount.readOnly === true && !mount.subPath && vol?.configMap?.name === cm?.metadata?.name &&
      eq(vol.configMap.items, [{ key: 'policy.json', path: 'policy.json' }]), JSON.stringify([mount, vol]));
    c('policy: no checksum annotation (a policy change is reloaded, not rolled out)',
      !Object.keys(dep?.spec?.template?.metadata?.annotations || {}).some((k) => /checksum/.test(k)));
  }
  renderFails(ctx, 'schema rejects an unknown policy key', { values: { policy: { mode: { '*': 'warn' } } } }, /policy.*(Additional property mode is not allowed|additional properties 'mode' not allowed)/, { lint: true });
  renderFails(ctx, 'schema rejects a policy mode "block"', { values: { policy: { modes: { '*': 'block' } } } }, /policy[./]modes[./]\*.*(must be one of)/, { lint: true });
  renderFails(ctx, 'schema rejects allowUnlistedControllers "no"', { values: { policy: { allowUnlistedControllers: 'no' } } }, /policy[./]allowUnlistedControllers.*(Expected: boolean|want boolean)/, { lint: true });
  renderFails(ctx, 'schema rejects a controller without a name', { values: { policy: { controllers: [{ namespaces: ['a'] }] } } }, /policy[./]controllers[./]0.*(name is required|missing property 'name')/, { lint: true });
  renderFails(ctx, 'schema rejects a target without managedByPath', { values: { policy: { targets: [(({ managedByPath, ...rest }) => rest)(POLICY.targets[0])] } } }, /policy[./]targets[./]0.*(managedByPath is required|missing property 'managedByPath')/, { lint: true });
}

// The policy the chart tests render (every section of the file; jobguard accepts it: run.sh checks).
const POLICY = {
  targets: [{ group: 'kubeflow.org', versions: ['v1'], kind: 'JAXJob', resource: 'jaxjobs',
    managedByPath: 'spec.runPolicy.managedBy', reservedValue: 'kubeflow.org/training-operator', delegationSupported: false,
    nestedPaths: [{ path: 'spec.replicaSpecs[*].managedBy', reservedValue: '' }] },
  // replaces both built-in MPIJob rows (the chart's mpijob entry)
  { group: 'kubeflow.org', versions: ['v2beta1'], kind: 'MPIJob', resource: 'mpijobs',
    managedByPath: 'spec.runPolicy.managedBy', reservedValue: 'kubeflow.org/mpi-operator' },
  // kinds of its own: a CRD, and a core-group kind whose path needs CEL's quoted form
  { group: 'example.com', versions: ['v1', 'v1beta1'], kind: 'Widget', resource: 'widgets',
    managedByPath: 'spec.control.managedBy', reservedValue: 'example.com/widget-controller', checkFormat: true,
    nestedPaths: [{ path: 'spec.parts[*].template.spec.managedBy', reservedValue: 'kubernetes.io/job-controller', listKeys: ['name'] }] },
  { group: '', versions: ['v1'], kind: 'Gadget', resource: 'gadgets', managedByPath: 'spec.managed-by.namespace',
    reservedValue: "acme's \\ runner", checkFormat: false }],
  controllers: [{ name: 'kueue.x-k8s.io/multikueue', namespaces: ['team-*'],
    statusWriters: { users: ['system:serviceaccount:kueue-system:kueue-controller-manager'], groups: [] } }],
  allowUnlistedControllers: false,
  statusWriterExemptGroups: ['system:masters'],
  modes: { '*': 'deny', 'ALWAYS-ManagedByFormat': 'warn' },
};

// ---------------------------------------------------------------- helm package
// Certificate material is new on every render in helm mode: mask it (certChecks covers it).
const maskCerts = (text) => text.replace(/^(\s*(?:ca\.crt|ca\.key|tls\.crt|tls\.key|caBundle|jobguard\.io\/serving-cert-not-after):).*$/gm, '$1 <masked>');

function packageChecks() {
  const c = (n, cond, d) => main.check(`helm package: ${n}`, cond, d);
  const dest = path.join(opt.work, 'package');
  const meta = yaml.load(fs.readFileSync(path.join(opt.chart, 'Chart.yaml'), 'utf8'));
  const tgz = path.join(dest, `${meta.name}-${meta.version}.tgz`);
  const r = helm(['package', opt.chart, '--destination', dest]);
  if (!c(`makes ${path.basename(tgz)}`, r.status === 0 && fs.existsSync(tgz), `${r.stdout}${r.stderr}`.trim())) return;
  const inTar = spawnSync('tar', ['-tzf', tgz], { encoding: 'utf8' }).stdout.split('\n').filter((f) => f && !f.endsWith('/'));
  const inDir = fs.readdirSync(opt.chart, { recursive: true }).filter((f) => fs.statSync(path.join(opt.chart, f)).isFile())
    .map((f) => `${meta.name}/${f}`);
  c('the archive holds exactly the files of the chart directory', eq(sorted(inTar), sorted(inDir)), `${sorted(inTar)} vs ${sorted(inDir)}`);
  const l = lint({ chart: tgz });
  c('helm lint --strict passes on the archive', l.ok, l.out.trim().split('\n').slice(-4).join(' | '));
  const bundle = caBundle();
  const cases = [
    ['default', {}],
    ['certManager', { values: { certificates: { mode: 'certManager' } } }],
    ['existingSecret', { values: { certificates: { mode: 'existingSecret', existingSecret: { name: 'my-tls', caBundle: bundle } } } }],
    ['every toggle on', { name: 'prod', namespace: 'ops', values: { networkPolicy: { enabled: true, allowDNS: true },
      metrics: { serviceMonitor: { enabled: true } }, server: { clientAuth: { enabled: true, caSecretName: 'ca' } }, replicaCount: 3 } }],
  ];
  for (const [n, o] of cases) {
    const fromDir = render(o);
    const fromTgz = render({ ...o, chart: tgz });
    c(`${n}: the archive renders as the directory does`, fromDir.ok && fromTgz.ok && maskCerts(fromDir.out) === maskCerts(fromTgz.out),
      fromDir.ok && fromTgz.ok ? 'outputs differ' : (fromDir.err || fromTgz.err)?.trim());
    if (n === 'default' && fromTgz.ok) {
      const secret = one(fromTgz.docs, 'Secret');
      if (c('default: the archive renders a TLS Secret', !!secret)) certChecks(main, 'helm package: default certs', secret, wh(fromTgz.docs, 'jobs.jobguard.io')?.clientConfig?.caBundle);
    }
  }
}

// ---------------------------------------------------------------- self-test: the checks catch the bugs they name
// Each mutation breaks the chart the way a real bug would; the named check must then fail.
// A mutant renders only what its check needs: the render labelled by the check name's head, or
// for the certificate checks the renders that produce them.
const SECRET_MISSING = 'upgrade whose Secret is missing under a running Deployment (secretName changed) fails';
const rendersFor = (checkName) => {
  const head = checkName.split(': ')[0];
  const upgrade = { 'default certs': [], upgrade: ['upgrade with the Secret in the cluster'],
    renewal: ['upgrade 30 days before expiry'], 'renewal certs': ['upgrade 30 days before expiry'],
    [SECRET_MISSING]: [SECRET_MISSING] }[head];
  return upgrade ? ['default', ...upgrade] : [head];
};

function mutationTests() {
  const mutations = [
    ['templates/_helpers.tpl', 'resource: pytorchjobs, path: spec.runPolicy.managedBy', 'resource: pytorchjobs, path: spec.managedBy', 'default: pytorchjob status matchCondition reads spec.runPolicy.managedBy'],
    ['templates/_helpers.tpl', 'nested: ["spec.replicatedJobs[*].template.spec.managedBy"]', 'nested: []', 'default: jobset webhook managed-by (CEL) sends spec.managedBy, spec.replicatedJobs[*].template.spec.managedBy (new or old) and no other'],
    ['templates/_helpers.tpl', '{{- range $root := list "object" "oldObject" }}', '{{- range $root := list "object" }}', 'default: jobs webhook managed-by (CEL) sends a Job with spec.managedBy (new or old) and no other'],
    ['templates/_helpers.tpl', '(type(%s) != map || (%s))', '(%s)', 'default: rayjob webhook managed-by (CEL) sends spec.managedBy, spec.rayClusterSpec.managedBy (new or old) and no other',
      ['templates/_helpers.tpl', '$l.acc $in) $in $l.guard', '$in) $in $l.guard']],
    ['templates/_helpers.tpl', '%s.exists(%s, %s != null%s)', '%s.all(%s, %s != null%s)', 'default: jobset webhook managed-by (CEL) sends spec.managedBy, spec.replicatedJobs[*].template.spec.managedBy (new or old) and no other'],
    ['templates/_helpers.tpl', '{{ range .nestedPaths }}{{ $nested = append $nested .path }}{{ end }}', '', 'policy targets: the JAXJob row\'s nested path spec.replicaSpecs[*].managedBy is read by jaxjob.jobguard.io'],
    ['templates/_helpers.tpl', '{{ range $p.nestedPaths }}{{ $nested = append $nested .path }}{{ end }}', '', 'policy targets: widgets.example.com.jobguard.io managed-by (CEL) reads spec.control.managedBy and spec.parts[*].template.spec.managedBy'],
    ['templates/webhook.yaml', '"failurePolicy" $fp.targets.failurePolicy', '"failurePolicy" $fp.jobs.failurePolicy', 'targets failurePolicy alone: the CRD kinds Ignore, jobs and cronjobs still Fail'],
    ['templates/webhook.yaml', '"failurePolicy" $fp.targets.failurePolicy "objectSelector" $w.objectSelector', '"failurePolicy" $fp.targets.failurePolicy', 'objectSelector: on the 17 CREATE/UPDATE webhooks'],
    ['templates/webhook.yaml', '"resource" (printf "%s/status" $t.resource) "operations" (list "UPDATE") "failurePolicy" $fp.targetsStatus.failurePolicy', '"resource" (printf "%s/status" $t.resource) "operations" (list "UPDATE") "failurePolicy" $fp.targetsStatus.failurePolicy "objectSelector" $w.objectSelector', 'objectSelector: never on a status webhook (16)'],
    ['templates/_helpers.tpl', '(ternary "Fail" "Ignore" (gt (len $deny) 0))', '(ternary "Fail" "Ignore" (ge (len $deny) 0))', 'every rule in audit: every webhook (33) is Ignore'],
    ['templates/_helpers.tpl', 'targets: [ALWAYS-ManagedByFormat, ALWAYS-ManagedByLength, ALWAYS-ManagedByImmutable, Target-NestedManagedBy,', 'targets: [ALWAYS-ManagedByFormat, ALWAYS-ManagedByLength, Target-NestedManagedBy,', 'ALWAYS-ManagedByImmutable in deny, the rest audit: exactly the webhooks that enforce it (jobs, targets) are Fail'],
    ['templates/_helpers.tpl', '{{- $_ := set $modes $v "off" }}', '', '--mode and --disable-rule in server.extraArgs: --mode ID=deny makes its webhooks Fail, --disable-rule ID turns one off (jobs and CRD kinds Fail, cronjobs and status Ignore)'],
    ['templates/_helpers.tpl', '{{- if and $old (ne $old $former) }}', '{{- if false }}', 'webhook.jobs.failurePolicy=Ignore (no longer read) fails naming its replacement'],
    ['templates/_helpers.tpl', '(has .expression $former)', 'false', 'a copied former status matchCondition: dropped, the generated condition alone'],
    ['templates/webhook.yaml', '(concat (list (dict "name" "managed-by" "expression" $t.sendExpr)) $t.matchConditions $global)', '(concat (list (dict "name" "managed-by" "expression" $t.sendExpr)) $global)', 'per-kind matchConditions: each on its own webhook, after managed-by, nowhere else'],
    ['templates/webhook.yaml', '{{- if $w.jobs.enabled }}', '{{- if true }}', 'jobs webhooks disabled: no jobs and cronjobs webhooks; jobs-status and the CRD kinds stay'],
    ['templates/_helpers.tpl', '{{- if gt (len .matchConditions) 64 }}', '{{- if gt (len .matchConditions) 640 }}', 'more than 64 matchConditions on a webhook fails'],
    ['templates/NOTES.txt', '{{- with $w.objectSelector }}', '{{- with false }}', 'NOTES: an objectSelector is warned about'],
    ['templates/webhook.yaml', 'printf "%s/status" $t.resource', 'printf "%s" $t.resource', 'default: jobset status webhook rule jobsets/status UPDATE'],
    ['values.yaml', '  jobset:\n    enabled: true', '  jobset:\n    enabled: false', 'default: jobset status webhook rule jobsets/status UPDATE'],
    ['templates/_helpers.tpl', '{{- if (index $.Values.targets $n).enabled }}', '{{- if true }}', 'targets jaxjob off: jaxjob webhooks absent'],
    ['templates/_helpers.tpl', '{{- if not (hasKey $builtin $key) }}', '{{- if false }}', 'policy targets: widgets.example.com.jobguard.io: widgets CREATE/UPDATE (example.com v1, v1beta1), Fail'],
    ['templates/_helpers.tpl', '{{- if not (hasKey $builtin $key) }}', '{{- if false }}', 'policy targets, built-in kinds off: webhooks are jobs, cronjobs, jobs-status, and widgets and gadgets with their status webhooks'],
    ['templates/_helpers.tpl', '{{- with index $byKind $key }}', '{{- with false }}', 'policy targets: the MPIJob row replaces the built-in data (v2beta1, kubeflow.org/mpi-operator only)'],
    ['templates/_helpers.tpl', '{{- $_ := set $builtin $key $n }}', '', 'policy targets: the JAXJob row replacing the built-in gives one jaxjobs rule and one jaxjob-status webhook',
      ['templates/_helpers.tpl', '{{- with index $resources $gr }}', '{{- with false }}']],
    ['templates/_helpers.tpl', '{{- with index $resources $gr }}', '{{- with false }}', 'policy target for a resource a built-in kind sends fails'],
    ['templates/_helpers.tpl', '{{- if has $key (list "batch/Job" "batch/CronJob") }}', '{{- if false }}', 'policy row for batch CronJob fails (jobguard refuses it too)'],
    ['templates/_helpers.tpl', '(not (has $f $celReserved))', 'true', 'policy targets: gadgets (core group): rules with apiGroups [""], and a CEL matchCondition with quoted segments and escaped value'],
    ['templates/_helpers.tpl', 'replace "\'" "\\\\\'"', 'replace "\'" "\'"', 'policy targets: gadgets (core group): rules with apiGroups [""], and a CEL matchCondition with quoted segments and escaped value'],
    ['templates/_helpers.tpl', 'replace "\'" "\\\\\'"', 'replace "\'" "\'"', 'policy targets: every matchCondition parses as CEL'],
    ['templates/_helpers.tpl', "printf \"'%s' in %s\" $f $acc", "printf \"has(%s['%s'])\" $acc $f", "policy targets: gadgets status matchCondition (CEL) is true only for a spec['managed-by'].namespace other than acme's \\ runner"],
    ['templates/_helpers.tpl', '!(%s in [%s])', '(%s in [%s])', 'default: jobset status matchCondition (CEL) is true only for a spec.managedBy other than jobset.sigs.k8s.io/jobset-controller'],
    ['values.schema.json', '"pattern": "^[A-Za-z_][A-Za-z0-9_-]*(\\\\.[A-Za-z_][A-Za-z0-9_-]*)*$"', '"minLength": 1', 'schema rejects [*] in a policy managedByPath'],
    ['values.schema.json', '"properties": {"enabled": {"type": "boolean"}, "matchConditions"', '"properties": {"enabled": {}, "matchConditions"', 'targets bad enabled type'],
    ['values.schema.json', '"targets": {\n          "type": "object",\n          "additionalProperties": false,\n          "properties": {\n            "failurePolicy": {"$ref": "#/definitions/formerFailurePolicy"}',
      '"targets": {\n          "type": "object",\n          "additionalProperties": false,\n          "properties": {\n            "failurePolicy": {}', 'schema rejects targets failurePolicy "fail"'],
    ['templates/deployment.yaml', 'maxUnavailable: 0', 'maxUnavailable: 1', 'default: rolling update maxUnavailable 0'],
    ['values.yaml', 'replicaCount: 2', 'replicaCount: 1', 'default: replicas 2'],
    ['templates/deployment.yaml', 'terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}', 'terminationGracePeriodSeconds: {{ .Values.server.drainTimeoutSeconds }}', 'default: terminationGracePeriodSeconds > shutdown delay + drain timeout'],
    ['templates/deployment.yaml', 'automountServiceAccountToken: false', 'automountServiceAccountToken: true', 'default: automountServiceAccountToken false on the pod'],
    ['values.yaml', '  readOnlyRootFilesystem: true', '  readOnlyRootFilesystem: false', 'default: readOnlyRootFilesystem'],
    ['templates/_helpers.tpl', 'admissionReviewVersions: ["v1", "v1beta1"]', 'admissionReviewVersions: ["v1"]', 'default: jobs webhook admissionReviewVersions [v1, v1beta1]'],
    ['templates/_helpers.tpl', 'matchPolicy: Equivalent', 'matchPolicy: Exact', 'default: jobs webhook matchPolicy Equivalent'],
    ['templates/webhook.yaml', '"resource" "jobs/status"', '"resource" "jobs"', 'default: status webhook rule: batch/v1 jobs/status UPDATE only'],
    ['templates/webhook.yaml', '"resource" "cronjobs"', '"resource" "jobs"', 'default: cronjobs webhook rule: batch/v1 cronjobs CREATE/UPDATE'],
    ['templates/_helpers.tpl', "(object != null && has(object.spec) && has(object.spec.managedBy) && object.spec.managedBy != 'kubernetes.io/job-controller') ||", "(object != null && has(object.spec) && has(object.spec.managedBy) && object.spec.managedBy != 'kubernetes.io/job-controllers') ||", 'default: status webhook matchConditions: external-managed-by only'],
    ['templates/_helpers.tpl', '{{- $excluded = append $excluded .Release.Namespace }}', '', 'default: jobs webhook namespaceSelector excludes kube-system and default'],
    ['templates/webhook.yaml', '{{- $caBundle = $caCrt | b64enc }}', '{{- $caBundle = $tlsCrt | b64enc }}', 'default certs: caBundle equals the CA in the Secret'],
    ['templates/webhook.yaml', 'if gt $notAfter', 'if lt $notAfter', 'upgrade: same CA, serving certificate and key'],
    ['templates/webhook.yaml', 'lookup "v1" "Secret" $ns $secretName', 'lookup "v1" "Secret" $ns $fullname', 'upgrade: same CA, serving certificate and key'],
    ['templates/webhook.yaml', '{{- $ca = buildCustomCert ($caCrt | b64enc) ($caKey | b64enc) }}', '{{- $ca = genCAWithKey "x" 10 (genPrivateKey "ecdsa") }}', 'renewal certs: serving certificate is signed by the CA'],
    ['templates/webhook.yaml', '{{- if $caCrt }}\n{{- /* Rotation', '{{- if false }}\n{{- /* Rotation', 'renewal: same CA (caBundle unchanged)'],
    ['templates/webhook.yaml', 'cert-manager.io/inject-ca-from', 'cert-manager.io/inject-ca', 'certManager: VWC has the CA injector annotation for the serving Certificate'],
    ['templates/deployment.yaml', '              - key: tls.key\n                path: tls.key\n', '              - key: tls.key\n                path: tls.key\n              - key: ca.key\n                path: ca.key\n', 'default: the CA key is not mounted'],
    ['values.schema.json', '"enum": ["helm", "certManager", "existingSecret"]', '"type": "string"', 'schema rejects unknown certificate mode'],
    ['values.schema.json', '"replicaCount": {"type": "integer", "minimum": 1}', '"replicaCount": {}', 'schema rejects replicaCount "two"'],
    ['templates/webhook.yaml', '{{- $caBundle = required', '{{- $caBundle = default "" ', 'existingSecret without caBundle fails (required)',
      ['templates/_helpers.tpl', '{{- $_ := required "certificates.existingSecret.caBundle', '{{- $_ := default "certificates.existingSecret.caBundle']],
    ['values.schema.json', '"timeoutSeconds": {"type": "integer", "minimum": 1, "maximum": 30}', '"timeoutSeconds": {"type": "integer"}', 'schema rejects timeoutSeconds 31'],
    ['values.yaml', 'whenUnsatisfiable: DoNotSchedule', 'whenUnsatisfiable: ScheduleAnyway', 'default: spread over nodes, as a rule (topology spread on hostname selecting the pods, DoNotSchedule)'],
    ['templates/deployment.yaml', '{{- $_ := set $c "labelSelector"', '{{- $_ := set $c "labelSelectorX"', 'default: spread over nodes, as a rule (topology spread on hostname selecting the pods, DoNotSchedule)'],
    ['templates/deployment.yaml', '            - --shutdown-delay\n', '', 'default: flags alternate with their values'],
    ['templates/poddisruptionbudget.yaml', '(gt (int64 .Values.replicaCount)', '(ge (int64 .Values.replicaCount)', 'replicaCount 1: no PDB that would block node drains'],
    ['templates/policy.yaml', 'toJson .Values.policy', 'toYaml .Values.policy', 'policy: ConfigMap policy.json is the values as JSON'],
    ['templates/deployment.yaml', '            - --policy-file\n            - /policy/policy.json\n', '', 'policy: --policy-file /policy/policy.json'],
    ['templates/deployment.yaml', '              mountPath: /policy\n', '              mountPath: /policy\n              subPath: policy.json\n', 'policy: the ConfigMap is mounted read-only at /policy without subPath (updates reach the pod)'],
    ['templates/webhook.yaml', '{{- range $g, $_ := $fp }}{{ $_ := set (index $fp $g) "failurePolicy" "Ignore" }}{{ end }}', '', 'first install against a cluster: every webhook (33) Ignore'],
    ['templates/_helpers.tpl', '{{- if not (gt (int64 (dig "status" "readyReplicas" 0 ($d | default dict))) 0) }}', '{{- if false }}', 'first install against a cluster: every webhook (33) Ignore'],
    ['templates/_helpers.tpl', '{{- if $fail }}true{{ end }}', 'true', 'first install against a cluster, every rule in audit: no bootstrap hook (nothing to set)'],
    ['templates/_helpers.tpl', '{{- if lt (int64 $have) (int64 $need) }}', '{{- if false }}', 'memory limit one byte short of what the server needs fails'],
    ['templates/_helpers.tpl', '"connectionBase" 16384', '"connectionBase" 16400', 'memory limit exactly what the server needs: renders'],
    ['templates/_helpers.tpl', '{{- if and $q (hasKey $bytes "maxConnections")', '{{- if and $q (eq 1 2) (hasKey $bytes "maxConnections")', 'memory limit short for the extraArgs\' connections fails'],
    ['templates/webhook.yaml', '(not $h.newCA) (lookup "apps/v1" "Deployment" $ns $fullname) }}', '(not $h.newCA) false }}', 'upgrade whose Secret is missing under a running Deployment (secretName changed) fails'],
    ['templates/policy-check.yaml', '            - --strict\n', '', 'policy check hook: the Job runs `jobguard policy check /policy/policy.json` from the hook ConfigMap, once'],
    ['templates/NOTES.txt', '{{- if and (not $w.jobs.enabled) (hasKey $pol "allowUnlistedControllers") (not $pol.allowUnlistedControllers) }}', '{{- if false }}', 'NOTES: Job webhooks off while the policy restricts Jobs: a warning that the allow-list is not enforced on Jobs'],
    ['templates/policy-check.yaml', 'pre-install,pre-upgrade\n    helm.sh/hook-weight: "-5"', 'pre-install\n    helm.sh/hook-weight: "-5"', 'policy check hook: a ConfigMap and a Job, pre-install and pre-upgrade hooks, ConfigMap first'],
    ['templates/policy-check.yaml', 'data:\n  policy.json: {{ toJson .Values.policy | quote }}', 'data:\n  policy.json: {{ toJson (omit .Values.policy "modes") | quote }}', 'policy check hook: it checks the very policy.json the pods mount'],
    ['templates/tests/test-webhook.yaml', 'verbs: ["get"]', 'verbs: ["get", "list"]', "default: test ClusterRole: get on the release's ValidatingWebhookConfiguration only"],
    ['templates/tests/test-webhook.yaml', '    resourceNames: [{{ $fullname | quote }}]\n', '', "default: test ClusterRole: get on the release's ValidatingWebhookConfiguration only"],
    ['templates/tests/test-webhook.yaml', '  - kind: ServiceAccount\n    name: {{ $testName }}', '  - kind: ServiceAccount\n    name: {{ include "jobguard.serviceAccountName" . }}',
      "default: no RBAC objects but the helm test hook's, and none binds jobguard's ServiceAccount"],
    ['templates/tests/test-webhook.yaml', 'expirationSeconds: 600', 'expirationSeconds: 86400', 'default: test pod: a projected token of at most 10 minutes and the cluster CA at /var/run/secrets/jobguard-test, no TLS Secret'],
    ['values.yaml', 'caSource: webhookConfiguration', 'caSource: secret', "default: the test pod does not mount the TLS Secret (it verifies with the webhook configuration's caBundle)"],
    ['values.yaml', 'caSource: webhookConfiguration', 'caSource: secret', 'certManager: helm test verifies with the caBundle cert-manager injected into the webhook configuration'],
    ['templates/policy-check.yaml', '{{- include "jobguard.kueueCheck" . }}', '', 'Kueue, an upgrade fails the same (pre-upgrade policy check)'],
    ['templates/bootstrap.yaml', '{{- include "jobguard.kueueCheck" . }}', '', 'Kueue, no policy, fails naming only the bootstrap hook'],
    ['templates/_helpers.tpl', '"NotIn" (not $in)', '"NotIn" $in', 'Kueue manages Jobs without a queue name (default selector), the install fails at once with the hint'],
    ['templates/_helpers.tpl', '"NotIn" (not $in)', '"NotIn" true', 'Kueue proceeds, the release namespace in the selector\'s NotIn: renders'],
    ['templates/_helpers.tpl', '"DoesNotExist" (not $has)', '"DoesNotExist" true', 'Kueue proceeds, matchExpressions DoesNotExist a label the namespace has: renders'],
    ['templates/_helpers.tpl', '{{ $selected = false }}{{ end }}\n{{- end }}\n{{- range (dig "matchExpressions"', '{{ end }}\n{{- end }}\n{{- range (dig "matchExpressions"', 'Kueue proceeds, matchLabels the namespace lacks: renders'],
    ['templates/_helpers.tpl', '(or (has "batch/job" $frameworks) (has "pod" $frameworks))', '(has "batch/job" $frameworks)', "Kueue, the pod integration alone fails too (it gates the hooks' pods)"],
    ['templates/_helpers.tpl', 'merge (dict "kubernetes.io/metadata.name" $ns) (dig', 'merge dict (dig', 'Kueue, the release namespace not created yet (helm --create-namespace), fails by its name label'],
    ['templates/_helpers.tpl', '(list "kube-system" ($cfg.namespace | default (first $ref)))', '(list "kube-system")', "Kueue proceeds, installed in Kueue's own namespace, which the default selector leaves out: renders"],
    ['values.schema.json', '"mode": {"type": "string", "enum": ["deny", "warn", "audit", "off"]}', '"mode": {"type": "string"}', 'schema rejects a policy mode "block"'],
    ['values.schema.json', `"rule ID (jobguard rules) or * (every rule not named) -> mode; an unknown rule ID is refused here, before it reaches a pod",
          "type": "object",
          "additionalProperties": false,`, `"rule ID (jobguard rules) or * (every rule not named) -> mode; an unknown rule ID is refused here, before it reaches a pod",
          "type": "object",
          "additionalProperties": true,`, 'schema rejects an unknown rule ID in policy.modes'],
  ];
  const root = path.join(opt.work, 'mutants');
  fs.rmSync(root, { recursive: true, force: true });
  mutations.forEach(([file, from, to, checkName, more], i) => {
    const label = `self-test: mutation ${i + 1} (${file}) is caught by "${checkName}"`;
    const dir = path.join(root, String(i + 1));
    fs.cpSync(opt.chart, dir, { recursive: true });
    const f = path.join(dir, file);
    const text = fs.readFileSync(f, 'utf8');
    if (!main.check(`${label}: mutation applies`, text.includes(from), `"${from}" not found in ${file}`)) return;
    fs.writeFileSync(f, text.replace(from, to));
    if (more) {
      const f2 = path.join(dir, more[0]);
      const t2 = fs.readFileSync(f2, 'utf8');
      if (!main.check(`${label}: second mutation applies`, t2.includes(more[1]), `"${more[1]}" not found in ${more[0]}`)) return;
      fs.writeFileSync(f2, t2.replace(more[1], more[2]));
    }
    const ctx = new Ctx(rendersFor(checkName));
    const saved = opt.chart;
    opt.chart = dir;
    try { scenarios(ctx); } finally { opt.chart = saved; }
    main.check(label, ctx.failures.includes(checkName), `still passes (${ctx.failed} other failures: ${ctx.failures.slice(0, 3).join(' | ')})`);
  });
}

// ---------------------------------------------------------------- upgrades over earlier values
// `helm upgrade --reuse-values` renders the new templates with the values of the release's old chart
// (Helm replaces the new chart's values.yaml by the old one), and a values file copied from an old
// `helm show values` does the same. For every values.yaml in this repository's history, the current
// templates must render with it as the chart's values.yaml, and give the webhooks of a fresh render:
// the same names, rules, failurePolicy, matchConditions and selectors (caBundle aside, a new CA per
// render), less only the CRD kinds that the old values switched off (targets.<kind>.enabled: false).
function historyChecks() {
  const c = (n, cond, d) => main.check(`earlier values.yaml: ${n}`, cond, d);
  const top = spawnSync('git', ['-C', opt.chart, 'rev-parse', '--show-toplevel'], { encoding: 'utf8' });
  if (!c('the chart is in a git checkout (its history holds the earlier values.yaml)', top.status === 0, top.stderr?.trim())) return;
  const rel = path.relative(top.stdout.trim(), path.join(opt.chart, 'values.yaml'));
  const log = spawnSync('git', ['-C', top.stdout.trim(), 'log', '--format=%H', '--', rel], { encoding: 'utf8' });
  const commits = log.stdout.split('\n').filter(Boolean);
  if (!c('git log lists earlier versions', log.status === 0 && commits.length >= 2, log.stderr)) return;
  const strip = (docs) => (webhookDoc(docs)?.webhooks || []).map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: undefined } }));
  const fresh = render({});
  if (!c('fresh render', fresh.ok, fresh.err)) return;
  const freshHooks = strip(fresh.docs);
  const copy = path.join(opt.work, 'history-chart');
  fs.rmSync(copy, { recursive: true, force: true });
  fs.cpSync(opt.chart, copy, { recursive: true });
  const current = fs.readFileSync(path.join(opt.chart, 'values.yaml'), 'utf8');
  for (const commit of commits) {
    const show = spawnSync('git', ['-C', top.stdout.trim(), 'show', `${commit}:${rel}`], { encoding: 'utf8' });
    if (!c(`${commit.slice(0, 7)}: git show`, show.status === 0, show.stderr)) continue;
    if (show.stdout === current) continue; // the values.yaml of this checkout
    fs.writeFileSync(path.join(copy, 'values.yaml'), show.stdout);
    const old = yaml.load(show.stdout) || {};
    const r = render({ chart: copy });
    if (!c(`${commit.slice(0, 7)}: the current templates render with it as the chart's values`, r.ok, r.err?.trim().split('\n').slice(-3).join(' | '))) continue;
    const off = Object.entries(old.targets || {}).filter(([, t]) => t && t.enabled === false).map(([k]) => k);
    const want = freshHooks.filter((w) => !off.some((k) => w.name === `${k}.jobguard.io` || w.name === `${k}-status.jobguard.io`));
    const got = strip(r.docs);
    const diff = want.map((w) => w.name).filter((n, i) => !eq(want[i], got.find((g) => g.name === n)));
    c(`${commit.slice(0, 7)}: the webhooks of a fresh render${off.length ? ` less the ${off.length} kinds it switched off` : ''}`,
      got.length === want.length && diff.length === 0, `${got.length} vs ${want.length}; differ: ${diff.join(' ')}`);
  }
}

// ---------------------------------------------------------------- stale names
// The docs, the README, values.yaml, the rendered manifests (their comments included) and NOTES must
// not name a webhook the chart does not render, nor a removed key or default, except on a line that
// says it is gone. Webhook names: every concrete <...>.jobguard.io must be one the chart renders (by
// default, or for the policy target rows of POLICY).
function staleChecks() {
  const c = (n, cond, d) => main.check(`stale names: ${n}`, cond, d);
  const def = render({});
  const rows = render({ values: { policy: POLICY } });
  const n1 = notes({});
  const n2 = notes({ values: { policy: { modes: { '*': 'audit' } } } });
  if (!c('renders', def.ok && rows.ok && n1.ok && n2.ok, def.err || rows.err || n1.err || n2.err)) return;
  const known = new Set([...webhookDoc(def.docs).webhooks, ...webhookDoc(rows.docs).webhooks].map((w) => w.name));
  const top = TOP;
  const files = [['README.md', fs.readFileSync(path.join(top, 'README.md'), 'utf8')],
    ['values.yaml', fs.readFileSync(path.join(opt.chart, 'values.yaml'), 'utf8')],
    ...fs.readdirSync(path.join(top, 'docs')).filter((f) => f.endsWith('.md')).map((f) => [`docs/${f}`, fs.readFileSync(path.join(top, 'docs', f), 'utf8')]),
    ['the default render', def.out], ['NOTES', n1.notes], ['NOTES (audit)', n2.notes]];
  const gone = /\bgone\b|no longer|former|until (now|this version)|replaces it|not `--reuse-values`|renders the new templates|the chart before/i;
  const removed = [/\btargets\.jobguard\.io\b/, /webhook\.(jobs|targets|status)\.failurePolicy\b/, /every Job write/, /Not sent to jobguard/,
    /kubectl logs deploy\//, /--reuse-values/];
  const bad = [];
  for (const [name, text] of files) {
    text.split('\n').forEach((line, i) => {
      const where = `${name}:${i + 1}`;
      for (const re of removed) if (re.test(line) && !gone.test(line)) bad.push(`${where}: ${re.source}`);
      for (const m of line.matchAll(/(?<![\w<>.%-])([a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.jobguard\.io)\b/g)) {
        if (!known.has(m[1]) && !(m[1] === 'targets.jobguard.io' && gone.test(line))) bad.push(`${where}: ${m[1]} is not a webhook the chart renders`);
      }
    });
  }
  c('no line names a removed webhook, key or default without saying it is gone', bad.length === 0, bad.slice(0, 12).join('; '));
  // the check itself: a planted stale line is found
  const planted = 'With failurePolicy Fail every Job write fails (targets.jobguard.io, webhook.jobs.failurePolicy).';
  c('a planted stale line is caught', removed.filter((re) => re.test(planted)).length >= 3 && !gone.test(planted));
}

// ---------------------------------------------------------------- main
scenarios(main);
staleChecks();
historyChecks();
packageChecks();
if (!process.env.JOBGUARD_CHART_NO_SELFTEST) mutationTests();
console.log(`${main.passed} passed, ${main.failed} failed`);
process.exit(main.failed ? 1 : 0);

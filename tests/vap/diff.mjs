// The emitted ValidatingAdmissionPolicies against jobguard itself. Run by tests/vap/run.sh:
//
//   node diff.mjs --jobguard BIN --cases DIR
//
// For every review in DIR/*/review.json (with the case's policy.json and the --mode flags of its
// args file) it prints the policies (`jobguard vap --output json --job-rules`, so that the Job and
// CronJob format rules of clusters before 1.32 are evaluated too) and evaluates them as the API
// server does: a policy applies when a resourceRule matches the request's group, resource (with
// "/<subresource>"), operation and, for matchPolicy Exact, version (Equivalent: any version of the
// resource; the harness cannot convert objects, and jobguard's rows read the same path in every
// version); then its variables and validations (CEL, @bufbuild/cel with its strings extension,
// which implements the Kubernetes strings library's indexOf, substring, replace and join) with
// `object`, `oldObject` (null when absent), `request` and `variables` bound; a false validation
// acts per its binding's validationActions; an error is a failure (failurePolicy Fail).
//
// jobguard's verdict is `jobguard check` of the same review with the same policy and flags, and
// every rule the VAPs do not carry switched off (--mode ID=off): the VAP verdict must equal it,
// for every case (allowed, warnings or not, audit annotations or not). A case is in scope when
// switching those rules off does not change jobguard's verdict; the others are listed as out of
// scope (the Job status rules stay with the webhook). The first denial's text must be among the
// VAP messages unless docs/vap.md says CEL cannot produce it (a list element's index, a value Go
// quotes with escapes). Then a property test (random policies and requests, the same comparison)
// and the command's own options. Every emitted object is validated against the OpenAPI schema of
// kubernetes-models (the version tests/chart/package.json pins) and, structurally, against the
// field lists of each Kubernetes release given with --openapi (openapi.mjs, openapi.pins). Prints "N in scope / M out of scope" and "N passed, M failed".
import fs from 'node:fs';
import os from 'node:os';
import yaml from 'js-yaml';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { celEnv, parse, plan, isCelError } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { loadRelease, validate } from './openapi.mjs';

const argv = process.argv.slice(2);
const opt = {};
for (let i = 0; i < argv.length; i += 2) opt[argv[i].replace(/^--/, '')] = argv[i + 1];
if (!opt.jobguard || !opt.cases || !opt.openapi) {
  console.error('usage: node diff.mjs --jobguard BIN --cases DIR --openapi REL=DIR[,REL=DIR...]');
  process.exit(2);
}

const VAP_RULES = new Set(['ALWAYS-ManagedByFormat', 'ALWAYS-ManagedByLength', 'ALWAYS-ManagedByImmutable',
  'Target-NestedManagedBy', 'Target-DelegationUnsupported', 'Policy-AllowedControllers', 'Policy-StatusWriters']);
const allRules = spawnSync(opt.jobguard, ['rules'], { encoding: 'utf8' }).stdout
  .split('\n').filter((l) => /^\S+\s+docs\/rules\.md/.test(l)).map((l) => l.split(/\s+/)[0]);
const offFlags = allRules.filter((r) => !VAP_RULES.has(r)).flatMap((r) => ['--mode', `${r}=off`]);

// Copies under a list matched by index (a nested path's listKeys has "") are checked by the VAP
// on CREATE only (docs/vap.md): on UPDATE the comparison leaves Target-NestedManagedBy to the webhook.
const showCache = new Map();
function byIndexUpdateFlags(polArgs, req) {
  if (req.operation !== 'UPDATE' || req.subResource) return [];
  const key = polArgs.join('\0');
  if (!showCache.has(key)) {
    const r = spawnSync(opt.jobguard, ['policy', 'show', ...polArgs.slice(1)], { encoding: 'utf8' });
    showCache.set(key, r.status === 0 ? JSON.parse(r.stdout).targets : []);
  }
  const rows = showCache.get(key).filter((t) => t.group === req.resource.group && t.resource === req.resource.resource);
  return rows.some((t) => t.nestedPaths.some((n) => n.listKeys.includes(''))) ? ['--mode', 'Target-NestedManagedBy=off'] : [];
}

// Kubernetes' field lists per release (openapi.mjs, openapi.pins); each must say its release.
const releases = opt.openapi.split(',').map((x) => { const [rel, dir] = x.split('='); return { rel, r: loadRelease(dir) }; });
let schemaChecked = 0;

let passed = 0;
let failed = 0;
const check = (name, ok, detail = '') => {
  if (ok) passed++;
  else { failed++; console.log(`FAIL ${name}${detail ? `: ${detail}` : ''}`); }
  return ok;
};

const env = celEnv({ funcs: strings });
const programs = new Map();
function evalCel(expr, bindings) {
  let p = programs.get(expr);
  if (!p) { p = plan(env, parse(expr)); programs.set(expr, p); }
  return p(bindings);
}

const vapCache = new Map();
function vaps(vapArgs) {
  const key = vapArgs.join('\0');
  if (!vapCache.has(key)) {
    const r = spawnSync(opt.jobguard, ['vap', '--output', 'json', '--job-rules', ...vapArgs], { encoding: 'utf8' });
    check(`jobguard vap ${vapArgs.join(' ')}`, r.status === 0, r.stderr.trim());
    const items = r.status === 0 ? JSON.parse(r.stdout).items : [];
    // every object against the OpenAPI schema kubernetes-models carries, every CEL string parses
    for (const o of items) {
      const Model = o.kind === 'ValidatingAdmissionPolicy' ? ValidatingAdmissionPolicy : ValidatingAdmissionPolicyBinding;
      let err = '';
      try { new Model(o).validate(); } catch (e) { err = e.message; }
      check(`schema: ${o.kind} ${o.metadata.name}`, err === '' && o.metadata.name.length <= 253, err);
      for (const { r } of releases) {
        const errs = validate(r, `V1${o.kind}`, o);
        schemaChecked++;
        check(`Kubernetes ${r.release} OpenAPI: ${o.kind} ${o.metadata.name}`, errs.length === 0, errs.join('; '));
      }
    }
    const bindings = new Map(items.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding').map((b) => [b.spec.policyName, b]));
    vapCache.set(key, items.filter((o) => o.kind === 'ValidatingAdmissionPolicy').map((p) => ({ p, b: bindings.get(p.metadata.name) })));
  }
  return vapCache.get(key);
}

function matches(p, req) {
  const sub = req.subResource ? `/${req.subResource}` : '';
  return p.spec.matchConstraints.resourceRules.some((r) =>
    r.apiGroups.includes(req.resource.group) && r.resources.includes(req.resource.resource + sub) &&
    r.operations.includes(req.operation) &&
    (p.spec.matchConstraints.matchPolicy === 'Equivalent' || r.apiVersions.includes(req.resource.version)));
}

// The API server's verdict: denied with the Deny messages, warned, audited; errors fail closed.
function vapVerdict(list, req) {
  const request = { ...req, namespace: req.namespace ?? '', userInfo: { username: '', ...req.userInfo } };
  const out = { denied: [], warned: [], audited: [], errors: [] };
  for (const { p, b } of list) {
    if (!matches(p, req)) continue;
    const variables = {};
    const bind = { object: req.object ?? null, oldObject: req.oldObject ?? null, request, variables };
    for (const v of p.spec.variables || []) {
      const r = evalCel(v.expression, bind);
      if (isCelError(r)) { out.errors.push(`${p.metadata.name} variable ${v.name}: ${r.message}`); variables[v.name] = null; } else variables[v.name] = r;
    }
    for (const v of p.spec.validations) {
      const r = evalCel(v.expression, bind);
      let msg;
      if (isCelError(r)) { out.errors.push(`${p.metadata.name}: ${r.message}`); msg = 'error'; } else if (r === true) continue;
      else if (v.messageExpression) {
        const m = evalCel(v.messageExpression, bind);
        msg = isCelError(m) ? (out.errors.push(`${p.metadata.name} message: ${m.message}`), v.message || '') : m;
      } else msg = v.message;
      for (const a of b.spec.validationActions) {
        if (a === 'Deny') out.denied.push({ msg, reason: v.reason });
        else if (a === 'Warn') out.warned.push(msg);
        else out.audited.push(msg);
      }
    }
  }
  return out;
}

function check_(args, review) {
  const r = spawnSync(opt.jobguard, ['check', ...args, '-'], { input: review, encoding: 'utf8' });
  return r.stdout ? JSON.parse(r.stdout).response : null;
}
const verdictOf = (resp) => ({ allowed: resp.allowed, warned: (resp.warnings || []).length > 0, audited: Object.keys(resp.auditAnnotations || {}).length > 0 });
const same = (a, b) => a.allowed === b.allowed && a.warned === b.warned && a.audited === b.audited;

// A first denial CEL cannot render exactly (docs/vap.md "Messages").
function inexactClass(text) {
  if (/\[\d+\]/.test(text)) return 'list element index';
  if (/\\[^"\\nrt]|[^\x20-\x7e]/.test(text)) return 'Go escaping of a non-printable value';
  if (/\[truncated /.test(text)) return 'value cut at 64 KiB';
  return null;
}

const inScope = [];
const outOfScope = [];
let exact = 0;
const inexact = {};
for (const name of fs.readdirSync(opt.cases).sort()) {
  const dir = path.join(opt.cases, name);
  if (!fs.existsSync(path.join(dir, 'review.json'))) continue;
  const text = fs.readFileSync(path.join(dir, 'review.json'), 'utf8');
  const args = fs.existsSync(path.join(dir, 'args')) ? fs.readFileSync(path.join(dir, 'args'), 'utf8').trim().split(/\s+/).filter(Boolean) : [];
  const pol = path.join(dir, 'policy.json');
  const polArgs = fs.existsSync(pol) ? ['--policy-file', pol] : [];
  const modeArgs = [];
  for (let i = 0; i < args.length; i++) if (args[i] === '--mode') modeArgs.push('--mode', args[i + 1]);
  let review;
  try { review = JSON.parse(text); } catch (e) { outOfScope.push(`${name} (not JSON for the API server: ${e.message})`); continue; }
  const req = review.request;
  const full = check_([...args, ...polArgs], text);
  const restricted = check_([...args, ...polArgs, ...offFlags, ...(req ? byIndexUpdateFlags(polArgs, req) : [])], text);
  if (!check(`${name}: jobguard check answers`, full && restricted)) continue;
  if (!req || !req.resource || !req.operation) { outOfScope.push(`${name} (no request the API server would send)`); continue; }
  const v = vapVerdict(vaps([...polArgs, ...modeArgs]), req);
  check(`${name}: CEL evaluates without error`, v.errors.length === 0, v.errors.join('; '));
  const got = { allowed: v.denied.length === 0, warned: v.warned.length > 0, audited: v.audited.length > 0 };
  const want = verdictOf(restricted);
  check(`${name}: VAP verdict equals jobguard's with only the VAP rules`, same(got, want),
    `VAP ${JSON.stringify(got)} ${JSON.stringify(v.denied.map((d) => d.msg))}, jobguard ${JSON.stringify(want)} ${restricted.status?.message || ''}`);
  if (same(verdictOf(full), want)) inScope.push(name);
  else outOfScope.push(`${name} (webhook-only rules decide it)`);
  if (!restricted.allowed) {
    const st = restricted.status;
    const c0 = st.details?.causes?.[0];
    const first = c0 ? (c0.field ? `${c0.field}: ${c0.message}` : c0.message) : st.message.replace(/^.* is forbidden: /, '');
    const reason = st.code === 403 ? 'Forbidden' : 'Invalid';
    const hit = v.denied.find((d) => d.msg === first);
    if (hit) {
      exact++;
      check(`${name}: reason ${reason}`, hit.reason === reason, hit.reason);
    } else {
      const cls = inexactClass(first) || (v.denied.some((d) => d.msg.includes('[*]')) ? 'list element index' : null);
      if (check(`${name}: first denial's text is a VAP message`, cls !== null, `jobguard ${JSON.stringify(first)}, VAP ${JSON.stringify(v.denied.map((d) => d.msg))}`))
        inexact[cls] = (inexact[cls] || 0) + 1;
    }
  }
}
// ---------------------------------------------------------------- property test
// Random policies (controllers, namespace globs with *, ?, [...], [!...] and ranges, status
// writers, exempt groups) and random requests: the VAP verdict must equal jobguard's with only
// the VAP rules on (a seeded generator: the same cases every run; JOBGUARD_VAP_SEED picks others).
let seed = Number(process.env.JOBGUARD_VAP_SEED || 20261125);
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return Math.floor((seed / 2147483648) * n); };
const pick = (a) => a[rnd(a.length)];
const some = (a, max) => Array.from({ length: rnd(max + 1) }, () => pick(a));
const NAMES = ['kueue.x-k8s.io/multikueue', 'acme.io/a', 'acme.io/b', 'example.com/c'];
const VALUES = [...NAMES, 'kubernetes.io/job-controller', 'jobset.sigs.k8s.io/jobset-controller',
  'kubeflow.org/training-operator', 'Acme.io/x', 'acme.io/a b', '', 'acme.io', 'a/"q"\\', 'x'.repeat(60) + '/abcd', null];
const USERS = ['alice', 'system:serviceaccount:kueue-system:kueue', 'bob'];
const GROUPS = ['system:masters', 'ops', 'system:authenticated', 'writers'];
function glob() {
  const parts = ['a', 'b', '0', '-', '*', '?', '[ab]', '[!a]', '[a-c]', '[c-a]', '[0-9]', '[-a]'];
  return Array.from({ length: 1 + rnd(4) }, () => pick(parts)).join('');
}
const NAMESPACES = ['a', 'b', 'ab', 'a-b', 'b0', 'c', '0', 'aa', 'team-a', 'abc', 'ba-'];
const KINDS = [
  { group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job', set: (o, v) => { o.spec.managedBy = v; } },
  { group: 'batch', version: 'v1', resource: 'cronjobs', kind: 'CronJob', set: (o, v) => { o.spec.jobTemplate = { spec: { managedBy: v } }; } },
  { group: 'jobset.x-k8s.io', version: 'v1alpha2', resource: 'jobsets', kind: 'JobSet', set: (o, v) => { o.spec.managedBy = v; } },
  { group: 'kubeflow.org', version: 'v1', resource: 'jaxjobs', kind: 'JAXJob', set: (o, v) => { o.spec.runPolicy = { managedBy: v }; } },
  { group: 'example.com', version: 'v1', resource: 'batchruns', kind: 'BatchRun', set: (o, v) => { o.spec.managedBy = v; } },
];
// nested copies: JobSet's replicatedJobs (keyed by name), BatchRun's steps (a policy row, by index)
const NESTED_VALUES = ['kubernetes.io/job-controller', 'acme.io/a', '', null];
function copies(kind) {
  const l = Array.from({ length: rnd(4) }, () => {
    const v = pick(NESTED_VALUES);
    const spec = v === null ? {} : { managedBy: v };
    if (kind === 'JobSet') return { ...(rnd(4) ? { name: pick(['a', 'b', 'c']) } : {}), template: { spec } };
    return { jobTemplate: { spec } };
  });
  return kind === 'JobSet' ? { replicatedJobs: l } : { steps: l };
}
const BATCHRUN = (rv) => ({ group: 'example.com', versions: ['v1'], kind: 'BatchRun', resource: 'batchruns',
  managedByPath: 'spec.managedBy', reservedValue: 'example.com/batchrun-controller',
  nestedPaths: [{ path: 'spec.steps[*].jobTemplate.spec.managedBy', reservedValue: rv }] });
function object(k, v, status) {
  const o = { apiVersion: `${k.group}/${k.version}`, kind: k.kind, metadata: { name: 'x' }, spec: {} };
  if (v !== null) k.set(o, v);
  if (status !== undefined) o.status = status;
  return o;
}
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'jobguard-vap-'));
const PROPERTY_POLICIES = 40;
const PROPERTY_REQUESTS = 12;
let propertyCases = 0;
for (let i = 0; i < PROPERTY_POLICIES; i++) {
  const controllers = Array.from({ length: 1 + rnd(3) }, () => {
    const c = { name: pick(NAMES) };
    if (rnd(3)) c.namespaces = Array.from({ length: 1 + rnd(2) }, glob);
    if (rnd(2)) c.statusWriters = { users: some(USERS, 2), groups: some(GROUPS, 1) };
    return c;
  });
  const policy = { controllers, allowUnlistedControllers: rnd(4) !== 0 };
  if (rnd(2)) policy.statusWriterExemptGroups = some(GROUPS, 2);
  if (rnd(2)) policy.targets = [BATCHRUN(pick(['', 'kubernetes.io/job-controller']))];
  const pf = path.join(work, `policy-${i}.json`);
  fs.writeFileSync(pf, JSON.stringify(policy));
  if (spawnSync(opt.jobguard, ['policy', 'check', pf]).status !== 0) continue; // a glob the file refuses
  const list = vaps(['--policy-file', pf]);
  for (let r = 0; r < PROPERTY_REQUESTS; r++) {
    const k = pick(KINDS);
    const op = pick(['CREATE', 'UPDATE', 'UPDATE']);
    const status = op === 'UPDATE' && k.kind !== 'CronJob' && rnd(2) ? 'status' : undefined;
    const v = pick(VALUES);
    const old = rnd(3) ? v : pick(VALUES);
    const req = {
      uid: `p${i}-${r}`, kind: { group: k.group, version: k.version, kind: k.kind },
      resource: { group: k.group, version: k.version, resource: k.resource }, name: 'x',
      namespace: pick(NAMESPACES), operation: op,
      userInfo: { username: pick(USERS), groups: some(GROUPS, 2) },
      object: object(k, v, status ? { active: 1 } : undefined),
      oldObject: op === 'UPDATE' ? object(k, old, status ? { active: 0 } : undefined) : null,
    };
    if (status) req.subResource = 'status';
    if (!req.userInfo.groups.length && rnd(2)) delete req.userInfo.groups; // a request without groups
    if ((k.kind === 'JobSet' || k.kind === 'BatchRun') && !status) {
      Object.assign(req.object.spec, copies(k.kind));
      if (req.oldObject) Object.assign(req.oldObject.spec, rnd(2) ? structuredClone(req.object.spec) : copies(k.kind), { managedBy: req.oldObject.spec.managedBy });
      if (req.oldObject && req.oldObject.spec.managedBy === undefined) delete req.oldObject.spec.managedBy;
    }
    const text = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req });
    const want = check_(['--policy-file', pf, ...offFlags, ...byIndexUpdateFlags(['--policy-file', pf], req)], text);
    if (!check(`property ${req.uid}: jobguard check answers`, want)) continue;
    const got = vapVerdict(list, req);
    propertyCases++;
    check(`property ${req.uid}: CEL evaluates without error`, got.errors.length === 0, got.errors.join('; '));
    const g = { allowed: got.denied.length === 0, warned: got.warned.length > 0, audited: got.audited.length > 0 };
    check(`property ${req.uid}: VAP verdict equals jobguard's`, same(g, verdictOf(want)),
      `policy ${JSON.stringify(policy)} request ${JSON.stringify({ ns: req.namespace, op, status, kind: k.kind, v, old, user: req.userInfo, spec: req.object.spec, oldSpec: req.oldObject?.spec })}: VAP ${JSON.stringify(got.denied.map((d) => d.msg))}, jobguard ${want.status?.message || 'allowed'}`);
  }
}
// A request without userInfo.groups (none listed, not an error) by a listed and an unlisted user.
{
  const pf = path.join(work, 'policy-groups.json');
  fs.writeFileSync(pf, JSON.stringify({ controllers: [{ name: 'acme.io/a', statusWriters: { users: ['alice'] } }] }));
  const k = KINDS[0];
  for (const user of ['alice', 'bob']) {
    const req = {
      uid: `nogroups-${user}`, kind: { group: 'batch', version: 'v1', kind: 'Job' },
      resource: { group: 'batch', version: 'v1', resource: 'jobs' }, subResource: 'status', name: 'x',
      namespace: 'a', operation: 'UPDATE', userInfo: { username: user },
      object: object(k, 'acme.io/a', { active: 1 }), oldObject: object(k, 'acme.io/a', { active: 0 }),
    };
    const want = check_(['--policy-file', pf, ...offFlags], JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req }));
    const got = vapVerdict(vaps(['--policy-file', pf]), req);
    check(`${req.uid}: CEL evaluates without error`, got.errors.length === 0, got.errors.join('; '));
    check(`${req.uid}: VAP verdict equals jobguard's`, want && (got.denied.length === 0) === want.allowed && want.allowed === (user === 'alice'));
  }
}
// The README's MultiKueue policies ("The policy file"): the manager's and the worker's objects
// pass the schema check (vaps()) and agree with jobguard on a few requests each.
{
  const KQ = 'system:serviceaccount:kueue-system:kueue-controller-manager';
  const policies = {
    manager: { controllers: [{ name: 'kueue.x-k8s.io/multikueue', statusWriters: { users: [KQ] } }],
      allowUnlistedControllers: false, modes: { '*': 'deny', 'ALWAYS-ManagedByFormat': 'warn' } },
    worker: { controllers: [], allowUnlistedControllers: false },
  };
  const k = KINDS[0]; // batch/v1 Job
  const JS = { group: 'jobset.x-k8s.io', version: 'v1alpha2', kind: 'JobSet', resource: 'jobsets', set: (o, v) => { o.spec.managedBy = v; } };
  const MK = 'kueue.x-k8s.io/multikueue';
  const reqs = [ // [policy, uid, kind, op, value, old value, status writer, jobguard allows]
    ['manager', 'job-multikueue', k, 'CREATE', MK, undefined, null, true],
    ['manager', 'job-other', k, 'CREATE', 'acme.io/x', undefined, null, false],
    ['manager', 'status-by-kueue', k, 'UPDATE', MK, MK, KQ, true],
    ['manager', 'status-by-other', k, 'UPDATE', MK, MK, 'bob', false],
    ['manager', 'jobset-bad-format', JS, 'CREATE', 'acme.io', undefined, null, false], // warned, then refused by the allow-list
    ['worker', 'job-multikueue', k, 'CREATE', MK, undefined, null, false],
    ['worker', 'job-unset', k, 'CREATE', null, undefined, null, true],
    ['worker', 'jobset-builtin', JS, 'CREATE', 'jobset.sigs.k8s.io/jobset-controller', undefined, null, true],
  ];
  for (const [name, uid, kk, op, v, old, writer, allows] of reqs) {
    const pf = path.join(work, `multikueue-${name}.json`);
    fs.writeFileSync(pf, JSON.stringify(policies[name]));
    const req = {
      uid: `${name}-${uid}`, kind: { group: kk.group, version: kk.version, kind: kk.kind },
      resource: { group: kk.group, version: kk.version, resource: kk.resource }, name: 'x',
      namespace: 'team-a', operation: op, userInfo: { username: writer || 'alice', groups: ['system:authenticated'] },
      object: object(kk, v, writer ? { active: 1 } : undefined),
      oldObject: op === 'UPDATE' ? object(kk, old, writer ? { active: 0 } : undefined) : null,
    };
    if (writer) req.subResource = 'status';
    const want = check_(['--policy-file', pf, ...offFlags], JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req }));
    const got = vapVerdict(vaps(['--policy-file', pf]), req);
    check(`multikueue ${req.uid}: CEL evaluates without error`, got.errors.length === 0, got.errors.join('; '));
    const g = { allowed: got.denied.length === 0, warned: got.warned.length > 0, audited: got.audited.length > 0 };
    check(`multikueue ${req.uid}: VAP verdict equals jobguard's (${allows ? 'allowed' : 'denied'})`,
      want && want.allowed === allows && same(g, verdictOf(want)) &&
      (allows || got.denied.some((d) => d.msg === want.status.message.replace(/^.*? is invalid: /, '').replace(/^[^:]*: (?=User )/, ''))),
      `VAP ${JSON.stringify(got)}, jobguard ${JSON.stringify(want)}`);
  }
}
fs.rmSync(work, { recursive: true, force: true });
check('property test ran requests', propertyCases >= 200, `${propertyCases}`);
console.log(`property test: ${propertyCases} random requests under random policies`);

// ---------------------------------------------------------------- the command itself
{
  const j = spawnSync(opt.jobguard, ['vap', '--output', 'json'], { encoding: 'utf8' });
  const y = spawnSync(opt.jobguard, ['vap'], { encoding: 'utf8' });
  let docs = [];
  try { docs = yaml.loadAll(y.stdout); } catch (e) { check('vap: the YAML parses', false, e.message); }
  check('vap: the YAML output is the JSON output', j.status === 0 && y.status === 0 &&
    JSON.stringify(docs) === JSON.stringify(JSON.parse(j.stdout).items));
  const names = (args) => JSON.parse(spawnSync(opt.jobguard, ['vap', '--output', 'json', ...args], { encoding: 'utf8' }).stdout).items.map((o) => o.metadata.name);
  check('vap: Job and CronJob format only below 1.32', names(['--kubernetes-version', '1.31']).includes('jobguard-jobs.batch-deny') &&
    !names(['--kubernetes-version', '1.32']).includes('jobguard-jobs.batch-deny'));
  check('vap: --name-prefix', names(['--name-prefix', 'jg']).every((n) => n.startsWith('jg-')));
  check('vap: a rule off is not emitted', !names(['--mode', '*=off']).length);
  // --explain: every rule, from the generator: what it prints matches what is emitted
  const explain = (args) => spawnSync(opt.jobguard, ['vap', '--explain', ...args], { encoding: 'utf8' });
  const md = explain(['--markdown']).stdout;
  check('vap --explain: every rule ID of `jobguard rules` is in the table', md && allRules.every((r) => md.includes(`${r} |`) || md.includes(`${r}, `)));
  const mkf = path.join(os.tmpdir(), `jobguard-vap-explain-${process.pid}.json`);
  fs.writeFileSync(mkf, JSON.stringify({ controllers: [{ name: 'acme.io/a' }], allowUnlistedControllers: false }));
  const row = (text, rule) => text.split('\n').find((l) => l.startsWith(`| ${rule} |`)) || '';
  const pmd = explain(['--markdown', '--policy-file', mkf, '--mode', 'Policy-AllowedControllers=warn']).stdout;
  check('vap --explain: the policy\'s mode is the validationActions', / \| Warn \| /.test(row(pmd, 'Policy-AllowedControllers')) &&
    names(['--policy-file', mkf, '--mode', 'Policy-AllowedControllers=warn']).includes('jobguard-jobs.batch-warn'), row(pmd, 'Policy-AllowedControllers'));
  check('vap --explain: Job format emitted below 1.32 only', / \| Job, CronJob \| Deny \| /.test(row(explain(['--markdown', '--kubernetes-version', '1.31']).stdout, 'ALWAYS-ManagedByFormat')) &&
    / \| no \(API server\) \| /.test(row(md, 'ALWAYS-ManagedByFormat, ALWAYS-ManagedByLength')));
  const txt = explain(['--policy-file', mkf]);
  check('vap --explain: plain text', txt.status === 0 && /^Policy-AllowedControllers\n  targets: Job, CronJob, /m.test(txt.stdout), txt.stdout.slice(0, 300));
  fs.rmSync(mkf, { force: true });
  for (const bad of [['--kubernetes-version', '1.29'], ['--kubernetes-version', '1.3x'], ['--output', 'xml'],
    ['--name-prefix', 'Bad_'], ['--mode', 'Nope=deny'], ['--policy-file', '/nonexistent'], ['--bogus'], ['--markdown']]) {
    const r = spawnSync(opt.jobguard, ['vap', ...bad], { encoding: 'utf8' });
    check(`vap ${bad.join(' ')}: exit 2 with a reason`, r.status === 2 && r.stdout === '' && r.stderr.startsWith('jobguard vap: '), r.stderr);
  }
}

// The field lists are the releases pinned, and the check refuses what the API server refuses.
for (const { rel, r } of releases) {
  check(`OpenAPI field list ${rel}: generated from Kubernetes ${rel}`, r.release === rel, r.release);
  const [p, b] = JSON.parse(spawnSync(opt.jobguard, ['vap', '--output', 'json'], { encoding: 'utf8' }).stdout).items;
  const bad = structuredClone(p);
  bad.spec.matchConstraints.bogus = 1;
  bad.spec.failurePolicy = 3;
  delete bad.spec.validations[0].expression;
  const e = validate(r, 'V1ValidatingAdmissionPolicy', bad);
  check(`OpenAPI ${rel}: an unknown field, a wrong type and a missing required field are refused`, e.length === 3, e.join('; '));
  const nb = structuredClone(b);
  delete nb.spec.policyName;
  check(`OpenAPI ${rel}: a binding without policyName is refused`, validate(r, 'V1ValidatingAdmissionPolicyBinding', nb).length === 1);
  check(`OpenAPI ${rel}: MutatingAdmissionPolicy v1 is no type of 1.30`, rel !== '1.30' || r.type('V1MutatingAdmissionPolicy') === null);
}
console.log(`OpenAPI: ${schemaChecked} object checks against Kubernetes ${releases.map((x) => x.rel).join(', ')}`);
console.log(`${inScope.length} in scope / ${outOfScope.length} out of scope`);
for (const o of outOfScope) console.log(`  out of scope: ${o}`);
console.log(`denial texts: ${exact} exact, inexact by documented class: ${JSON.stringify(inexact)}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

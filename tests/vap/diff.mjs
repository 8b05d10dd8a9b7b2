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
import crypto from 'node:crypto';
import yaml from 'js-yaml';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { celEnv, celMap, parse, plan, isCelError } from '@bufbuild/cel';
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
// cel-go's has() on a map is key presence: has(m.k) is true for {"k": null}, as the API server
// sees an object whose field is null (a CRD that keeps nulls). @bufbuild/cel 0.6.1 answers false
// there (its map's has() is `get(key) != undefined`), which would hide the errors the API server
// raises on that null; the harness gives its maps cel-go's rule.
{
  const NativeMap = Object.getPrototypeOf(celMap(new Map()));
  NativeMap.has = function has(key) { return this.get(key) !== undefined; };
}
const programs = new Map();
function evalCel(expr, bindings) {
  let p = programs.get(expr);
  if (!p) { p = plan(env, parse(expr)); programs.set(expr, p); }
  return p(bindings);
}
// The evaluator errs where cel-go errs (an error is a failure the binding's actions decide), and
// the checks below would see the errors of the policies' old form (tests/vap: the null shapes).
for (const [expr, bind, want] of [
  ["x.matches('^a$')", { x: null }, 'error'], ['size(bytes(x))', { x: null }, 'error'],
  ["x.indexOf('/')", { x: null }, 'error'], ['m.k', { m: {} }, 'error'], ['m.k.j', { m: { k: null } }, 'error'],
  ['has(m.k)', { m: { k: null } }, true], ['has(m.k)', { m: {} }, false], ["m.k == ''", { m: { k: null } }, false],
  ['type(x) == string', { x: null }, false], ['type(x) == map', { x: {} }, true], ['type(x) == list', { x: [] }, true],
]) {
  const r = evalCel(expr, bind);
  const got = isCelError(r) ? 'error' : r;
  check(`evaluator: ${expr} with ${JSON.stringify(bind)} is ${want} as in cel-go`, got === want, String(got));
}

const vapCache = new Map();
function vaps(vapArgs) {
  const key = vapArgs.join('\0');
  if (!vapCache.has(key)) {
    const ver = vapArgs.includes('--kubernetes-version') ? [] : ['--job-rules'];
    const r = spawnSync(opt.jobguard, ['vap', '--output', 'json', ...ver, ...vapArgs], { encoding: 'utf8', maxBuffer: 1 << 30 });
    check(`jobguard vap ${vapArgs.join(' ')}`, r.status === 0, r.stderr.trim());
    const items = r.status === 0 ? JSON.parse(r.stdout).items : [];
    // every object against the OpenAPI schema kubernetes-models carries, every CEL string parses
    for (const o of items) {
      const Model = o.kind === 'ValidatingAdmissionPolicy' ? ValidatingAdmissionPolicy : ValidatingAdmissionPolicyBinding;
      let err = '';
      try { new Model(o).validate(); } catch (e) { err = e.message; }
      check(`schema: ${o.kind} ${o.metadata.name}`, err === '' && o.metadata.name.length <= 253, err);
      // no input leads to "failed expression: ...": a one-line static message on every validation
      for (const v of o.spec.validations || [])
        check(`${o.metadata.name}: a static one-line message`, typeof v.message === 'string' && v.message !== '' && !/[\n\r]/.test(v.message) && Buffer.byteLength(v.message) <= MAX_MESSAGE, v.expression.slice(0, 100));
      for (const r of o.spec.matchConstraints?.resourceRules || [])
        check(`${o.metadata.name}: scope Namespaced`, r.scope === 'Namespaced');
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

// A namespaced rule (scope: Namespaced) never matches a request without a namespace; the
// binding's namespaceSelector is taken as matching (the harness has no Namespace objects; the
// exemptions are compared with the chart's webhooks in tests/chart).
function matches(p, req) {
  const sub = req.subResource ? `/${req.subResource}` : '';
  return p.spec.matchConstraints.resourceRules.some((r) =>
    r.apiGroups.includes(req.resource.group) && r.resources.includes(req.resource.resource + sub) &&
    r.operations.includes(req.operation) && (r.scope !== 'Namespaced' || !!req.namespace) &&
    (p.spec.matchConstraints.matchPolicy === 'Equivalent' || r.apiVersions.includes(req.resource.version)));
}

// The API server's verdict (its validating admission policy dispatcher): a false validation,
// and an evaluation error (failurePolicy Fail), act per the binding's validationActions: Deny
// refuses, Warn warns, Audit annotates. A messageExpression that errs, is over 5 KiB or holds a
// line break gives way to the static message. `errors` lists every evaluation error.
const MAX_MESSAGE = 5 * 1024;
function vapVerdict(list, req) {
  // the API server leaves out an empty namespace (a cluster-scoped object): no such key
  const request = { ...req, userInfo: { username: '', ...req.userInfo } };
  if (!request.namespace) delete request.namespace;
  const out = { denied: [], warned: [], audited: [], errors: [], fallbacks: [] };
  for (const { p, b } of list) {
    if (!matches(p, req)) continue;
    const variables = {};
    const bind = { object: req.object ?? null, oldObject: req.oldObject ?? null, request, variables };
    const act = (msg, reason) => {
      for (const a of b.spec.validationActions) {
        if (a === 'Deny') out.denied.push({ msg, reason });
        else if (a === 'Warn') out.warned.push(msg);
        else out.audited.push(msg);
      }
    };
    for (const v of p.spec.variables || []) {
      const r = evalCel(v.expression, bind);
      if (isCelError(r)) { out.errors.push(`${p.metadata.name} variable ${v.name}: ${r.message}`); variables[v.name] = r; } else variables[v.name] = r;
    }
    for (const v of p.spec.validations) {
      const r = evalCel(v.expression, bind);
      if (isCelError(r) || typeof r !== 'boolean') {
        out.errors.push(`${p.metadata.name}: ${isCelError(r) ? r.message : 'not a bool'}`);
        act(`failed expression: ${v.expression}`, v.reason);
        continue;
      }
      if (r) continue;
      let msg = v.message || `failed expression: ${v.expression}`;
      if (v.messageExpression) {
        const m = evalCel(v.messageExpression, bind);
        if (isCelError(m)) out.errors.push(`${p.metadata.name} message: ${m.message}`);
        else if (typeof m !== 'string' || Buffer.byteLength(m) > MAX_MESSAGE || /[\n\r]/.test(m) || m.trim() === '') out.fallbacks.push(`${p.metadata.name}: ${String(m).slice(0, 80)}`);
        else msg = m;
      }
      act(msg, v.reason);
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
function inexactClass(text, vapMsgs = []) {
  if (/: must be (a string|an array|an object), got /.test(text)) return 'a value of another type (static message)';
  if (vapMsgs.some((m) => /\.\.\. \[truncated \d+ characters\]$/.test(m) && text.startsWith(m.replace(/\.\.\. \[truncated \d+ characters\]$/, '')))) return 'message cut at 1,200 characters';
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
  if (!req.namespace) { outOfScope.push(`${name} (a namespaced kind without a namespace: the API server never sends it, the policies match namespaced requests only)`); continue; }
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
      const cls = inexactClass(first, v.denied.map((d) => d.msg)) || (v.denied.some((d) => d.msg.includes('[*]')) ? 'list element index' : null);
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
// ---------------------------------------------------------------- the shapes the API server can send
// For every built-in row, every field on its managedBy and nested paths (and each "[*]" element)
// set to null, a number, an object, a list, a boolean or a valid string, in a CREATE, in the new
// object of an UPDATE and in the stored one; an object without spec; under the default policy, an
// allow-list, the same in warn mode, and the example policies of docs/examples, at
// --kubernetes-version 1.30 and 1.35: the VAP verdict (denied, warned, audited) is jobguard's, with
// no evaluation error. From 1.32 the API server checks batch/v1 Job and CronJob format, length and
// immutability itself, and refuses a non-string in them before admission (a built-in type).
const checkCache = new Map();
function checkCached(args, text) {
  const key = args.join('\0') + '\0' + text;
  if (!checkCache.has(key)) checkCache.set(key, check_(args, text));
  return checkCache.get(key);
}
const NATIVE_JOB = ['ALWAYS-ManagedByFormat', 'ALWAYS-ManagedByLength', 'ALWAYS-ManagedByImmutable'].flatMap((r) => ['--mode', `${r}=off`]);
function compareShape(label, polArgs, ver, req) {
  const batch = req.resource.group === 'batch';
  const text = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req });
  const pol = polArgs.filter((a, i) => a !== '--mode' && polArgs[i - 1] !== '--mode');
  const want = checkCached([...polArgs, ...offFlags, ...byIndexUpdateFlags(pol, req), ...(batch && ver >= '1.32' ? NATIVE_JOB : [])], text);
  if (!check(`${label}: jobguard check answers`, want)) return null;
  const got = vapVerdict(vaps([...polArgs, '--kubernetes-version', ver]), req);
  check(`${label}: CEL evaluates without error`, got.errors.length === 0, got.errors.join('; '));
  check(`${label}: no message falls back`, got.fallbacks.length === 0, got.fallbacks.join('; '));
  const g = { allowed: got.denied.length === 0, warned: got.warned.length > 0, audited: got.audited.length > 0 };
  check(`${label}: VAP verdict equals jobguard's`, same(g, verdictOf(want)),
    `VAP ${JSON.stringify(g)} ${JSON.stringify([...got.denied.map((d) => d.msg), ...got.warned]).slice(0, 600)}, jobguard ${JSON.stringify(verdictOf(want))} ${(want.status?.message || '').slice(0, 300)}`);
  return { got, want };
}
function setAt(o, p, v) {
  const toks = p.split('.');
  let cur = o;
  for (let i = 0; i < toks.length; i++) {
    const list = toks[i].endsWith('[*]');
    const k = list ? toks[i].slice(0, -3) : toks[i];
    const last = i === toks.length - 1;
    if (last && !list) { cur[k] = v; return o; }
    if (list) {
      if (!Array.isArray(cur[k])) cur[k] = [{ name: 'a' }];
      if (last) { cur[k][0] = v; return o; }
      cur = cur[k][0];
    } else {
      if (typeof cur[k] !== 'object' || cur[k] === null || Array.isArray(cur[k])) cur[k] = {};
      cur = cur[k];
    }
  }
  return o;
}
function prefixes(p) {
  const out = [];
  let acc = '';
  for (const t of p.split('.')) {
    const list = t.endsWith('[*]');
    acc = acc ? `${acc}.${list ? t.slice(0, -3) : t}` : (list ? t.slice(0, -3) : t);
    out.push(acc);
    if (list) { acc += '[*]'; out.push(acc); }
  }
  return out;
}
let shapeCases = 0;
{
  const rows = JSON.parse(spawnSync(opt.jobguard, ['policy', 'show'], { encoding: 'utf8' }).stdout).targets;
  const allow = path.join(work, 'shapes-allow.json');
  fs.writeFileSync(allow, JSON.stringify({ controllers: [{ name: 'kueue.x-k8s.io/multikueue', namespaces: ['team-*'], statusWriters: { users: ['kq'] } }], allowUnlistedControllers: false }));
  const examples = path.join(path.dirname(opt.cases), '..', 'docs', 'examples');
  const GOOD = 'kueue.x-k8s.io/multikueue';
    const setups = [
    { pol: [], vers: ['1.30', '1.35'], values: [null, 5, [], GOOD] },
    { pol: ['--policy-file', allow], vers: ['1.30', '1.35'], values: [null, {}, true, GOOD], status: true },
    { pol: ['--policy-file', allow, '--mode', '*=warn'], vers: ['1.30'], values: [null, 5, GOOD], status: true },
    // status UPDATEs under a policy whose entries bind status writers: without, no policy matches
    // <resource>/status (docs/vap.md "Types")
    ...fs.readdirSync(examples).filter((f) => f.endsWith('.json')).sort().map((f) => ({ pol: ['--policy-file', path.join(examples, f)], vers: ['1.30', '1.35'], values: [null, 5, GOOD],
      status: (JSON.parse(fs.readFileSync(path.join(examples, f), 'utf8')).controllers || []).some((c) => c.statusWriters) })),
  ];
  check('shapes: the example policies are tested', setups.length >= 5, `${setups.length - 3}`);
  for (const { pol, vers, values, status } of setups) {
    for (const ver of vers) {
      for (const t of rows) {
        const paths = [...new Set([t.managedByPath, ...t.nestedPaths.map((n) => n.path)].flatMap(prefixes))];
        const base = () => ({ apiVersion: `${t.group}/${t.versions[0]}`, kind: t.kind, metadata: { name: 'x', namespace: 'team-a' }, spec: {} });
        const mk = (uid, op, object, oldObject, sub) => ({
          uid, kind: { group: t.group, version: t.versions[0], kind: t.kind },
          resource: { group: t.group, version: t.versions[0], resource: t.resource }, name: 'x', namespace: 'team-a',
          operation: op, userInfo: { username: 'bob', groups: ['system:authenticated'] }, object, oldObject, ...(sub ? { subResource: sub } : {}),
        });
        const nospec = base();
        delete nospec.spec;
        const reqs = [[`${t.kind} ${ver} ${pol.join(' ')}: CREATE without spec`, mk('nospec', 'CREATE', nospec, null)],
          [`${t.kind} ${ver} ${pol.join(' ')}: UPDATE from no spec`, mk('nospec-u', 'UPDATE', setAt(base(), t.managedByPath, GOOD), structuredClone(nospec))]];
        for (const p of paths) {
          for (const v of values) {
            // a built-in type with a non-string never reaches admission: its decoding refuses it
            if (t.group === 'batch' && v !== null && !(v === GOOD && p === t.managedByPath)) continue;
            const with_ = () => setAt(base(), p, structuredClone(v));
            const lbl = `${t.kind} ${ver} ${pol.join(' ')}: ${p}=${JSON.stringify(v)}`;
            reqs.push([`${lbl} CREATE`, mk('c', 'CREATE', with_(), null)]);
            reqs.push([`${lbl} UPDATE (new)`, mk('u', 'UPDATE', with_(), base())]);
            reqs.push([`${lbl} UPDATE (stored)`, mk('o', 'UPDATE', base(), with_())]);
            reqs.push([`${lbl} UPDATE (both)`, mk('b', 'UPDATE', with_(), with_())]);
            if (status && t.kind !== 'CronJob') reqs.push([`${lbl} status UPDATE`, mk('s', 'UPDATE', with_(), with_(), 'status')]);
          }
        }
        for (const [label, req] of reqs) { compareShape(label, pol, ver, req); shapeCases++; }
      }
    }
  }
  // A cluster-scoped kind in a policy row: the API server sends no namespace. The policies match
  // namespaced kinds only (as the chart's webhooks), and read request.namespace only when it is
  // there: evaluated anyway, no error.
  {
    const pf = path.join(work, 'cluster-row.json');
    fs.writeFileSync(pf, JSON.stringify({ controllers: [{ name: GOOD, namespaces: ['team-*'] }], allowUnlistedControllers: false,
      targets: [{ group: 'example.com', versions: ['v1'], kind: 'ClusterRun', resource: 'clusterruns', managedByPath: 'spec.managedBy', reservedValue: 'example.com/c' }] }));
    for (const v of [GOOD, 'acme.io/x', null]) {
      const req = { uid: 'cluster', kind: { group: 'example.com', version: 'v1', kind: 'ClusterRun' }, resource: { group: 'example.com', version: 'v1', resource: 'clusterruns' },
        name: 'x', operation: 'CREATE', userInfo: { username: 'bob' }, object: { spec: v === null ? {} : { managedBy: v } }, oldObject: null };
      const list = vaps(['--policy-file', pf]);
      const got = vapVerdict(list, req);
      check(`cluster-scoped row, ${JSON.stringify(v)}: not matched (scope Namespaced)`, got.denied.length === 0 && got.errors.length === 0);
      const unscoped = list.map(({ p, b }) => { const q = structuredClone(p); for (const r of q.spec.matchConstraints.resourceRules) delete r.scope; return { p: q, b }; });
      const all = vapVerdict(unscoped, req);
      check(`cluster-scoped row, ${JSON.stringify(v)}: request.namespace read only when present`, all.errors.length === 0, all.errors.join('; '));
      check(`cluster-scoped row, ${JSON.stringify(v)}: no namespace is no namespace a glob matches`, (all.denied.length === 0) === (v !== 'acme.io/x' && v !== GOOD), JSON.stringify(all.denied));
    }
  }
  // 6 KB values: the message the user reads is jobguard's, cut below 5 KiB, never the expression
  for (const mode of ['deny', 'warn']) {
    const long = `acme.io/${'x y'.repeat(2000)}`; // a path with spaces: its message quotes the 6 KB path
    const r = compareShape(`6 KB managedBy, ${mode}`, ['--mode', `*=${mode}`], '1.30', {
      uid: 'long', kind: { group: 'jobset.x-k8s.io', version: 'v1alpha2', kind: 'JobSet' }, resource: { group: 'jobset.x-k8s.io', version: 'v1alpha2', resource: 'jobsets' },
      name: 'x', namespace: 'a', operation: 'CREATE', userInfo: { username: 'bob' }, object: { spec: { managedBy: long } }, oldObject: null });
    const msgs = r ? [...r.got.denied.map((d) => d.msg), ...r.got.warned] : [];
    check(`6 KB managedBy, ${mode}: jobguard's text, cut below 5 KiB`, msgs.length > 0 && msgs.every((m) => !m.startsWith('failed expression') && Buffer.byteLength(m) <= MAX_MESSAGE) &&
      msgs.some((m) => /\.\.\. \[truncated \d+ characters\]$/.test(m)), JSON.stringify(msgs.map((m) => m.slice(0, 120))));
  }
  // a keyed list of 400 copies on UPDATE, unchanged and with one copy changed
  {
    const jobs = (v) => Array.from({ length: 400 }, (_, i) => ({ name: `r${i}`, template: { spec: { managedBy: v } } }));
    const mkjs = (list) => ({ spec: { managedBy: GOOD, replicatedJobs: list } });
    const base = { uid: 'k400', kind: { group: 'jobset.x-k8s.io', version: 'v1alpha2', kind: 'JobSet' }, resource: { group: 'jobset.x-k8s.io', version: 'v1alpha2', resource: 'jobsets' },
      name: 'x', namespace: 'a', operation: 'UPDATE', userInfo: { username: 'bob' } };
    compareShape('keyed list of 400, unchanged', [], '1.30', { ...base, object: mkjs(jobs('acme.io/x')), oldObject: mkjs(jobs('acme.io/x')) });
    const changed = jobs('acme.io/x');
    changed[399].template.spec.managedBy = 'acme.io/y';
    compareShape('keyed list of 400, the last copy changed', [], '1.30', { ...base, object: mkjs(changed), oldObject: mkjs(jobs('acme.io/x')) });
  }
}
// Size: the controller list is written once (policy-wide objects), not once per row. A policy of
// 1,024 controllers x 20 namespace globs with status writers prints objects under 1 MiB, whose
// per-row objects do not grow with it, and its allow-list decides as jobguard does; a larger table
// is refused (exit 2, naming the object) rather than printed for etcd to refuse.
{
  const ctl = (n, globs) => Array.from({ length: n }, (_, i) => ({ name: `team${String(i).padStart(4, '0')}.example.com/c`,
    namespaces: Array.from({ length: globs }, (_, k) => `team-${i}-${k}-*`), statusWriters: { users: [`system:serviceaccount:t${i}:m`] } }));
  const big = path.join(work, 'big.json');
  fs.writeFileSync(big, JSON.stringify({ controllers: ctl(1024, 20), allowUnlistedControllers: false }));
  const r = spawnSync(opt.jobguard, ['vap', '--output', 'json', '--policy-file', big], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const items = r.status === 0 ? JSON.parse(r.stdout).items : [];
  const sizes = items.map((o) => JSON.stringify(o).length);
  const small = spawnSync(opt.jobguard, ['vap', '--output', 'json'], { encoding: 'utf8' });
  const rowObjects = (l) => l.filter((o) => !/allowed-controllers|status-writers/.test(o.metadata.name));
  const own = JSON.parse(small.stdout).items;
  check('size: 1,024 controllers x 20 namespaces: every object under 1 MiB', items.length > 0 && Math.max(...sizes) <= 1 << 20, `${items.length} objects, largest ${Math.max(...sizes)}`);
  check('size: the per-row objects do not grow with the controller list', JSON.stringify(rowObjects(items).map((o) => [o.metadata.name, JSON.stringify(o.spec).length])) ===
    JSON.stringify(rowObjects(own).map((o) => [o.metadata.name, JSON.stringify(o.spec).length])));
  console.log(`size: 1,024 x 20 controllers: ${items.length} objects, ${sizes.reduce((a, b) => a + b, 0)} bytes, largest ${Math.max(...sizes)}`);
  const ns = (i, k) => `team-${i}-${k}-x`;
  for (const [label, name, n] of [['listed here', 'team0007.example.com/c', ns(7, 19)], ['listed elsewhere', 'team0007.example.com/c', ns(8, 1)], ['unlisted', 'acme.io/x', 'a']]) {
    const req = { uid: 'big', kind: { group: 'jobset.x-k8s.io', version: 'v1alpha2', kind: 'JobSet' }, resource: { group: 'jobset.x-k8s.io', version: 'v1alpha2', resource: 'jobsets' },
      name: 'x', namespace: n, operation: 'CREATE', userInfo: { username: 'bob' }, object: { spec: { managedBy: name } }, oldObject: null };
    const want = check_(['--policy-file', big, ...offFlags], JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req }));
    const got = vapVerdict(items.length ? vaps(['--policy-file', big]) : [], req);
    check(`size: 1,024 controllers, a value ${label}: jobguard's verdict and text`, want && got.errors.length === 0 && (got.denied.length === 0) === want.allowed &&
      (want.allowed || got.denied.some((d) => want.status.message.endsWith(d.msg))), `${JSON.stringify(got.denied.map((d) => d.msg.slice(0, 200)))} ${want?.status?.message?.slice(0, 200)}`);
  }
  const huge = path.join(work, 'huge.json');
  // 811 KB, within the policy file's 1 MiB: its allow-list table alone is 1.6 MB
  fs.writeFileSync(huge, JSON.stringify({ controllers: ctl(1024, 36).map(({ name, namespaces }) => ({ name, namespaces: namespaces.map((g) => g.replace(/\*$/, 'abcd-*')) })), allowUnlistedControllers: false }));
  const h = spawnSync(opt.jobguard, ['vap', '--policy-file', huge], { encoding: 'utf8', maxBuffer: 1 << 30 });
  check('size: a table over 1 MiB is refused, naming the object', spawnSync(opt.jobguard, ['policy', 'check', huge]).status === 0 && h.status === 2 && h.stdout === '' &&
    /jobguard vap: ValidatingAdmissionPolicy jobguard-allowed-controllers-deny is \d+ bytes, more than 1 MiB/.test(h.stderr), h.stderr.slice(0, 300));
}
console.log(`shapes: ${shapeCases} requests`);
check('shapes ran requests', shapeCases > 2000, `${shapeCases}`);
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
    names(['--policy-file', mkf, '--mode', 'Policy-AllowedControllers=warn']).includes('jobguard-allowed-controllers-warn'), row(pmd, 'Policy-AllowedControllers'));
  check('vap --explain: Job format emitted below 1.32 only', / \| Job, CronJob \| Deny \| /.test(row(explain(['--markdown', '--kubernetes-version', '1.31']).stdout, 'ALWAYS-ManagedByFormat')) &&
    / \| no \(API server\) \| /.test(row(md, 'ALWAYS-ManagedByFormat, ALWAYS-ManagedByLength')));
  const txt = explain(['--policy-file', mkf]);
  check('vap --explain: plain text', txt.status === 0 && /^Policy-AllowedControllers\n  targets: Job, CronJob, /m.test(txt.stdout), txt.stdout.slice(0, 300));
  fs.rmSync(mkf, { force: true });
  // --values: the policy of a Helm values file, the same objects as the policy file, and the
  // digest of the policy as the chart writes it (toJson: keys sorted, <>& escaped)
  {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobguard-vap-values-'));
    const pol = { controllers: [{ name: 'acme.io/<a>', namespaces: ['team-*'], statusWriters: { users: ['alice'] } }], allowUnlistedControllers: false, modes: { 'ALWAYS-ManagedByFormat': 'warn' } };
    fs.writeFileSync(path.join(dir, 'values.yaml'), yaml.dump({ replicaCount: 2, policy: pol }));
    fs.writeFileSync(path.join(dir, 'policy.json'), JSON.stringify(pol, null, 2));
    const run = (args) => spawnSync(opt.jobguard, ['vap', '--output', 'json', ...args], { encoding: 'utf8' });
    const a = run(['--values', path.join(dir, 'values.yaml')]);
    const b = run(['--policy-file', path.join(dir, 'policy.json')]);
    check('vap --values: the objects of the same policy file', a.status === 0 && a.stdout === b.stdout, a.stderr);
    const goJson = (v) => (Array.isArray(v) ? `[${v.map(goJson).join(',')}]` : v && typeof v === 'object'
      ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${goJson(v[k])}`).join(',')}}`
      : JSON.stringify(v).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026'));
    const want = crypto.createHash('sha256').update(goJson(pol)).digest('hex');
    const items = a.status === 0 ? JSON.parse(a.stdout).items : [];
    check('vap --values: every object carries sha256 of toJson .policy', items.length > 0 && items.every((o) => o.metadata.annotations['jobguard.io/policy-sha256'] === want), want);
    const none = run(['--values', path.join(dir, 'policy.json')]); // no .policy: the defaults
    check('vap --values without .policy: the defaults, digest of {}', none.status === 0 &&
      JSON.parse(none.stdout).items.every((o) => o.metadata.annotations['jobguard.io/policy-sha256'] === crypto.createHash('sha256').update('{}').digest('hex')), none.stderr);
    const m = run(['--values', path.join(dir, 'values.yaml'), '--mode', 'Policy-AllowedControllers=warn']);
    check('vap --mode: recorded on every object', m.status === 0 && JSON.parse(m.stdout).items.every((o) => o.metadata.annotations['jobguard.io/mode-overrides'] === 'Policy-AllowedControllers=warn'));
    const both = spawnSync(opt.jobguard, ['vap', '--values', path.join(dir, 'values.yaml'), '--policy-file', path.join(dir, 'policy.json')], { encoding: 'utf8' });
    check('vap --values and --policy-file: exit 2', both.status === 2 && /not both/.test(both.stderr), both.stderr);
    // -o yaml escapes every line break YAML would fold (NEL, U+2028, U+2029) and what YAML
    // cannot hold raw (C1 controls, DEL): the YAML reads back as the JSON, the same user names
    const odd = { controllers: [{ name: 'acme.io/a', statusWriters: { users: ['alice\u0085\u0085bob', 'a\u0085b', 'x\u2028y\u2029z', 'bom\ufeff'] } }] };
    fs.writeFileSync(path.join(dir, 'odd.json'), JSON.stringify(odd));
    const yj = run(['--policy-file', path.join(dir, 'odd.json')]);
    const yy = spawnSync(opt.jobguard, ['vap', '-o', 'yaml', '--policy-file', path.join(dir, 'odd.json')], { encoding: 'utf8' });
    let ydocs = [];
    try { ydocs = yaml.loadAll(yy.stdout).filter(Boolean); } catch (e) { check('vap -o yaml with line breaks: parses', false, e.message); }
    check('vap -o yaml: NEL, U+2028, U+2029 and C1 controls escaped, read back unchanged', yy.status === 0 && !/[\u0085\u2028\u2029\u0080-\u009f\u007f]/.test(yy.stdout) &&
      JSON.stringify(ydocs) === JSON.stringify(JSON.parse(yj.stdout).items));
    fs.rmSync(dir, { recursive: true, force: true });
  }
  for (const bad of [['--kubernetes-version', '1.29'], ['--kubernetes-version', '1.3x'], ['--output', 'xml'],
    ['--name-prefix', 'Bad_'], ['--mode', 'Nope=deny'], ['--policy-file', '/nonexistent'], ['--bogus'], ['--markdown'],
    ['--values', '/nonexistent'], ['--namespace-selector-expression', '{"key":"a","operator":"Maybe"}'], ['--namespace-selector-expression', 'nope'],
    ['--exclude-namespace', '']]) {
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

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
// quotes with escapes). Every emitted object is validated against the OpenAPI schema of
// kubernetes-models (the version tests/chart/package.json pins). Prints "N in scope / M out of scope" and "N passed, M failed".
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { celEnv, parse, plan, isCelError } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1';

const argv = process.argv.slice(2);
const opt = {};
for (let i = 0; i < argv.length; i += 2) opt[argv[i].replace(/^--/, '')] = argv[i + 1];
if (!opt.jobguard || !opt.cases) {
  console.error('usage: node diff.mjs --jobguard BIN --cases DIR');
  process.exit(2);
}

const VAP_RULES = new Set(['ALWAYS-ManagedByFormat', 'ALWAYS-ManagedByLength', 'ALWAYS-ManagedByImmutable',
  'Target-NestedManagedBy', 'Target-DelegationUnsupported', 'Policy-AllowedControllers', 'Policy-StatusWriters']);
const allRules = spawnSync(opt.jobguard, ['rules'], { encoding: 'utf8' }).stdout
  .split('\n').filter((l) => /^\S+\s+docs\/rules\.md/.test(l)).map((l) => l.split(/\s+/)[0]);
const offFlags = allRules.filter((r) => !VAP_RULES.has(r)).flatMap((r) => ['--mode', `${r}=off`]);

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
  const request = { ...req, namespace: req.namespace ?? '', userInfo: { username: '', groups: [], ...req.userInfo } };
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
  const restricted = check_([...args, ...polArgs, ...offFlags], text);
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
console.log(`${inScope.length} in scope / ${outOfScope.length} out of scope`);
for (const o of outOfScope) console.log(`  out of scope: ${o}`);
console.log(`denial texts: ${exact} exact, inexact by documented class: ${JSON.stringify(inexact)}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

// The chart sends jobguard what it can deny, and only that. Run by run.sh when the jobguard binary is
// built:
//
//   node lossless.mjs --helm PATH --chart DIR --cases DIR --mix FILE --jobguard BIN --work DIR
//
// For every review in tests/cases/*/review.json it does what the API server does with the chart's
// ValidatingWebhookConfiguration: picks the webhooks whose rules match the request's group, version,
// resource, subresource and operation, and evaluates their matchConditions (CEL, @bufbuild/cel) with
// `object`, `oldObject` (null when the review has none: CREATE, DELETE) and `request` bound. The
// configuration is `helm template` of the chart with default values, or with the case's policy
// targets when its policy.json has some (only policy.targets changes the webhooks). Then:
//
//   1. every review jobguard denies, warns about or annotates (the case's expected.json) is sent;
//      the one exception, printed with its count, is the Job status rules on a Job no external
//      controller manages: the jobs-status webhook leaves the built-in Job controller's writes
//      inside the API server by design (docs/webhooks.md);
//   2. no review whose objects have no managedBy anywhere (the row's path or a nested path of
//      `jobguard policy show`, in object or oldObject) is sent;
//   3. no matchCondition errors (an error would follow the failurePolicy, not the object).
//
// Then the write mix (writemix.json, weighted synthetic reviews of a Kueue / MultiKueue cluster):
// prints the share that reaches jobguard with the chart's matchConditions and without the managed-by
// conditions of its CREATE/UPDATE webhooks (what the chart sent before it had them), and checks with `jobguard check` that every write
// of the mix that is not sent is one jobguard allows without a warning.
//
// Prints one line per failure, a summary, and "N passed, M failed"; exit status 1 on any failure.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import yaml from 'js-yaml';
import { run } from '@bufbuild/cel';

const argv = process.argv.slice(2);
const opt = {};
for (let i = 0; i < argv.length; i += 2) opt[argv[i].replace(/^--/, '')] = argv[i + 1];
for (const k of ['helm', 'chart', 'cases', 'mix', 'jobguard', 'work']) {
  if (!opt[k]) { console.error(`usage: node lossless.mjs --helm PATH --chart DIR --cases DIR --mix FILE --jobguard BIN --work DIR (missing --${k})`); process.exit(2); }
}
fs.mkdirSync(opt.work, { recursive: true });

let passed = 0;
let failed = 0;
const check = (name, ok, detail = '') => {
  if (ok) passed++;
  else { failed++; console.log(`FAIL ${name}${detail ? `: ${detail}` : ''}`); }
  return ok;
};

// ---------------------------------------------------------------- the webhooks, per policy
const renders = new Map();
function webhooks(targets) {
  const key = targets ? crypto.createHash('sha256').update(JSON.stringify(targets)).digest('hex') : 'default';
  if (renders.has(key)) return renders.get(key);
  const args = ['template', 'jobguard', opt.chart, '--namespace', 'jobguard-system'];
  if (targets) {
    const f = path.join(opt.work, `values-${key.slice(0, 16)}.yaml`);
    fs.writeFileSync(f, yaml.dump({ policy: { targets } }));
    args.push('-f', f);
  }
  const r = spawnSync(opt.helm, args, { encoding: 'utf8', env: { ...process.env, KUBECONFIG: path.join(opt.work, 'no-cluster') } });
  let hooks = null;
  if (check(`helm template ${targets ? 'with the policy targets ' + key.slice(0, 12) : '(default values)'}`, r.status === 0, r.stderr.trim())) {
    hooks = yaml.loadAll(r.stdout).find((d) => d?.kind === 'ValidatingWebhookConfiguration')?.webhooks || [];
  }
  renders.set(key, hooks);
  return hooks;
}

// jobguard's rows (`jobguard policy show [policy]`): the paths where managedBy can be, and the
// resource of a review that names only its kind.
const shows = new Map();
function rows(policyFile) {
  const key = policyFile ? fs.readFileSync(policyFile, 'utf8') : '';
  if (!shows.has(key)) {
    const r = spawnSync(opt.jobguard, ['policy', 'show', ...(policyFile ? [policyFile] : [])], { encoding: 'utf8' });
    shows.set(key, r.status === 0 ? JSON.parse(r.stdout).targets : null);
    check(`jobguard policy show ${policyFile || ''}`, r.status === 0, r.stderr.trim());
  }
  return shows.get(key) || [];
}

// ---------------------------------------------------------------- the API server's matching
const celValue = (v) => (Array.isArray(v) ? v.map(celValue) : v && typeof v === 'object' ? new Map(Object.entries(v).map(([k, x]) => [k, celValue(x)])) : v);
// matchPolicy Equivalent: the API server converts a request for another version of the same group and
// resource to one the rule lists (the other equivalences, across groups, are not the chart's kinds).
const ruleMatches = (rule, equivalent, g, v, res, op) => (rule.apiGroups.includes(g) || rule.apiGroups.includes('*')) &&
  (equivalent || rule.apiVersions.includes(v) || rule.apiVersions.includes('*')) && (rule.resources.includes(res) || rule.resources.includes('*')) &&
  (rule.operations.includes(op) || rule.operations.includes('*'));

/**
 * {sent, matched: [webhook names], errors: [..]} for one AdmissionReview request. withoutManagedBy: as if
 * the CREATE/UPDATE webhooks had no managed-by condition (the chart before it had them).
 */
function send(hooks, req, rowList, { withoutManagedBy = false } = {}) {
  let res = req.resource;
  if (!res && req.kind) {
    const row = rowList.find((r) => r.group === req.kind.group && r.kind === req.kind.kind);
    if (row) res = { group: row.group, version: req.kind.version, resource: row.resource };
  }
  const out = { sent: false, failClosed: false, matched: [], errors: [] };
  if (!res) return out;
  const name = req.subResource ? `${res.resource}/${req.subResource}` : res.resource;
  const vars = { object: celValue(req.object ?? null), oldObject: celValue(req.oldObject ?? null),
    request: celValue(Object.fromEntries(Object.entries(req).filter(([k]) => k !== 'object' && k !== 'oldObject'))) };
  for (const w of hooks) {
    if (!(w.rules || []).some((r) => ruleMatches(r, w.matchPolicy === 'Equivalent', res.group ?? '', res.version, name, req.operation))) continue;
    out.matched.push(w.name);
    // The API server: any false condition skips the webhook; else any error follows failurePolicy.
    const got = (w.matchConditions || []).filter((m) => !withoutManagedBy || m.name !== 'managed-by').map((m) => { try { return run(m.expression, vars); } catch (e) { return e; } });
    if (got.some((g) => g === false)) continue;
    const errs = got.filter((g) => g !== true);
    if (errs.length) { out.errors.push(`${w.name}: ${errs.map(String).join('; ')}`); continue; }
    out.sent = true;
    if (w.failurePolicy === 'Fail') out.failClosed = true;
  }
  return out;
}

// ---------------------------------------------------------------- where managedBy is
function valuesAt(obj, segs) {
  if (!segs.length) return [obj];
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return obj == null ? [] : ['<wrong type>'];
  const list = segs[0].endsWith('[*]');
  const v = obj[list ? segs[0].slice(0, -3) : segs[0]];
  if (v == null) return [];
  if (!list) return valuesAt(v, segs.slice(1));
  return Array.isArray(v) ? v.flatMap((e) => valuesAt(e, segs.slice(1))) : ['<wrong type>'];
}
/** The managedBy values (and wrong types on the way) of an object at a row's path and nested paths. */
const managedBy = (obj, row) => (row ? [row.managedByPath, ...row.nestedPaths.map((n) => n.path)] : [])
  .flatMap((p) => valuesAt(obj, p.split('.'))).filter((v) => v != null);

function rowOf(req, rowList) {
  const g = req.resource?.group ?? req.kind?.group;
  return rowList.find((r) => r.group === g && (req.resource ? r.resource === req.resource.resource : r.kind === req.kind?.kind) &&
    r.versions.includes(req.resource?.version ?? req.kind?.version)) ||
    rowList.find((r) => r.group === g && (req.resource ? r.resource === req.resource.resource : r.kind === req.kind?.kind));
}

// ---------------------------------------------------------------- 1-3: every case
const outcome = (resp) => (!resp?.allowed ? 'denied' : resp.warnings?.length ? 'warned' : Object.keys(resp.auditAnnotations || {}).length ? 'annotated' : 'allowed');
const tally = { reviews: 0, denied: 0, warned: 0, annotated: 0, allowed: 0, sent: 0, withoutManagedBy: 0, exempt: 0 };
const caseDirs = fs.readdirSync(opt.cases).filter((d) => fs.existsSync(path.join(opt.cases, d, 'review.json'))).sort();
for (const d of caseDirs) {
  const dir = path.join(opt.cases, d);
  let review;
  try { review = JSON.parse(fs.readFileSync(path.join(dir, 'review.json'), 'utf8')); } catch { continue; } // bad JSON: nothing the API server sends
  const req = review?.request;
  if (!req || typeof req !== 'object') continue;
  const expected = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8'));
  const policyFile = fs.existsSync(path.join(dir, 'policy.json')) ? path.join(dir, 'policy.json') : null;
  const targets = policyFile ? JSON.parse(fs.readFileSync(policyFile, 'utf8')).targets : null;
  const hooks = webhooks(targets?.length ? targets : null);
  if (!hooks) continue;
  const rowList = rows(policyFile);
  const row = rowOf(req, rowList);
  const values = [...managedBy(req.object, row), ...managedBy(req.oldObject, row)];
  const out = send(hooks, req, rowList);
  const verdict = outcome(expected.response);
  tally.reviews++;
  tally[verdict]++;
  if (out.sent) tally.sent++;
  check(`${d}: no matchCondition errors`, !out.errors.length, out.errors.join(' | '));
  if (!values.length) {
    tally.withoutManagedBy++;
    check(`${d}: no managedBy anywhere, not sent`, !out.sent, `sent to ${out.matched.join(', ')}`);
  }
  if (verdict === 'allowed' || out.sent) continue;
  // The Job status rules on a Job the built-in controller manages: not sent by design. Not the
  // 403 of Policy-StatusWriters, which is the chart's to send.
  const external = (o) => o?.spec?.managedBy != null && o.spec.managedBy !== 'kubernetes.io/job-controller';
  if (req.resource?.group === 'batch' && req.resource?.resource === 'jobs' && req.subResource === 'status' &&
      !external(req.object) && !external(req.oldObject) && expected.response?.status?.code !== 403) {
    tally.exempt++;
    continue;
  }
  check(`${d}: jobguard ${verdict} it, so it must be sent`, false, `${req.operation} ${req.resource?.resource ?? req.kind?.kind}${req.subResource ? '/' + req.subResource : ''}: ` +
    (out.matched.length ? `webhooks ${out.matched.join(', ')} match but their matchConditions are false` : 'no webhook matches'));
}
console.log(`lossless: ${tally.reviews} reviews of tests/cases: ${tally.denied} denied, ${tally.warned} warned, ${tally.annotated} annotated, ${tally.allowed} allowed; ` +
  `${tally.sent} sent; ${tally.withoutManagedBy} without managedBy anywhere; ${tally.exempt} denials by the Job status rules on Jobs of the built-in controller (not sent by design)`);

// ---------------------------------------------------------------- the write mix
const mix = JSON.parse(fs.readFileSync(opt.mix, 'utf8')).reviews;
const defHooks = webhooks(null) || [];
const defRows = rows(null);
let total = 0;
const reached = { now: 0, before: 0, nowFail: 0, beforeFail: 0 };
for (const m of mix) {
  const req = m.review.request;
  const now = send(defHooks, req, defRows);
  const before = send(defHooks, req, defRows, { withoutManagedBy: true });
  total += m.weight;
  if (now.sent) reached.now += m.weight;
  if (before.sent) reached.before += m.weight;
  if (now.failClosed) reached.nowFail += m.weight;
  if (before.failClosed) reached.beforeFail += m.weight;
  check(`write mix ${m.name}: no matchCondition errors`, !now.errors.length, now.errors.join(' | '));
  if (now.sent) continue;
  const f = path.join(opt.work, `mix-${m.name}.json`);
  fs.writeFileSync(f, JSON.stringify(m.review));
  const r = spawnSync(opt.jobguard, ['check', f], { encoding: 'utf8' });
  let resp;
  try { resp = JSON.parse(r.stdout).response; } catch { resp = null; }
  check(`write mix ${m.name}: not sent, and jobguard allows it without a warning`, outcome(resp) === 'allowed', r.stdout.trim().slice(0, 300));
}
const pct = (x) => `${((100 * x) / total).toFixed(1)}%`;
console.log(`write mix (${opt.mix.split('/').pop()}, ${mix.length} shapes, weight ${total}): ${pct(reached.now)} reaches jobguard with the chart's matchConditions ` +
  `(${pct(reached.nowFail)} through a failurePolicy Fail webhook, which fails while jobguard is down); ` +
  `${pct(reached.before)} (${pct(reached.beforeFail)} Fail) without the managed-by conditions of its CREATE/UPDATE webhooks (the chart before them)`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

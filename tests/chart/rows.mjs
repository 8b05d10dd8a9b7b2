// Cross-check of the chart against jobguard's own target rows. Run by run.sh when the jobguard
// binary is built:
//
//   node rows.mjs SHOW.json RENDER.yaml
//
// SHOW.json is `jobguard policy show [POLICY]` (the rows in effect: built-in and the policy's),
// RENDER.yaml a `helm template` of the chart with that policy. For every row:
//  - exactly one webhook has a CREATE/UPDATE rule for its group, resource and versions, and its
//    CEL matchConditions send an object (new, or old only) with managedBy at the row's
//    managedByPath or at any of its nestedPaths (a [*] list holding the value in its second
//    element), and do not send one without it (nothing, an empty spec, labels, a null value);
//  - other than batch Job and CronJob (whose status the jobs-status webhook covers, with its own
//    values), exactly one <resource>/status UPDATE webhook for those versions, whose condition
//    sends an object whose managedBy (at the row's managedByPath) is another controller's, and not
//    one managed by the row's own.
// Prints one line per mismatch; exit status 1 if any.
import fs from 'node:fs';
import yaml from 'js-yaml';
import { run } from '@bufbuild/cel';

const [showFile, renderFile] = process.argv.slice(2);
const show = JSON.parse(fs.readFileSync(showFile, 'utf8'));
const vwc = yaml.loadAll(fs.readFileSync(renderFile, 'utf8')).find((d) => d?.kind === 'ValidatingWebhookConfiguration');
const webhooks = vwc?.webhooks || [];
const celMap = (v) => (Array.isArray(v) ? v.map(celMap) : v && typeof v === 'object' ? new Map(Object.entries(v).map(([k, x]) => [k, celMap(x)])) : v);
/** An object with value at path; a segment name[*] is a list whose second element holds the rest. */
const objAt = (path, value) => path.split('.').reduceRight((acc, seg) => (seg.endsWith('[*]')
  ? { [seg.slice(0, -3)]: [{ other: 1 }, acc] } : { [seg]: acc }), value);
/** true when every matchCondition of w is true for (object, oldObject); else false or the error. */
const sends = (w, object, oldObject = null) => {
  for (const m of w?.matchConditions || []) {
    let r;
    try { r = run(m.expression, { object: celMap(object), oldObject: celMap(oldObject) }); } catch (e) { return `error: ${e.message}`; }
    if (r !== true) return r;
  }
  return true;
};
const covers = (r, group, resource, versions) => r.apiGroups.includes(group) && r.resources.includes(resource) &&
  versions.every((v) => r.apiVersions.includes(v));

const problems = [];
if (!show.targets?.length) problems.push(`${showFile}: no targets`);
for (const row of show.targets || []) {
  const id = `${row.kind}.${row.group} (${row.source}, ${row.versions.join(', ')})`;
  const mains = webhooks.filter((w) => w.rules.some((r) => covers(r, row.group, row.resource, row.versions) &&
    ['CREATE', 'UPDATE'].every((o) => r.operations.includes(o))));
  if (mains.length !== 1) problems.push(`${id}: ${mains.length} webhooks with a CREATE/UPDATE rule for ${row.resource} in every version`);
  else {
    const [w] = mains;
    const want = (what, got) => { if (got !== true) problems.push(`${id}: ${w.name} does not send (${got}) ${what}`); };
    const wantNot = (what, got) => { if (got !== false) problems.push(`${id}: ${w.name} sends (${got}) ${what}`); };
    for (const p of [row.managedByPath, ...row.nestedPaths.map((n) => n.path)]) {
      want(`a new object with managedBy at ${p}`, sends(w, objAt(p, 'kueue.x-k8s.io/multikueue')));
      want(`an UPDATE whose old object alone has managedBy at ${p}`, sends(w, { spec: {} }, objAt(p, 'kueue.x-k8s.io/multikueue')));
      want(`a new object with an empty managedBy at ${p}`, sends(w, objAt(p, '')));
    }
    wantNot('an object without spec', sends(w, { metadata: { name: 'x' } }));
    wantNot('an UPDATE of an object with an empty spec', sends(w, { spec: {} }, { spec: {} }));
    wantNot('an UPDATE of labels only', sends(w, { metadata: { labels: { a: 'b' } }, spec: { suspend: false } }, { metadata: {}, spec: { suspend: true } }));
    wantNot(`an object whose ${row.managedByPath} is null`, sends(w, objAt(row.managedByPath, null)));
  }
  if (row.group === 'batch' && (row.kind === 'Job' || row.kind === 'CronJob')) continue;
  const sws = webhooks.filter((w) => w.rules.some((r) => r.apiGroups.includes(row.group) && r.resources.includes(`${row.resource}/status`)));
  if (sws.length !== 1) { problems.push(`${id}: ${sws.length} status webhooks for ${row.resource}/status`); continue; }
  const [sw] = sws;
  if (!sw.rules.some((r) => covers(r, row.group, `${row.resource}/status`, row.versions) && r.operations.includes('UPDATE')))
    problems.push(`${id}: ${sw.name} does not cover UPDATE of ${row.resource}/status in every version`);
  const own = sends(sw, objAt(row.managedByPath, row.reservedValue), objAt(row.managedByPath, row.reservedValue));
  const other = sends(sw, objAt(row.managedByPath, 'kueue.x-k8s.io/multikueue'), objAt(row.managedByPath, 'kueue.x-k8s.io/multikueue'));
  if (own !== false) problems.push(`${id}: ${sw.name} sends (${own}) an object whose ${row.managedByPath} is its own controller ${row.reservedValue}`);
  if (other !== true) problems.push(`${id}: ${sw.name} does not send (${other}) an object whose ${row.managedByPath} is another controller`);
}
for (const p of problems) console.log(p);
process.exit(problems.length ? 1 : 0);

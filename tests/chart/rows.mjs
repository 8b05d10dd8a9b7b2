// Cross-check of the chart against jobguard's own target rows. Run by run.sh when the jobguard
// binary is built:
//
//   node rows.mjs SHOW.json RENDER.yaml
//
// SHOW.json is `jobguard policy show [POLICY]` (the rows in effect: built-in and the policy's),
// RENDER.yaml a `helm template` of the chart with that policy. Every row other than batch Job and
// CronJob (the jobs webhooks send those) must have a CREATE/UPDATE rule on targets.jobguard.io for
// its group, resource and versions, and exactly one <resource>/status UPDATE webhook for those
// versions whose CEL matchCondition sends an object whose managedBy (at the row's managedByPath)
// is another controller's, and not one managed by the row's own. Prints one line per mismatch;
// exit status 1 if any.
import fs from 'node:fs';
import yaml from 'js-yaml';
import { run } from '@bufbuild/cel';

const [showFile, renderFile] = process.argv.slice(2);
const show = JSON.parse(fs.readFileSync(showFile, 'utf8'));
const vwc = yaml.loadAll(fs.readFileSync(renderFile, 'utf8')).find((d) => d?.kind === 'ValidatingWebhookConfiguration');
const webhooks = vwc?.webhooks || [];
const targets = webhooks.find((w) => w.name === 'targets.jobguard.io');
const celMap = (v) => (Array.isArray(v) ? v.map(celMap) : v && typeof v === 'object' ? new Map(Object.entries(v).map(([k, x]) => [k, celMap(x)])) : v);
const objAt = (path, value) => path.split('.').reduceRight((acc, seg) => ({ [seg]: acc }), value);
const sends = (expr, obj) => {
  try { return run(expr ?? 'false', { object: celMap(obj) }); } catch (e) { return e; }
};
const covers = (r, group, resource, versions) => r.apiGroups.includes(group) && r.resources.includes(resource) &&
  versions.every((v) => r.apiVersions.includes(v));

const problems = [];
if (!show.targets?.length) problems.push(`${showFile}: no targets`);
for (const row of show.targets || []) {
  if (row.group === 'batch' && (row.kind === 'Job' || row.kind === 'CronJob')) continue;
  const id = `${row.kind}.${row.group} (${row.source}, ${row.versions.join(', ')})`;
  const rule = targets?.rules?.find((r) => covers(r, row.group, row.resource, row.versions));
  if (!rule) problems.push(`${id}: no rule on targets.jobguard.io for ${row.resource} in every version`);
  else if (!['CREATE', 'UPDATE'].every((o) => rule.operations.includes(o))) problems.push(`${id}: the targets.jobguard.io rule lacks CREATE or UPDATE`);
  const sws = webhooks.filter((w) => w.rules.some((r) => r.apiGroups.includes(row.group) && r.resources.includes(`${row.resource}/status`)));
  if (sws.length !== 1) { problems.push(`${id}: ${sws.length} status webhooks for ${row.resource}/status`); continue; }
  const [sw] = sws;
  if (!sw.rules.some((r) => covers(r, row.group, `${row.resource}/status`, row.versions) && r.operations.includes('UPDATE')))
    problems.push(`${id}: ${sw.name} does not cover UPDATE of ${row.resource}/status in every version`);
  const expr = sw.matchConditions?.[0]?.expression;
  const own = sends(expr, objAt(row.managedByPath, row.reservedValue));
  const other = sends(expr, objAt(row.managedByPath, 'kueue.x-k8s.io/multikueue'));
  if (own !== false) problems.push(`${id}: ${sw.name} sends (${own}) an object whose ${row.managedByPath} is its own controller ${row.reservedValue}`);
  if (other !== true) problems.push(`${id}: ${sw.name} does not send (${other}) an object whose ${row.managedByPath} is another controller`);
}
for (const p of problems) console.log(p);
process.exit(problems.length ? 1 : 0);

// The chart's monitoring against jobguard itself. Run by run.sh with a render that enables the
// PrometheusRule and the dashboard, and what a running jobguard serves on /metrics:
//
//   node monitoring.mjs RENDER.yaml METRICS.txt OUTDIR
//
// Writes OUTDIR/rules.yaml (the PrometheusRule's groups, for `promtool check rules` and `promtool
// test rules`) and OUTDIR/dashboard-rules.yaml (every dashboard query as a recording rule, Grafana's
// variables replaced, so that promtool parses each one). Prints one line per series an alert or a
// panel reads that jobguard does not export (histograms by their _bucket/_sum/_count series; `up` is
// Prometheus' own), and per missing part; exit status 1 if any.
import fs from 'node:fs';
import yaml from 'js-yaml';

const [renderFile, metricsFile, outDir] = process.argv.slice(2);
const docs = yaml.loadAll(fs.readFileSync(renderFile, 'utf8')).filter(Boolean);
const problems = [];
const rule = docs.find((d) => d.kind === 'PrometheusRule');
const board = docs.find((d) => d.kind === 'ConfigMap' && d.data?.['jobguard.json']);
if (!rule) problems.push('no PrometheusRule in the render');
if (!board) problems.push('no dashboard ConfigMap in the render');

// Series names jobguard exports: the sample lines of /metrics.
const exported = new Set(fs.readFileSync(metricsFile, 'utf8').split('\n')
  .filter((l) => l && !l.startsWith('#')).map((l) => l.split(/[{ ]/)[0]));
if (exported.size < 10) problems.push(`${metricsFile}: only ${exported.size} series names`);
// The API server's series the API-server-side alerts read, as kube-apiserver defines them
// (docs/monitoring.md names the Kubernetes source files): webhook calls in
// staging/src/k8s.io/apiserver/pkg/admission/metrics/metrics.go, ValidatingAdmissionPolicy checks in
// staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/metrics/metrics.go.
const APISERVER = new Set(['apiserver_admission_webhook_rejection_count', 'apiserver_admission_webhook_fail_open_count',
  'apiserver_admission_webhook_request_total', 'apiserver_admission_webhook_admission_duration_seconds_bucket',
  'apiserver_validating_admission_policy_check_total']);
const known = (name) => name === 'up' || exported.has(name) || APISERVER.has(name);
const FUNCS = new Set(['sum', 'min', 'max', 'avg', 'count', 'rate', 'increase', 'irate', 'absent', 'time',
  'histogram_quantile', 'by', 'without', 'on', 'ignoring', 'or', 'and', 'unless', 'bool', 'offset', 'label_values']);
function checkSeries(where, expr) {
  // metric names: identifiers that are neither functions/keywords nor label names (before = or =~)
  const stripped = expr.replace(/\{[^}]*\}/g, '{}').replace(/\[[^\]]*\]/g, '[]').replace(/"[^"]*"/g, '""')
    .replace(/\boffset\s+\d+[smhdwy]\b/g, '');
  const names = [...stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0])
    .filter((n) => !FUNCS.has(n) && !/^\d/.test(n));
  const grouping = new Set([...expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)].flatMap((m) => m[1].split(',').map((s) => s.trim())));
  const series = names.filter((n) => !grouping.has(n) && n !== 'le');
  if (!series.length) problems.push(`${where}: reads no series: ${expr}`);
  for (const n of series) if (!known(n)) problems.push(`${where}: reads ${n}, which jobguard does not export`);
}

fs.mkdirSync(outDir, { recursive: true });
if (rule) {
  const groups = rule.spec?.groups || [];
  fs.writeFileSync(`${outDir}/rules.yaml`, yaml.dump({ groups }));
  for (const g of groups) for (const r of g.rules || []) checkSeries(`alert ${r.alert}`, String(r.expr));
}
if (board) {
  let dash = null;
  try { dash = JSON.parse(board.data['jobguard.json']); } catch (e) { problems.push(`dashboard JSON: ${e.message}`); }
  const rules = [];
  for (const p of dash?.panels || []) {
    for (const t of p.targets || []) {
      const where = `panel "${p.title}" ${t.refId}`;
      checkSeries(where, t.expr);
      const expr = t.expr.replaceAll('$__rate_interval', '5m').replaceAll('$job', '.*').replaceAll('$namespace', '.*');
      rules.push({ record: `jobguard:dashboard:panel${p.id}_${t.refId}`, expr });
    }
  }
  if (rules.length < 8) problems.push(`dashboard: only ${rules.length} queries`);
  fs.writeFileSync(`${outDir}/dashboard-rules.yaml`, yaml.dump({ groups: [{ name: 'dashboard', rules }] }));
}
for (const p of problems) console.log(p);
process.exit(problems.length ? 1 : 0);

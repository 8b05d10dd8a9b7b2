// The first-install checks of run.sh (templates/bootstrap.yaml) on the stand-in API server:
//
//   node bootstrap.mjs cluster DEFAULT.yaml READY OUT.json
//       writes the stand-in's objects: Namespace kube-system, the TLS Secret of the default render (so
//       that a render against it keeps that CA) and, when READY >= 0, the jobguard Deployment with
//       READY ready replicas
//   node bootstrap.mjs check DIR
//       reads DIR/boot-{first,none,ready}.json (`helm install --dry-run=server -o json` with no
//       Deployment ready, none at all, two ready) and DIR/rendered-vwc.json (the configuration of
//       `helm template`); prints one line per render: LABEL ignore=BOOL hook=BOOL same-but-policy=BOOL
//       final=BOOL; writes the first render's configuration as DIR/boot-cluster.json and its hook's
//       script and environment as DIR/boot.sh and DIR/boot.env (sh, one export per line)
//   node bootstrap.mjs same CLUSTER.json VWC.json
//       exit 0 when the stand-in's configuration is exactly VWC.json
import fs from 'node:fs';
import yaml from 'js-yaml';

const [cmd, ...args] = process.argv.slice(2);
const json = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));
const sq = (v) => `'${String(v).replaceAll("'", "'\\''")}'`;

if (cmd === 'cluster') {
  const [render, ready, out] = args;
  // objects of the release carry Helm's ownership metadata, or `helm install` refuses to adopt them
  const owned = (o) => ({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, 'app.kubernetes.io/managed-by': 'Helm' },
    annotations: { ...o.metadata.annotations, 'meta.helm.sh/release-name': 'jobguard', 'meta.helm.sh/release-namespace': 'default' } } });
  const secret = yaml.loadAll(fs.readFileSync(render, 'utf8')).find((d) => d?.kind === 'Secret');
  const objs = [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } }, owned(secret)];
  if (Number(ready) >= 0) {
    objs.push(owned({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'jobguard', namespace: 'default' }, status: { readyReplicas: Number(ready) } }));
  }
  fs.writeFileSync(out, JSON.stringify(objs));
} else if (cmd === 'check') {
  const [dir] = args;
  const final = json(`${dir}/rendered-vwc.json`);
  const noPolicy = (v) => JSON.stringify(v.webhooks.map((w) => ({ ...w, failurePolicy: null })));
  for (const label of ['first', 'none', 'ready']) {
    const rel = json(`${dir}/boot-${label}.json`);
    const docs = yaml.loadAll([rel.manifest, ...(rel.hooks || []).map((h) => h.manifest)].join('\n---\n')).filter(Boolean);
    const vwc = docs.find((d) => d.kind === 'ValidatingWebhookConfiguration');
    const job = docs.find((d) => d.kind === 'Job' && d.metadata.name === 'jobguard-bootstrap');
    console.log(`${label} ignore=${vwc.webhooks.every((w) => w.failurePolicy === 'Ignore')} hook=${!!job} ` +
      `same-but-policy=${noPolicy(vwc) === noPolicy(final)} final=${JSON.stringify(vwc) === JSON.stringify(final)}`);
    if (label !== 'first' || !job) continue;
    fs.writeFileSync(`${dir}/boot-cluster.json`, JSON.stringify([vwc]));
    const c = job.spec.template.spec.containers[0];
    fs.writeFileSync(`${dir}/boot.sh`, c.command.at(-1));
    fs.writeFileSync(`${dir}/boot.env`, c.env.map((e) => `export ${e.name}=${sq(e.value)}`).join('\n') + '\n');
  }
} else if (cmd === 'same') {
  const [cluster, vwc] = args;
  process.exit(JSON.stringify(json(cluster)[0]) === JSON.stringify(json(vwc)) ? 0 : 1);
} else {
  console.error('usage: node bootstrap.mjs cluster|check|same ...');
  process.exit(2);
}

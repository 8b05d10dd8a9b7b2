// A read-only stand-in for the Kubernetes API server, so that real Helm can run the chart's
// `lookup` (which `helm template` answers with nothing) and render NOTES.txt (`helm install
// --dry-run=server`) without a cluster.
//
//   node fakeapi.mjs OBJECTS.json     prints the port it listens on (127.0.0.1), then serves
//
// It answers what Helm 3 and Helm 4 ask for: /version, discovery (/api, /apis and one resource
// list per group version) for the kinds the chart renders, and GET of one object, found in the
// JSON list OBJECTS.json (re-read on every request, so the caller changes "the cluster" between
// renders by rewriting the file); everything else is 404 NotFound, and collections are empty.
// Writes: only a JSON patch (application/json-patch+json, ops test and replace) of an object, which
// is applied to OBJECTS.json (a failed test is 422 Invalid), as the chart's bootstrap hook sends; Helm's
// dry runs send none. Every request but a GET is appended to OBJECTS.json.writes ("METHOD PATH"), so
// that a caller sees whether a real `helm install` got as far as applying anything.
//
//   node fakeapi.mjs OBJECTS.json --tls CERT KEY --token TOKEN
//
// serves HTTPS with that certificate instead, and answers only requests that carry
// `Authorization: Bearer TOKEN` (401 otherwise), as the API server answers a pod's service-account
// token: run.sh points the `helm test` script at it to read the ValidatingWebhookConfiguration.
// While OBJECTS.json.forbid holds a number N > 0, the next N authorized requests get 403 (and N
// goes down), as a pod's requests do until a new RoleBinding reaches the API server's authorizer.
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';

const args = process.argv.slice(2);
const objectsFile = args[0];
const opt = {};
for (let i = 1; i < args.length; i++) {
  if (args[i] === '--tls') { opt.cert = args[++i]; opt.key = args[++i]; }
  else if (args[i] === '--token') opt.token = args[++i];
  else { console.error(`fakeapi.mjs: unknown argument ${args[i]}`); process.exit(2); }
}
// [group, version, kind, resource, namespaced]
const kinds = [
  ['', 'v1', 'Namespace', 'namespaces', false],
  ['', 'v1', 'Secret', 'secrets', true],
  ['', 'v1', 'Service', 'services', true],
  ['', 'v1', 'ServiceAccount', 'serviceaccounts', true],
  ['', 'v1', 'Pod', 'pods', true],
  ['', 'v1', 'ConfigMap', 'configmaps', true],
  ['apps', 'v1', 'Deployment', 'deployments', true],
  ['policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true],
  ['networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies', true],
  ['admissionregistration.k8s.io', 'v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false],
  ['rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false],
  ['rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false],
  ['cert-manager.io', 'v1', 'Issuer', 'issuers', true],
  ['cert-manager.io', 'v1', 'Certificate', 'certificates', true],
  ['monitoring.coreos.com', 'v1', 'ServiceMonitor', 'servicemonitors', true],
];
const groupVersions = [...new Set(kinds.filter((k) => k[0]).map((k) => `${k[0]}/${k[1]}`))];
// /api/v1[/namespaces/NS][/RESOURCE[/NAME]] or /apis/GROUP/VERSION[...]
const PATH = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))(?:\/namespaces\/([^/]+))?(?:\/([^/]+)(?:\/([^/]+))?)?$/;

function reply(res, code, body) {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
const notFound = (res, what) => reply(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `${what} not found` });

function cluster() {
  return objectsFile && fs.existsSync(objectsFile) ? JSON.parse(fs.readFileSync(objectsFile, 'utf8')) : [];
}

function serve(req, res) {
  const p = new URL(req.url, 'http://localhost').pathname;
  if (opt.token && req.headers.authorization !== `Bearer ${opt.token}`) {
    return reply(res, 401, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401, message: 'Unauthorized' });
  }
  const forbid = `${objectsFile}.forbid`;
  const n = fs.existsSync(forbid) ? Number(fs.readFileSync(forbid, 'utf8')) : 0;
  if (n > 0) {
    fs.writeFileSync(forbid, String(n - 1));
    return reply(res, 403, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'forbidden' });
  }
  if (req.method !== 'GET') fs.appendFileSync(`${objectsFile}.writes`, `${req.method} ${p}\n`);
  if (req.method === 'PATCH') return patch(req, res, p);
  if (req.method !== 'GET') return reply(res, 405, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 405, message: 'read-only' });
  if (p === '/version') return reply(res, 200, { major: '1', minor: '30', gitVersion: 'v1.30.0' });
  if (p === '/api') return reply(res, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
  if (p === '/apis') {
    return reply(res, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: groupVersions.map((gv) => {
      const [name, version] = gv.split('/');
      return { name, versions: [{ groupVersion: gv, version }], preferredVersion: { groupVersion: gv, version } };
    }) });
  }
  const m = p.match(PATH);
  if (!m) return notFound(res, p);
  const [group, version] = m[1] ? ['', 'v1'] : [m[2], m[3]];
  let [ns, resource, name] = [m[4], m[5], m[6]];
  if (ns && !resource && m[1]) [ns, resource, name] = [undefined, 'namespaces', ns]; // /api/v1/namespaces/NAME
  const gv = group ? `${group}/${version}` : version;
  const here = kinds.filter((k) => k[0] === group && k[1] === version);
  if (!ns && !resource) {
    return reply(res, 200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources: here.map((k) => ({
      name: k[3], singularName: k[2].toLowerCase(), namespaced: k[4], kind: k[2], verbs: ['get', 'list'] })) });
  }
  const k = here.find((x) => x[3] === resource);
  if (!k) return notFound(res, p);
  if (!name) return reply(res, 200, { kind: `${k[2]}List`, apiVersion: gv, metadata: { resourceVersion: '1' }, items: [] });
  const obj = cluster().find((o) => o.apiVersion === gv && o.kind === k[2] && o.metadata?.name === name &&
    (o.metadata?.namespace ?? '') === (ns ?? ''));
  return obj ? reply(res, 200, obj) : notFound(res, `${resource} "${name}"`);
}
// A JSON patch of one object: test and replace ops on /a/0/b paths.
function patch(req, res, p) {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    const m = p.match(PATH);
    const objects = cluster();
    const gv = m?.[1] ? 'v1' : `${m?.[2]}/${m?.[3]}`;
    const obj = m && objects.find((o) => o.apiVersion === gv && o.metadata?.name === m[6] && o.kind?.toLowerCase() + 's' === m[5]);
    if (!obj) return notFound(res, p);
    if (req.headers['content-type'] !== 'application/json-patch+json') return reply(res, 415, { kind: 'Status', code: 415, message: 'json-patch only' });
    let ops;
    try { ops = JSON.parse(body); } catch { return reply(res, 400, { kind: 'Status', code: 400, message: 'bad JSON' }); }
    const work = structuredClone(obj);
    for (const op of ops) {
      const keys = op.path.split('/').slice(1);
      const parent = keys.slice(0, -1).reduce((o, k) => (o == null ? o : o[k]), work);
      const last = keys.at(-1);
      if (parent == null || !(last in parent)) return reply(res, 422, { kind: 'Status', code: 422, reason: 'Invalid', message: `no ${op.path}` });
      if (op.op === 'test' && JSON.stringify(parent[last]) !== JSON.stringify(op.value)) {
        return reply(res, 422, { kind: 'Status', code: 422, reason: 'Invalid', message: `test failed at ${op.path}` });
      }
      if (op.op === 'replace') parent[last] = op.value;
      else if (op.op !== 'test') return reply(res, 422, { kind: 'Status', code: 422, message: `op ${op.op}` });
    }
    Object.assign(obj, work);
    fs.writeFileSync(objectsFile, JSON.stringify(objects));
    return reply(res, 200, obj);
  });
}
const server = opt.cert
  ? https.createServer({ cert: fs.readFileSync(opt.cert), key: fs.readFileSync(opt.key) }, serve)
  : http.createServer(serve);
server.listen(0, '127.0.0.1', () => console.log(server.address().port));

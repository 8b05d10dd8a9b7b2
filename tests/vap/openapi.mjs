// Structural validation of objects against one Kubernetes release's OpenAPI field lists, as the
// official JavaScript client generates them (tests/vap/openapi.pins): every field of the object
// is a field of its type in that release, with the JSON type the OpenAPI gives (string, number,
// boolean, array, string map, nested type), and every field the release's doc comment marks
// "Required." is present. Not checked: enum values and formats (the API server's own
// validation), which the CEL evaluation and the API server's typeChecking cover otherwise.
import fs from 'node:fs';
import path from 'node:path';

// The field lists of a directory of model files (model/v1Foo.js or models/V1Foo.js, with .d.ts).
export function loadRelease(dir) {
  const files = new Map(fs.readdirSync(dir).filter((f) => f.endsWith('.js')).map((f) => [f.replace(/\.js$/, '').toLowerCase(), f]));
  const types = new Map();
  const head = fs.readFileSync(path.join(dir, files.get('v1objectmeta')), 'utf8');
  const release = (head.match(/(?:release-|v)(1\.\d+)/) || [])[1];
  return {
    release,
    type(name) {
      if (types.has(name)) return types.get(name);
      const f = files.get(name.toLowerCase());
      if (!f) { types.set(name, null); return null; }
      const js = fs.readFileSync(path.join(dir, f), 'utf8');
      const m = js.match(/\.attributeTypeMap = (\[[\s\S]*?\]);/);
      const fields = new Map(JSON.parse(m[1]).map((a) => [a.baseName, { type: a.type, required: false }]));
      const dts = fs.readFileSync(path.join(dir, f.replace(/\.js$/, '.d.ts')), 'utf8');
      for (const [, doc, name] of dts.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*'(\w+)'\??:/g))
        if (fields.has(name) && /Required\./.test(doc)) fields.get(name).required = true;
      types.set(name, fields);
      return fields;
    },
  };
}

// The errors of `obj` as a `type` (e.g. "V1ValidatingAdmissionPolicy"), with their paths.
export function validate(rel, type, obj, at = '') {
  const errs = [];
  const arr = type.match(/^Array<(.+)>$/);
  if (arr) {
    if (!Array.isArray(obj)) return [`${at}: not an array`];
    obj.forEach((x, i) => errs.push(...validate(rel, arr[1], x, `${at}[${i}]`)));
    return errs;
  }
  if (type === 'string' || type === 'Date') return typeof obj === 'string' ? [] : [`${at}: not a string`];
  if (type === 'number') return typeof obj === 'number' ? [] : [`${at}: not a number`];
  if (type === 'boolean') return typeof obj === 'boolean' ? [] : [`${at}: not a boolean`];
  if (type === '{ [key: string]: string; }')
    return obj && typeof obj === 'object' && !Array.isArray(obj) && Object.values(obj).every((v) => typeof v === 'string') ? [] : [`${at}: not a string map`];
  const fields = rel.type(type);
  if (!fields) return [`${at}: type ${type} is not in Kubernetes ${rel.release}`];
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return [`${at}: not an object (${type})`];
  for (const [k, v] of Object.entries(obj)) {
    const f = fields.get(k);
    if (!f) errs.push(`${at}.${k}: no such field of ${type} in Kubernetes ${rel.release}`);
    else errs.push(...validate(rel, f.type, v, `${at}.${k}`));
  }
  for (const [k, f] of fields) if (f.required && !(k in obj)) errs.push(`${at}.${k}: required by Kubernetes ${rel.release}`);
  return errs;
}

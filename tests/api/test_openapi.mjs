// api/openapi.yaml: a valid OpenAPI document, lint-clean, complete in its
// error responses, and in step with the daemon's routing table.
//
// Run by ctest (label node) as `node --test` with TB_SOURCE_DIR (the repo
// root) and TB_BINARY_DIR (the build directory, which holds testbedd).
// The validators come from tests/package.json (lockfile): `npm ci --prefix tests`.
//
// - @readme/openapi-parser validates the document against the OpenAPI 3.x
//   JSON Schemas plus the rules a schema cannot say (unique operationIds,
//   path parameters declared and required, ...).
// - @redocly/openapi-core lints it with the "recommended-strict" rule set,
//   which also checks every example against its schema.
// - The routes printed by `testbedd --list-routes` ("METHOD /path" lines) must
//   be exactly the operations of the document.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const sourceDir = process.env.TB_SOURCE_DIR ?? path.resolve(here, '..', '..');
const binaryDir = process.env.TB_BINARY_DIR;
const specPath = path.join(sourceDir, 'api', 'openapi.yaml');
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

async function need(name) {
  try {
    return await import(name);
  } catch (err) {
    throw new Error(`cannot load ${name} (${err.code ?? err.message}); ` +
      `install the test dependencies with: npm ci --prefix ${path.join(sourceDir, 'tests')}`);
  }
}

const parser = await need('@readme/openapi-parser');
const redocly = await need('@redocly/openapi-core');

// The document as written (refs not resolved), parsed once.
const spec = await parser.parse(specPath);
// With every $ref resolved, for the checks that look into responses.
const deref = await parser.dereference(structuredClone(spec));

function operations(doc) {
  const ops = [];
  for (const [p, item] of Object.entries(doc.paths ?? {})) {
    for (const m of METHODS) {
      if (item[m]) ops.push({ path: p, method: m.toUpperCase(), op: item[m], item });
    }
  }
  return ops;
}

// "{name}" and "{id}" compare equal: the route's shape is the contract, the
// parameter's name is documentation.
const shape = (p) => p.replace(/\{[^}/]+\}/g, '{}');

test('api/openapi.yaml is a valid OpenAPI document', async () => {
  const result = await parser.validate(specPath);
  assert.ok(result.valid, `api/openapi.yaml is not valid OpenAPI:\n${parser.compileErrors(result)}`);
  assert.deepEqual(result.warnings, [], 'validator warnings');
  assert.match(spec.openapi, /^3\.(0\.3|1\.\d+)$/, 'OpenAPI 3.0.3 or 3.1.x');
});

// A validator that accepts everything proves nothing: feed it broken copies.
const broken = [
  ['a response without a description', (d) => { delete d.paths['/api/v1/health'].get.responses['200'].description; }],
  ['a path parameter not declared', (d) => { d.paths['/api/v1/hosts/{name}/boot'] = { get: { responses: { 200: { description: 'x' } } } }; }],
  ['a duplicate operationId', (d) => { d.paths['/api/v1/whoami'].get.operationId = 'getHealth'; }],
  ['a parameter in the body (Swagger 2, not OpenAPI 3)', (d) => { d.paths['/api/v1/audit'].get.parameters[0].in = 'body'; }],
  ['an unknown $ref', (d) => { d.paths['/api/v1/health'].get.responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Nope' }; }],
];
for (const [what, breakIt] of broken) {
  test(`the validator rejects ${what}`, async () => {
    const copy = structuredClone(spec);
    breakIt(copy);
    let result;
    try {
      result = await parser.validate(copy);
    } catch (err) {
      return; // a resolver error is a rejection too
    }
    assert.equal(result.valid, false, `validator accepted ${what}`);
  });
}

test('api/openapi.yaml passes redocly lint (recommended-strict)', async () => {
  const config = await redocly.createConfig({ extends: ['recommended-strict'] });
  const problems = await redocly.lint({ ref: specPath, config });
  const lines = problems.map((p) =>
    `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer ?? '?'}`);
  assert.deepEqual(lines, [], `redocly lint found problems:\n${lines.join('\n')}`);
});

// The linter too, on what the OpenAPI schemas let through.
const lintBroken = [
  ['a schema type that does not exist', (d) => { d.components.schemas.Role.type = 'enumeration'; }],
  ['an example that does not match its schema', (d) => { d.paths['/api/v1/health'].get.responses['200'].content['application/json'].example = { status: 'fine' }; }],
];
for (const [what, breakIt] of lintBroken) {
  test(`redocly lint rejects ${what}`, async () => {
    const copy = structuredClone(spec);
    breakIt(copy);
    const config = await redocly.createConfig({ extends: ['recommended-strict'] });
    const problems = await redocly.lintFromString({
      source: JSON.stringify(copy), absoluteRef: path.join(sourceDir, 'api', 'broken.json'), config,
    });
    assert.ok(problems.some((p) => p.severity === 'error'), `lint accepted ${what}`);
  });
}

// Which error responses each operation must document: a table, one rule a line.
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const requiredErrors = [
  // 400: a body sent where none is taken, a bad escape in the query.
  ['every operation', () => true, ['400', '405', '500', 'default']],
  // 429: after 10 failed attempts a minute from one address, also with a bearer token.
  ['authenticated operations', (o) => !isPublic(o), ['401', '403', '429']],
  ['operations with a request body', (o) => o.op.requestBody, ['413', '415']],
  // 414: a path segment over 256 bytes, refused before routing.
  ['operations on /{param} paths', (o) => /\{[^}]+\}/.test(o.path), ['404', '414']],
  ['the login', (o) => o.path === '/api/v1/session' && o.method === 'POST', ['400', '401', '429']],
];
function isPublic(o) {
  const sec = o.op.security ?? deref.security ?? [];
  return sec.length === 0 || sec.some((req) => Object.keys(req).length === 0);
}

for (const [who, applies, statuses] of requiredErrors) {
  test(`${who} document ${statuses.join(', ')}`, () => {
    const missing = [];
    for (const o of operations(deref).filter(applies)) {
      for (const s of statuses) {
        if (!o.op.responses?.[s]) missing.push(`${o.method} ${o.path}: ${s}`);
      }
    }
    assert.deepEqual(missing, [], 'error responses missing from api/openapi.yaml');
  });
}

test('every error response carries the error shape, 405 an Allow header, 429 Retry-After', () => {
  const bad = [];
  for (const o of operations(deref)) {
    for (const [status, resp] of Object.entries(o.op.responses)) {
      if (!(status === 'default' || Number(status) >= 400)) continue;
      const schema = resp.content?.['application/json']?.schema;
      const err = schema?.properties?.error;
      if (!err || !['code', 'message', 'field'].every((k) => err.required?.includes(k))) {
        bad.push(`${o.method} ${o.path} ${status}: not {"error":{"code","message","field"}}`);
      }
      if (status === '405' && !resp.headers?.Allow) bad.push(`${o.method} ${o.path} 405: no Allow header`);
      if (status === '429' && !resp.headers?.['Retry-After']) bad.push(`${o.method} ${o.path} 429: no Retry-After header`);
    }
  }
  assert.deepEqual(bad, []);
});

test('cookie-authenticated mutations need the CSRF header', () => {
  const bad = [];
  for (const o of operations(spec).filter((x) => MUTATING.has(x.method))) {
    for (const req of o.op.security ?? spec.security ?? []) {
      if ('sessionCookie' in req && !('csrfToken' in req)) bad.push(`${o.method} ${o.path}`);
    }
  }
  assert.deepEqual(bad, [], 'mutations that accept the cookie without csrfToken');
});

test('testbedd --list-routes and api/openapi.yaml list the same routes', () => {
  assert.ok(binaryDir, 'TB_BINARY_DIR is not set (ctest sets it to the build directory)');
  const exe = path.join(binaryDir, 'testbedd');
  assert.ok(existsSync(exe), `${exe} does not exist: build testbedd first`);
  const out = execFileSync(exe, ['--list-routes'], { encoding: 'utf8', timeout: 10_000 });

  const daemon = new Map();
  const malformed = [];
  for (const line of out.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const m = /^([A-Z]+)\s+(\/\S*)$/.exec(line);
    if (!m) {
      malformed.push(line);
      continue;
    }
    daemon.set(`${m[1]} ${shape(m[2])}`, `${m[1]} ${m[2]}`);
  }
  assert.deepEqual(malformed, [], 'testbedd --list-routes printed lines that are not "METHOD /path"');
  assert.ok(daemon.size > 0, 'testbedd --list-routes printed no route');

  const documented = new Map(operations(spec).map((o) => [`${o.method} ${shape(o.path)}`, `${o.method} ${o.path}`]));
  const undocumented = [...daemon.keys()].filter((k) => !documented.has(k)).map((k) => daemon.get(k));
  const unrouted = [...documented.keys()].filter((k) => !daemon.has(k)).map((k) => documented.get(k));
  assert.deepEqual(undocumented, [], 'routes of testbedd missing from api/openapi.yaml');
  assert.deepEqual(unrouted, [], 'operations in api/openapi.yaml that testbedd does not route');
});

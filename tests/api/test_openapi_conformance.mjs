// The real testbedd answers as api/openapi.yaml says.
//
// Starts $TB_BINARY_DIR/testbedd on 127.0.0.1, port 0, with a temp state dir
// and a loopback-only inventory (the reference testbed's machine names; every
// address is on 127.0.0.0/8 and every SSH port is closed, so the prober sends
// nothing off this machine).  Then runs a table of requests, each with the
// status it must get, and checks every reply against the document: the status
// is listed for that operation (the catch-all `default` does not count), the
// body validates against that response's schema (JSON Schema 2020-12, ajv),
// and the headers the document marks required are there.  A reply that is not
// JSON (CSV, plain text) must carry a media type the document lists for it.
//
// Matrices run for real: the hosts never answer (closed SSH port), so every
// run fails at once as ssh_error and the matrix ends failed; the cases poll
// it until it has ended.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, existsSync, rmSync, openSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const sourceDir = process.env.TB_SOURCE_DIR ?? path.resolve(here, '..', '..');
const binaryDir = process.env.TB_BINARY_DIR;
const specPath = path.join(sourceDir, 'api', 'openapi.yaml');

async function need(name) {
  try {
    return await import(name);
  } catch (err) {
    throw new Error(`cannot load ${name} (${err.code ?? err.message}); ` +
      `install the test dependencies with: npm ci --prefix ${path.join(sourceDir, 'tests')}`);
  }
}
const parser = await need('@readme/openapi-parser');
const { default: Ajv2020 } = await need('ajv/dist/2020.js');
const { default: addFormats } = await need('ajv-formats');

const spec = await parser.dereference(specPath);
// strict: false lets OpenAPI's own keywords (discriminator, example) through.
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const validators = new Map();

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let dir;
let daemon;
let daemonExit = null;
let base;
let logPath;
const tokens = {};   // role name -> secret

before(async () => {
  assert.ok(binaryDir, 'TB_BINARY_DIR is not set (ctest sets it to the build directory)');
  const exe = path.join(binaryDir, 'testbedd');
  assert.ok(existsSync(exe), `${exe} does not exist: build testbedd first`);
  dir = mkdtempSync(path.join(os.tmpdir(), 'tb-openapi-'));
  const closed = await freePort();
  // A real key (the prober loads it before it finds the port closed), so
  // that a host's last_error is about the network, not about the key file.
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'tb-openapi', '-f', path.join(dir, 'id_ed25519')],
    { stdio: 'ignore', timeout: 10_000 });
  writeFileSync(path.join(dir, 'bmc.pass'), 'not a password\n', { mode: 0o600 });
  writeFileSync(path.join(dir, 'inventory.yaml'), `version: 1
ssh:
  user: root
  port: ${closed}
  key_file: ${dir}/id_ed25519
  connect_timeout_s: 1
  command_timeout_s: 2
machines:
  left:
    role: host
    mac: "a8:a1:59:95:87:60"
    power:
      - {driver: ipmi, address: 127.0.0.1, port: ${closed}, user: ADMIN, password_file: ${dir}/bmc.pass, cipher_suite: 3}
      - {driver: wol, via: relay, relay: openwrt, interface: br-lan, command: etherwake}
    console: {type: tcp, address: 127.0.0.1, port: ${closed}}
    boot: {loader: grub, default: ubuntu, entries: {ubuntu: "0", freebsd: "4"}}
    os:
      ubuntu: {address: 127.0.0.1}
      freebsd: {address: 127.0.0.2, host_key: "SHA256:Q0l3tO8zq7N5D3fQkx4m1m7x0E6H1b7m2Wk5YtH3c8U"}
    links:
      lan10: {address: 10.0.10.2/24, ifname: {freebsd: mlxen0, ubuntu: enp9s0}}
    idle_poweroff_min: 60
  right:
    role: host
    console: {type: device, device: /dev/null, speed: 115200}
    os:
      ubuntu: {address: 127.0.0.3}
    links:
      lan10: {address: 10.0.10.3/24, ifname: {ubuntu: enp9s0}}
  pokeitwithastick:
    role: router
    power:
      - {driver: redfish, url: "https://127.0.0.1:${closed}", user: admin, password_file: ${dir}/bmc.pass, insecure: true}
      - {driver: command, address: "127.0.0.1:${closed}", on: [pm, -h, "{bmc}", --on, "{host}"], timeout_s: 5}
    os:
      freebsd: {address: 127.0.0.5}
  openwrt:
    role: relay
    os:
      openwrt: {address: 127.0.0.6}
`);
  const portFile = path.join(dir, 'port');
  logPath = path.join(dir, 'testbedd.log');
  const log = openSync(logPath, 'w');
  daemon = spawn(exe, ['--inventory', path.join(dir, 'inventory.yaml'), '--state-dir', path.join(dir, 'state'),
    '--listen', '127.0.0.1', '--port', '0', '--port-file', portFile, '--probe-interval', '1'],
  { stdio: ['ignore', log, log] });
  closeSync(log);
  daemon.on('exit', (code, signal) => { daemonExit = signal ?? code; });
  for (let i = 0; i < 100 && !(existsSync(portFile) && readFileSync(portFile, 'utf8').trim()); i++) {
    if (daemonExit !== null) break;
    await sleep(100);
  }
  assert.equal(daemonExit, null, `testbedd exited (${daemonExit}):\n${readFileSync(logPath, 'utf8')}`);
  assert.ok(existsSync(portFile), `testbedd wrote no port file in 10 s:\n${readFileSync(logPath, 'utf8')}`);
  base = `http://127.0.0.1:${readFileSync(portFile, 'utf8').trim()}`;
  tokens.admin = readFileSync(path.join(dir, 'state', 'admin.token'), 'utf8').trim();
});

after(async () => {
  if (daemon && daemonExit === null) {
    daemon.kill('SIGTERM');
    for (let i = 0; i < 50 && daemonExit === null; i++) await sleep(100);
    if (daemonExit === null) daemon.kill('SIGKILL');
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function request(method, urlPath, { headers = {}, body } = {}) {
  // Node sends a GET's body with neither Content-Length nor chunking: say its length.
  if (body !== undefined) headers = { ...headers, 'Content-Length': Buffer.byteLength(body) };
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${urlPath}`, { method, headers, timeout: 10_000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath}: no reply in 10 s`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

// The operation of the document that a request hits.
function operationFor(method, urlPath) {
  const p = urlPath.split('?')[0];
  for (const [tmpl, item] of Object.entries(spec.paths)) {
    const re = new RegExp(`^${tmpl.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (re.test(p)) return { tmpl, item, op: item[method.toLowerCase()] };
  }
  return null;
}

// Check one reply against the document; returns the parsed body.
function conforms(method, urlPath, res) {
  const found = operationFor(method, urlPath);
  assert.ok(found, `${urlPath} is not a path of api/openapi.yaml`);
  // A method the path lacks answers 405: check it against a sibling
  // operation's 405 response, which every operation documents.
  const op = found.op ?? Object.values(found.item).find((v) => v && v.responses);
  const where = `${method} ${urlPath} -> ${res.status}`;
  const resp = op.responses[String(res.status)];
  assert.ok(resp, `${where}: status ${res.status} is not documented for ${method} ${found.tmpl}\n${res.text}`);
  for (const [name, h] of Object.entries(resp.headers ?? {})) {
    if (h.required) assert.ok(res.headers[name.toLowerCase()] !== undefined, `${where}: no ${name} header`);
  }
  const documented = Object.keys(resp.content ?? {});
  if (documented.length === 0) {
    assert.equal(res.text, '', `${where}: documented without a body, got one`);
    return null;
  }
  const ctype = (res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  assert.ok(documented.includes(ctype), `${where}: Content-Type "${res.headers['content-type']}" is not one of ${documented.join(', ')}`);
  const media = resp.content[ctype];
  if (ctype !== 'application/json') {
    // Text (CSV, plain): the body is the string the schema describes.
    if (media.schema) {
      if (!validators.has(media.schema)) validators.set(media.schema, ajv.compile(media.schema));
      const validate = validators.get(media.schema);
      assert.ok(validate(res.text), `${where}: body does not match api/openapi.yaml:\n${ajv.errorsText(validate.errors)}`);
    }
    return res.text;
  }
  let body;
  try {
    body = JSON.parse(res.text);
  } catch {
    assert.fail(`${where}: body is not JSON: ${res.text.slice(0, 200)}`);
  }
  if (!validators.has(media.schema)) validators.set(media.schema, ajv.compile(media.schema));
  const validate = validators.get(media.schema);
  assert.ok(validate(body), `${where}: body does not match api/openapi.yaml:\n` +
    `${ajv.errorsText(validate.errors, { separator: '\n' })}\n${JSON.stringify(body, null, 1).slice(0, 2000)}`);
  return body;
}

const json = (obj) => ({ headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(obj) });
const auth = (who, extra = {}) => {
  const h = { ...(extra.headers ?? {}) };
  if (who) h.Authorization = `Bearer ${tokens[who] ?? who}`;
  return { ...extra, headers: h };
};
const FP = `SHA256:${'A'.repeat(43)}`;
const session = {};
// Ids made by earlier cases, substituted for these words in a case's path.
const ids = {};

// Matrix specs.  left and right both have link lan10; the router has none.
const SPEC = {
  name: 'conformance',
  pairs: [{ client: 'left', server: 'right' }],
  protocols: ['tcp', 'udp'],
  duration_s: 1,
  repeats: 2,
  order: 'interleaved',
  iperf: { parallel: [1, 2], udp_bitrate: '10M' },
};   // 1 pair x (tcp, udp) x parallel 1, 2 = 4 cells, x 2 repeats = 8 runs
const withSpec = (patch) => json({ ...SPEC, ...patch });
const ENDED = ['succeeded', 'failed', 'canceled', 'interrupted'];

// Requests in order (some use what earlier ones made): name, method, path,
// options (who: a role in `tokens`, or a literal token), status, then().
const cases = [
  ['health, no token', 'GET', '/api/v1/health', {}, 200],
  ['whoami', 'GET', '/api/v1/whoami', { who: 'admin' }, 200,
    (b) => assert.equal(b.token.role, 'admin')],
  ['whoami, no token', 'GET', '/api/v1/whoami', {}, 401],
  ['hosts', 'GET', '/api/v1/hosts', { who: 'admin' }, 200,
    (b) => assert.deepEqual(b.hosts.map((h) => h.name), ['left', 'right', 'pokeitwithastick', 'openwrt'])],
  ['hosts, no secret path', 'GET', '/api/v1/hosts', { who: 'admin' }, 200,
    (b) => assert.ok(!JSON.stringify(b).includes(dir), `a file path of the inventory is in the reply: ${JSON.stringify(b)}`)],
  ['one host', 'GET', '/api/v1/hosts/left', { who: 'admin' }, 200,
    (b) => assert.equal(b.host.os.freebsd.host_key, 'SHA256:Q0l3tO8zq7N5D3fQkx4m1m7x0E6H1b7m2Wk5YtH3c8U')],
  ['unknown host', 'GET', '/api/v1/hosts/lfet', { who: 'admin' }, 404],
  ['a body where none is taken', 'GET', '/api/v1/hosts', { who: 'admin', ...json({}) }, 400],
  ['wrong method', 'PUT', '/api/v1/hosts', { who: 'admin' }, 405],
  ['create a viewer token', 'POST', '/api/v1/tokens', { who: 'admin', ...json({ name: 'conf-viewer', role: 'viewer' }) }, 201,
    (b) => { tokens.viewer = b.secret; ids.VIEWER_ID = b.token.id; }],
  ['bad role', 'POST', '/api/v1/tokens', { who: 'admin', ...json({ name: 'x', role: 'root' }) }, 400,
    (b) => assert.equal(b.error.field, 'role')],
  ['unknown field', 'POST', '/api/v1/tokens', { who: 'admin', ...json({ name: 'x', role: 'viewer', colour: 'red' }) }, 400,
    (b) => assert.equal(b.error.code, 'unknown_field')],
  ['malformed JSON', 'POST', '/api/v1/tokens', { who: 'admin', headers: { 'Content-Type': 'application/json' }, body: '{"name":' }, 400,
    (b) => assert.equal(b.error.code, 'invalid_json')],
  ['not JSON', 'POST', '/api/v1/tokens', { who: 'admin', headers: { 'Content-Type': 'text/plain' }, body: 'name=x' }, 415],
  ['too large', 'POST', '/api/v1/tokens', { who: 'admin', ...json({ name: 'x'.repeat(1024 * 1024), role: 'viewer' }) }, 413],
  ['viewer reads hosts', 'GET', '/api/v1/hosts', { who: 'viewer' }, 200],
  ['viewer lists tokens', 'GET', '/api/v1/tokens', { who: 'viewer' }, 403],
  ['viewer trusts a key', 'POST', '/api/v1/hosts/left/trust', { who: 'viewer', ...json({ os: 'ubuntu', fingerprint: FP }) }, 403],
  ['trust a key not presented', 'POST', '/api/v1/hosts/left/trust', { who: 'admin', ...json({ os: 'ubuntu', fingerprint: FP }) }, 409],
  ['trust an OS the host lacks', 'POST', '/api/v1/hosts/left/trust', { who: 'admin', ...json({ os: 'windows', fingerprint: FP }) }, 404],
  ['tokens', 'GET', '/api/v1/tokens', { who: 'admin' }, 200,
    (b) => assert.ok(b.tokens.some((t) => t.name === 'conf-viewer' && !t.revoked))],
  ['log in', 'POST', '/api/v1/session', json({ token: 'ADMIN' }), 200,
    (b, res) => {
      session.csrf = b.session.csrf_token;
      session.cookie = /tb_session=[^;]+/.exec(res.headers['set-cookie']?.join(';') ?? '')?.[0];
      assert.ok(session.cookie, 'no tb_session cookie');
    }],
  ['cookie mutation without CSRF', 'POST', '/api/v1/tokens', { cookie: true, ...json({ name: 'by-cookie', role: 'viewer' }) }, 403,
    (b) => assert.equal(b.error.code, 'csrf_required')],
  ['cookie mutation with CSRF', 'POST', '/api/v1/tokens', { cookie: true, csrf: true, ...json({ name: 'by-cookie', role: 'viewer' }) }, 201],
  ['cookie read', 'GET', '/api/v1/whoami', { cookie: true }, 200, (b) => assert.equal(b.via, 'cookie')],
  ['log out', 'DELETE', '/api/v1/session', { cookie: true, csrf: true }, 204],
  ['after log out', 'GET', '/api/v1/whoami', { cookie: true }, 401],
  ['audit', 'GET', '/api/v1/audit?limit=5', { who: 'admin' }, 200, (b) => assert.ok(b.audit.length > 0 && b.audit.length <= 5)],
  ['audit filtered', 'GET', '/api/v1/audit?actor=admin&since=2000-01-01T00:00:00Z', { who: 'admin' }, 200],
  ['audit limit 0', 'GET', '/api/v1/audit?limit=0', { who: 'admin' }, 400],
  ['audit since garbage', 'GET', '/api/v1/audit?since=yesterday', { who: 'admin' }, 400],
  // notification rules (the sink is loopback without the allowance: a test
  // message is refused before connecting, nothing is sent anywhere)
  ['viewer lists notification rules', 'GET', '/api/v1/notifications', { who: 'viewer' }, 403],
  ['create a notification rule', 'POST', '/api/v1/notifications', { who: 'admin', ...json({
    name: 'conf', triggers: ['wake.failed', 'bmc.mismatch'], hosts: ['left'],
    sink: { template: 'ntfy', url: 'http://127.0.0.1:9/conf' } }) }, 201,
    (b) => { ids.RULE_ID = b.id; assert.equal(b.sink.url, 'http://127.0.0.1:9/conf'); }],
  ['a rule with an unknown trigger', 'POST', '/api/v1/notifications', { who: 'admin', ...json({
    name: 'x', triggers: ['disk.full'], sink: { url: 'https://h.example/' } }) }, 400,
    (b) => assert.equal(b.error.field, 'triggers')],
  ['notification rules', 'GET', '/api/v1/notifications', { who: 'admin' }, 200,
    (b) => assert.ok(b.rules.some((r) => r.id === ids.RULE_ID))],
  ['one notification rule', 'GET', '/api/v1/notifications/RULE_ID', { who: 'admin' }, 200],
  ['an unknown notification rule', 'GET', '/api/v1/notifications/999999', { who: 'admin' }, 404],
  ['change a notification rule', 'PUT', '/api/v1/notifications/RULE_ID', { who: 'admin', ...json({
    name: 'conf2', enabled: false, triggers: ['matrix.failed'],
    sink: { type: 'email', url: 'smtp://127.0.0.1:9', tls: 'none', from: 'tb@lab.example', to: ['ops@lab.example'] } }) }, 200,
    (b) => assert.deepEqual([b.name, b.enabled, b.sink.type], ['conf2', false, 'email'])],
  ['test a notification rule', 'POST', '/api/v1/notifications/RULE_ID/test', { who: 'admin' }, 202],
  ['a rule\'s delivery log', 'GET', '/api/v1/notifications/RULE_ID/deliveries?limit=10', { who: 'admin' }, 200,
    (b) => assert.equal(b.deliveries[0].trigger, 'test')],
  ['a delivery log, limit 0', 'GET', '/api/v1/notifications/RULE_ID/deliveries?limit=0', { who: 'admin' }, 400],
  ['every rule\'s newest deliveries', 'GET', '/api/v1/notifications/deliveries?limit=5', { who: 'admin' }, 200,
    (b) => assert.deepEqual([b.deliveries[0].rule, b.deliveries[0].trigger], [ids.RULE_ID, 'test'])],
  ['viewer reads the newest deliveries', 'GET', '/api/v1/notifications/deliveries', { who: 'viewer' }, 403],
  ['the newest deliveries, limit 201', 'GET', '/api/v1/notifications/deliveries?limit=201', { who: 'admin' }, 400],
  ['delete a notification rule', 'DELETE', '/api/v1/notifications/RULE_ID', { who: 'admin' }, 204],
  // the inventory over the API (nothing is written to the file)
  ['the inventory', 'GET', '/api/v1/inventory', { who: 'admin' }, 200,
    (b) => assert.deepEqual(b.inventory.machines.map((m) => m.name), ['left', 'right', 'pokeitwithastick', 'openwrt'])],
  ['viewer reads the inventory', 'GET', '/api/v1/inventory', { who: 'viewer' }, 403],
  ['check a broken inventory', 'POST', '/api/v1/inventory/check', { who: 'admin', ...json({
    text: 'version: 1\nmachines:\n  x:\n    role: hots\n' }) }, 200,
    (b) => { assert.equal(b.ok, false); assert.equal(b.errors[0].line, 4); assert.equal(b.errors[0].col, 11); }],
  ['check without text', 'POST', '/api/v1/inventory/check', { who: 'admin', ...json({}) }, 400],
  ['reload the inventory', 'POST', '/api/v1/inventory/reload', { who: 'admin' }, 200,
    (b) => assert.equal(b.inventory.last_reload.ok, true)],
  // reservations (of the relay: the matrices below use left and right)
  ['reserve openwrt', 'POST', '/api/v1/reservations', { who: 'admin', ...json({
    hosts: ['openwrt'], until: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z'), note: 'conf' }) }, 201,
    (b) => { ids.RESV_ID = b.reservation.id; assert.equal(b.reservation.state, 'granted'); }],
  ['viewer reserves', 'POST', '/api/v1/reservations', { who: 'viewer', ...json({ hosts: ['openwrt'], until: '2099-01-01T00:00:00Z' }) }, 403],
  ['reserve an unknown host', 'POST', '/api/v1/reservations', { who: 'admin', ...json({ hosts: ['nope'], until: '2099-01-01T00:00:00Z' }) }, 400],
  ['reservations', 'GET', '/api/v1/reservations', { who: 'viewer' }, 200,
    (b) => assert.ok(b.reservations.some((r) => r.id === ids.RESV_ID))],
  ['a reserved host', 'GET', '/api/v1/hosts/openwrt', { who: 'viewer' }, 200,
    (b) => assert.equal(b.host.reservation.owner, 'admin')],
  ['release it', 'DELETE', '/api/v1/reservations/RESV_ID', { who: 'admin' }, 204],
  ['release it again', 'DELETE', '/api/v1/reservations/RESV_ID', { who: 'admin' }, 404],
  // ---- matrices ----
  ['plan a matrix', 'POST', '/api/v1/matrices/plan', { who: 'admin', ...withSpec() }, 200,
    (b) => {
      const p = b.plan;
      assert.equal(p.runs, 8);
      assert.equal(p.cells, 4);
      assert.equal(p.plan.length, 8);
      assert.equal(p.seed, null);
      assert.deepEqual(p.plan.map((r) => r.seq), [0, 1, 2, 3, 4, 5, 6, 7]);
      // interleaved: round 0 runs every cell once, then round 1
      assert.deepEqual(p.plan.map((r) => `${r.cell}/${r.repeat}`), ['0/0', '1/0', '2/0', '3/0', '0/1', '1/1', '2/1', '3/1']);
      assert.deepEqual(p.spec.pairs, [{ client: 'left', server: 'right', link: 'lan10' }]);
      assert.ok(p.plan.every((r) => r.server_address === '10.0.10.3' && r.link === 'lan10'));
      const udp = p.plan.find((r) => r.protocol === 'udp');
      assert.equal(udp.params.bitrate, '10M');
      assert.match(udp.iperf_args, /-u -b 10M/);
      // 8 x (1 s + 0.6 s of overhead)
      assert.ok(Math.abs(p.estimated_s - 12.8) < 1e-6, `estimated_s ${p.estimated_s}`);
    }],
  ['plan shuffled: a seed is chosen and stored', 'POST', '/api/v1/matrices/plan', { who: 'admin', ...withSpec({ order: 'shuffled' }) }, 200,
    (b) => {
      assert.ok(Number.isInteger(b.plan.seed), `seed ${b.plan.seed}`);
      assert.equal(b.plan.spec.seed, b.plan.seed);
    }],
  ['plan with nulls: the defaults', 'POST', '/api/v1/matrices/plan',
    { who: 'admin', ...json({ name: 'nulls', pairs: [{ client: 'right', server: 'left', link: null }], protocols: null, order: null, caps: { total_s: null }, iperf: { parallel: null, tos: null } }) }, 200,
    (b) => {
      assert.equal(b.plan.runs, 1);
      assert.deepEqual(b.plan.spec.protocols, ['tcp']);
      assert.equal(b.plan.spec.order, 'sequential');
      assert.equal(b.plan.plan[0].server_address, '10.0.10.2');
      assert.equal(b.plan.plan[0].params.parallel, 1);
    }],
  ['plan over its time cap', 'POST', '/api/v1/matrices/plan', { who: 'admin', ...withSpec({ caps: { total_s: 10 } }) }, 400,
    (b) => assert.equal(b.error.field, 'caps.total_s')],
  ['viewer plans a matrix', 'POST', '/api/v1/matrices/plan', { who: 'viewer', ...withSpec() }, 200],
  ['plan with tunables: the sets, their changes and restore', 'POST', '/api/v1/matrices/plan', { who: 'admin', ...withSpec({
    tunables: [{ linux: 'net.ipv4.tcp_congestion_control', freebsd: 'net.inet.tcp.cc.algorithm', values: ['cubic', { linux: 'reno', freebsd: 'newreno' }] },
      { mtu: true, values: [1500, 9000] }] }) }, 200,
    (b) => {
      assert.equal(b.plan.tunables.sets.length, 4);
      assert.equal(b.plan.plan[0].tunable_set, 0);
      assert.equal(b.plan.tunables.sets[3].values[0].value.freebsd, 'newreno');
      assert.equal(b.plan.spec.tunables.length, 2);
    }],
  ['plan with a bad tunable', 'POST', '/api/v1/matrices/plan', { who: 'admin', ...withSpec({
    tunables: [{ linux: 'net.core.rmem_max', values: [1] }, { linux: 'a.b', freebsd: 'no;pe', values: [1] }] }) }, 400,
    (b) => assert.equal(b.error.field, 'tunables[1].freebsd')],
  ['the tunables journal', 'GET', '/api/v1/tunables', { who: 'viewer' }, 200, (b) => assert.equal(b.open, 0)],
  ['the whole tunables journal', 'GET', '/api/v1/tunables?all=1', { who: 'viewer' }, 200],
  ['the tunables journal, all=2', 'GET', '/api/v1/tunables?all=2', { who: 'viewer' }, 400],
  ['plan with an unknown field', 'POST', '/api/v1/matrices/plan', { who: 'admin', ...withSpec({ colour: 'red' }) }, 400,
    (b) => { assert.equal(b.error.code, 'unknown_field'); assert.equal(b.error.field, 'colour'); }],
  ['plan with an unknown iperf field', 'POST', '/api/v1/matrices/plan', { who: 'admin', ...withSpec({ iperf: { paralel: 2 } }) }, 400,
    (b) => { assert.equal(b.error.code, 'unknown_field'); assert.equal(b.error.field, 'iperf.paralel'); }],
  ['plan with a bad value in a sweep', 'POST', '/api/v1/matrices/plan', { who: 'admin', ...withSpec({ iperf: { parallel: [1, 0] } }) }, 400,
    (b) => { assert.equal(b.error.code, 'invalid_field'); assert.equal(b.error.field, 'iperf.parallel[1]'); }],
  ['plan with a bad protocol', 'POST', '/api/v1/matrices/plan', { who: 'admin', ...withSpec({ protocols: ['sctp'] }) }, 400,
    (b) => assert.equal(b.error.field, 'protocols[0]')],
  ['plan with an unknown machine', 'POST', '/api/v1/matrices/plan', { who: 'admin', ...withSpec({ pairs: [{ client: 'left', server: 'rihgt' }] }) }, 400,
    (b) => { assert.equal(b.error.code, 'invalid_field'); assert.equal(b.error.field, 'pairs[0].server'); }],
  ['plan with a server without links', 'POST', '/api/v1/matrices/plan', { who: 'admin', ...withSpec({ pairs: [{ client: 'left', server: 'pokeitwithastick' }] }) }, 400,
    (b) => assert.equal(b.error.field, 'pairs[0].server')],
  ['plan without a name', 'POST', '/api/v1/matrices/plan', { who: 'admin', ...json({ pairs: SPEC.pairs }) }, 400,
    (b) => assert.equal(b.error.field, 'name')],
  ['plan of a spec that is not an object', 'POST', '/api/v1/matrices/plan', { who: 'admin', ...json([SPEC]) }, 400],
  ['viewer starts a matrix', 'POST', '/api/v1/matrices', { who: 'viewer', ...withSpec() }, 403,
    (b) => assert.equal(b.error.code, 'forbidden')],
  ['start a bad matrix', 'POST', '/api/v1/matrices', { who: 'admin', ...withSpec({ repeats: 0 }) }, 400,
    (b) => assert.equal(b.error.field, 'repeats')],
  ['start a matrix', 'POST', '/api/v1/matrices', { who: 'admin', ...withSpec() }, 201,
    (b) => {
      ids.MATRIX_ID = b.matrix.id;
      assert.equal(b.matrix.actor, 'admin');
      assert.equal(b.matrix.progress.total, 8);
      assert.equal(b.matrix.rerun_of, null);
      assert.equal(b.matrix.runs, undefined, 'the 201 has no runs');
    }],
  ['the matrix fails: its hosts never answer', 'GET', '/api/v1/matrices/MATRIX_ID?runs=0', { who: 'admin', until: (b) => ENDED.includes(b.matrix.state) }, 200,
    (b) => {
      const m = b.matrix;
      assert.equal(m.state, 'failed');
      assert.equal(m.error.code, 'runs_failed');
      assert.deepEqual([m.progress.done, m.progress.failed, m.progress.pending, m.progress.running], [8, 8, 0, 0]);
      assert.equal(m.progress.current_seq, null);
      assert.ok(m.started_at && m.finished_at);
      assert.equal(m.runs, undefined);
    }],
  ['matrices', 'GET', '/api/v1/matrices?limit=5', { who: 'viewer' }, 200,
    (b) => {
      assert.ok(b.matrices.some((m) => m.id === ids.MATRIX_ID));
      assert.ok(b.matrices.every((m) => m.runs === undefined));
    }],
  ['matrices, limit 0', 'GET', '/api/v1/matrices?limit=0', { who: 'admin' }, 400],
  ['matrices by name, state and time, paged', 'GET', '/api/v1/matrices?name=a&state=failed&since=2000-01-01T00:00:00Z&offset=0&limit=5',
    { who: 'viewer' }, 200, (b) => assert.equal(typeof b.total, 'number')],
  ['matrices, bad state', 'GET', '/api/v1/matrices?state=done', { who: 'viewer' }, 400],
  ['a cell\'s history', 'GET', '/api/v1/matrices/MATRIX_ID/cells/0/history', { who: 'viewer' }, 200,
    (b) => assert.ok(b.history.points.some((p) => p.matrix === ids.MATRIX_ID))],
  ['a cell\'s history, bad metric', 'GET', '/api/v1/matrices/MATRIX_ID/cells/0/history?metric=x', { who: 'viewer' }, 400],
  ['a matrix with its runs', 'GET', '/api/v1/matrices/MATRIX_ID', { who: 'viewer' }, 200,
    (b) => {
      const runs = b.matrix.runs;
      assert.equal(runs.length, 8);
      assert.deepEqual(runs.map((r) => r.seq), [0, 1, 2, 3, 4, 5, 6, 7]);
      assert.ok(runs.every((r) => r.state === 'failed' && r.error_class === 'ssh_error' && r.error_message), JSON.stringify(runs[0]));
      ids.RUN_ID = runs[0].id;
    }],
  ['a matrix, runs=2', 'GET', '/api/v1/matrices/MATRIX_ID?runs=2', { who: 'admin' }, 400,
    (b) => assert.equal(b.error.field, 'runs')],
  ['results', 'GET', '/api/v1/matrices/MATRIX_ID/results', { who: 'viewer' }, 200,
    (b) => {
      assert.equal(b.matrix, ids.MATRIX_ID);
      assert.equal(b.state, 'failed');
      assert.equal(b.runs.length, 8);
      assert.equal(b.cells.length, 4);
      assert.ok(b.cells.every((c) => c.runs === 2 && c.failed === 2 && c.n === 0 && c.sender_bps === null), JSON.stringify(b.cells[0]));
    }],
  ['results as CSV, a row per run', 'GET', '/api/v1/matrices/MATRIX_ID/results?format=csv', { who: 'viewer' }, 200,
    (b, res) => {
      assert.match(res.headers['content-type'], /^text\/csv; charset=utf-8/);
      const lines = b.split('\r\n').filter(Boolean);
      assert.match(lines[0], /^id,seq,cell,repeat,client,/);
      assert.equal(lines.length, 1 + 8);
    }],
  ['results as CSV, a row per cell', 'GET', '/api/v1/matrices/MATRIX_ID/results?format=csv&view=cells', { who: 'viewer' }, 200,
    (b) => {
      const lines = b.split('\r\n').filter(Boolean);
      assert.match(lines[0], /^cell,client,/);
      assert.equal(lines.length, 1 + 4);
    }],
  ['results, format xml', 'GET', '/api/v1/matrices/MATRIX_ID/results?format=xml', { who: 'admin' }, 400,
    (b) => assert.equal(b.error.field, 'format')],
  ['results, view rows', 'GET', '/api/v1/matrices/MATRIX_ID/results?format=csv&view=rows', { who: 'admin' }, 400,
    (b) => assert.equal(b.error.field, 'view')],
  ['a run', 'GET', '/api/v1/runs/RUN_ID', { who: 'viewer' }, 200,
    (b) => {
      assert.equal(b.run.id, ids.RUN_ID);
      assert.equal(b.run.matrix, ids.MATRIX_ID);
      assert.equal(b.run.error_class, 'ssh_error');
      assert.equal(b.run.summary, null);
      assert.deepEqual(b.run.intervals, { client: [], server: [] });
    }],
  // The run failed before iperf3 started: no output was stored.
  ['raw output never stored', 'GET', '/api/v1/runs/RUN_ID/raw', { who: 'viewer' }, 404,
    (b) => assert.equal(b.error.field, 'side')],
  ['raw server stderr never stored', 'GET', '/api/v1/runs/RUN_ID/raw?side=server&stream=stderr', { who: 'viewer' }, 404],
  ['raw, side middle', 'GET', '/api/v1/runs/RUN_ID/raw?side=middle', { who: 'viewer' }, 400,
    (b) => assert.equal(b.error.field, 'side')],
  ['raw, stream stdin', 'GET', '/api/v1/runs/RUN_ID/raw?stream=stdin', { who: 'viewer' }, 400,
    (b) => assert.equal(b.error.field, 'stream')],
  ['viewer cancels a matrix', 'POST', '/api/v1/matrices/MATRIX_ID/cancel', { who: 'viewer' }, 403],
  ['cancel an ended matrix', 'POST', '/api/v1/matrices/MATRIX_ID/cancel', { who: 'admin' }, 409,
    (b) => assert.equal(b.error.code, 'conflict')],
  ['resume a failed matrix', 'POST', '/api/v1/matrices/MATRIX_ID/resume', { who: 'admin' }, 409,
    (b) => assert.equal(b.error.code, 'conflict')],
  ['cancel with a body', 'POST', '/api/v1/matrices/MATRIX_ID/cancel', { who: 'admin', ...json({}) }, 400],
  ['rerun', 'POST', '/api/v1/matrices/MATRIX_ID/rerun', { who: 'admin' }, 201,
    (b) => {
      ids.RERUN_ID = b.matrix.id;
      assert.notEqual(b.matrix.id, ids.MATRIX_ID);
      assert.equal(b.matrix.rerun_of, ids.MATRIX_ID);
      assert.equal(b.matrix.progress.total, 8);
    }],
  ['the rerun fails too', 'GET', '/api/v1/matrices/RERUN_ID', { who: 'admin', until: (b) => ENDED.includes(b.matrix.state) }, 200,
    (b) => {
      assert.equal(b.matrix.state, 'failed');
      assert.ok(b.matrix.runs.every((r) => r.id > ids.RUN_ID + 7), 'a rerun has runs of its own');
    }],
  // Both failed every run: nothing to compare, so the gate does not pass.
  ['compare the rerun with its original', 'GET', '/api/v1/matrices/RERUN_ID/compare?baseline=MATRIX_ID&max_drop=10', { who: 'viewer' }, 200,
    (b) => {
      const c = b.compare;
      assert.equal(c.matrix, ids.RERUN_ID);
      assert.equal(c.baseline, ids.MATRIX_ID);
      assert.equal(c.metric, 'receiver_bps');
      assert.equal(c.max_drop_pct, 10);
      assert.equal(c.cells.length, 4);
      assert.ok(c.cells.every((r) => r.verdict === 'no_baseline' && r.cell === r.baseline_cell && r.link), JSON.stringify(c.cells[0]));
      assert.equal(c.compared, 0);
      assert.equal(c.pass, false);
    }],
  ['compare without a baseline', 'GET', '/api/v1/matrices/RERUN_ID/compare', { who: 'viewer' }, 400,
    (b) => assert.equal(b.error.field, 'baseline')],
  ['compare, baseline abc', 'GET', '/api/v1/matrices/RERUN_ID/compare?baseline=abc', { who: 'viewer' }, 400,
    (b) => assert.equal(b.error.field, 'baseline')],
  ['compare, an unknown baseline', 'GET', '/api/v1/matrices/RERUN_ID/compare?baseline=999999', { who: 'viewer' }, 404,
    (b) => assert.equal(b.error.field, 'baseline')],
  ['compare an unknown matrix', 'GET', '/api/v1/matrices/999999/compare?baseline=MATRIX_ID', { who: 'viewer' }, 404,
    (b) => assert.equal(b.error.field, 'id')],
  ['compare, max_drop 101', 'GET', '/api/v1/matrices/RERUN_ID/compare?baseline=MATRIX_ID&max_drop=101', { who: 'viewer' }, 400,
    (b) => assert.equal(b.error.field, 'max_drop')],
  ['compare, metric cpu', 'GET', '/api/v1/matrices/RERUN_ID/compare?baseline=MATRIX_ID&metric=cpu', { who: 'viewer' }, 400,
    (b) => assert.equal(b.error.field, 'metric')],
  ['compare, metric jitter (higher is worse)', 'GET', '/api/v1/matrices/RERUN_ID/compare?baseline=MATRIX_ID&metric=jitter_ms', { who: 'viewer' }, 200,
    (b) => {
      assert.equal(b.compare.metric, 'jitter_ms');
      assert.equal(b.compare.higher_is_worse, true);
      assert.ok(b.compare.cells.every((r) => r.overlap === null && 'baseline_q1' in r), JSON.stringify(b.compare.cells[0]));
    }],
  ['compare as CSV', 'GET', '/api/v1/matrices/RERUN_ID/compare?baseline=MATRIX_ID&format=csv', { who: 'viewer' }, 200,
    (b) => assert.match(b, /^cell,baseline_cell,client,/)],
  ['hosts diff as CSV', 'GET', '/api/v1/matrices/RERUN_ID/hosts/diff?other=MATRIX_ID&format=csv', { who: 'viewer' }, 200,
    (b) => assert.match(b, /^host,os,in,path,matrix,other\r\n/)],
  ['report as HTML', 'GET', '/api/v1/matrices/RERUN_ID/report?baseline=MATRIX_ID', { who: 'viewer' }, 200,
    (b, res) => {
      assert.match(res.headers['content-security-policy'], /^sandbox; default-src 'none'/);
      assert.match(res.headers['content-disposition'], /^attachment; filename="matrix-\d+-vs-\d+-report\.html"$/);
      assert.ok(!b.includes('<script'));
    }],
  ['report as Markdown', 'GET', '/api/v1/matrices/RERUN_ID/report?format=md', { who: 'viewer' }, 200],
  ['report, format pdf', 'GET', '/api/v1/matrices/RERUN_ID/report?format=pdf', { who: 'viewer' }, 400,
    (b) => assert.equal(b.error.field, 'format')],
  ['compare by POST', 'POST', '/api/v1/matrices/RERUN_ID/compare?baseline=MATRIX_ID', { who: 'admin' }, 405],
  ['matrix creation is audited', 'GET', '/api/v1/audit?limit=50', { who: 'admin' }, 200,
    (b) => assert.ok(b.audit.some((e) => e.action === 'matrix.create' && e.status === 201 && e.target === `matrix ${ids.MATRIX_ID}`),
      JSON.stringify(b.audit.filter((e) => e.action.startsWith('matrix.'))))],
  ['unknown matrix', 'GET', '/api/v1/matrices/999999', { who: 'admin' }, 404],
  ['results of an unknown matrix', 'GET', '/api/v1/matrices/999999/results', { who: 'admin' }, 404],
  ['cancel an unknown matrix', 'POST', '/api/v1/matrices/999999/cancel', { who: 'admin' }, 404],
  ['resume an unknown matrix', 'POST', '/api/v1/matrices/999999/resume', { who: 'admin' }, 404],
  ['rerun an unknown matrix', 'POST', '/api/v1/matrices/999999/rerun', { who: 'admin' }, 404],
  ['unknown run', 'GET', '/api/v1/runs/999999', { who: 'admin' }, 404],
  ['raw output of an unknown run', 'GET', '/api/v1/runs/999999/raw', { who: 'admin' }, 404,
    (b) => assert.equal(b.error.field, 'id')],
  ['matrix id not a number', 'GET', '/api/v1/matrices/abc', { who: 'admin' }, 400,
    (b) => assert.equal(b.error.field, 'id')],
  ['matrix id 0', 'GET', '/api/v1/matrices/0', { who: 'admin' }, 400],
  ['results of matrix abc', 'GET', '/api/v1/matrices/abc/results', { who: 'admin' }, 400],
  ['cancel matrix abc', 'POST', '/api/v1/matrices/abc/cancel', { who: 'admin' }, 400],
  ['resume matrix -1', 'POST', '/api/v1/matrices/-1/resume', { who: 'admin' }, 400],
  ['rerun matrix 1.5', 'POST', '/api/v1/matrices/1.5/rerun', { who: 'admin' }, 400],
  ['run id not a number', 'GET', '/api/v1/runs/abc', { who: 'admin' }, 400,
    (b) => assert.equal(b.error.field, 'id')],
  ['raw of run abc', 'GET', '/api/v1/runs/abc/raw', { who: 'admin' }, 400],
  ['wrong method on a matrix', 'DELETE', '/api/v1/matrices/MATRIX_ID', { who: 'admin' }, 405],
  ['wrong method on the plan', 'PUT', '/api/v1/matrices/plan', { who: 'admin' }, 405],
  ['GET the plan', 'GET', '/api/v1/matrices/plan', { who: 'admin' }, 405],
  ['revoke unknown', 'DELETE', '/api/v1/tokens/999999', { who: 'admin' }, 404],
  ['revoke non-number', 'DELETE', '/api/v1/tokens/abc', { who: 'admin' }, 400],
  ['revoke the viewer', 'DELETE', '/api/v1/tokens/VIEWER_ID', { who: 'admin' }, 204],
  ['revoked token', 'GET', '/api/v1/hosts', { who: 'viewer' }, 401],
  // Last: it locks this address out of logging in for a minute.
  ['failed logins are rate limited', 'LOGIN_FLOOD', '/api/v1/session', {}, 429],
];

for (const [name, method, rawPath, opts, status, then] of cases) {
  test(`${name}: ${method} ${rawPath} -> ${status}`, async () => {
    const urlPath = rawPath.replace(/\b[A-Z]+_ID\b/g, (k) => {
      assert.ok(ids[k] !== undefined, `${k}: the case that makes it did not pass`);
      return String(ids[k]);
    });
    if (method === 'LOGIN_FLOOD') {
      let res;
      for (let i = 0; i < 30; i++) {
        res = await request('POST', urlPath, json({ token: 'tbk_wrong' }));
        conforms('POST', urlPath, res);
        if (res.status === 429) break;
        assert.equal(res.status, 401);
      }
      assert.equal(res.status, status, 'no 429 after 30 failed logins');
      return;
    }
    const o = auth(opts.who, opts);
    if (opts.body !== undefined) o.body = opts.body.replace('"ADMIN"', JSON.stringify(tokens.admin));
    if (opts.cookie) o.headers.Cookie = session.cookie;
    if (opts.csrf) o.headers['X-CSRF-Token'] = session.csrf;
    let res = await request(method, urlPath, o);
    let body = conforms(method, urlPath, res);
    // until: ask again (every reply checked) until it holds, for at most 20 s.
    for (const deadline = Date.now() + 20_000; opts.until && res.status === status && !opts.until(body);) {
      assert.ok(Date.now() < deadline, `${method} ${urlPath}: still not there after 20 s: ${res.text.slice(0, 1000)}`);
      await sleep(100);
      res = await request(method, urlPath, o);
      body = conforms(method, urlPath, res);
    }
    assert.equal(res.status, status, `${method} ${urlPath}: ${res.text}`);
    if (then) then(body, res);
  });
}

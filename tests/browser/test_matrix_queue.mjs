// The matrix queue on the matrices page (matrices.mjs) in Debian's Chromium
// against the real testbedd (loopback inventory, nothing answers ssh): a power
// action on left (a command driver running /bin/sleep: it holds left while it
// runs and then waits for an OS that never answers) makes two matrices on left
// wait; their rows say "#1 in the queue · waiting for left: action N ..." and
// "#2 in the queue · waiting for left: matrix M (...), queued before it".
// Canceling the first moves the second up to "#1", and canceling the action
// lets it start: both rows change live, from the matrix.state events, without
// a reload.  Screenshots (desktop and phone) to $TB_BINARY_DIR/screenshots/matrix-queue-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  Bed, deadInventory, eventually, freePort, login, shoot,
} from './lib/testbed.mjs';

const bed = new Bed('matrix-queue');
let tbd;
let page;

const call = (method, urlPath, body) => tbd.call(method, urlPath, body);

before(async () => {
  const closed = await freePort();
  tbd = await bed.startTestbedd(deadInventory(bed.root, `  left:
    role: host
    boot_timeout_s: 60
    power:
      - {driver: command, on: [/bin/sleep, "2"], off: [/bin/true]}
    os:
      ubuntu: {address: 127.0.0.1, port: ${closed}}
    links:
      lan10: {address: 198.19.10.2/24, ifname: {ubuntu: data0}}
  right:
    role: host
    os:
      ubuntu: {address: 127.0.0.3, port: ${closed}}
    links:
      lan10: {address: 198.19.10.3/24, ifname: {ubuntu: data0}}
`));
  page = await bed.openPage();
});

after(() => bed.close());

test('queued matrices show their place and reason, kept current live', async () => {
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
  await page.goto(`${tbd.base}/#/matrices`);
  await page.locator('h1', { hasText: 'Matrices' }).waitFor();

  const power = await call('POST', '/api/v1/hosts/left/power', { action: 'on' });
  assert.equal(power.status, 202, JSON.stringify(power.json));
  const action = power.json.action.id;

  const spec = (name) => ({ name, pairs: [{ client: 'left', server: 'right' }], duration_s: 1, repeats: 1 });
  const a = await call('POST', '/api/v1/matrices', spec('queue-a'));
  const b = await call('POST', '/api/v1/matrices', spec('queue-b'));
  assert.equal(a.status, 201, JSON.stringify(a.json));
  assert.equal(b.status, 201, JSON.stringify(b.json));
  const ida = a.json.matrix.id;
  const idb = b.json.matrix.id;

  const rowOf = (id) => page.locator('tr', { has: page.locator(`a[href="#/matrices/${id}"]`) });
  const queueOf = (id) => rowOf(id).locator('.mx-queue');
  await eventually(async () => /^#1 in the queue · waiting for left: action \d+/.test(await queueOf(ida).textContent().catch(() => '')),
    15_000, `matrix ${ida} does not say it is first, waiting for the action on left`);
  assert.match(await queueOf(ida).textContent(), new RegExp(`action ${action}\\b`));
  await eventually(async () => (await queueOf(idb).textContent().catch(() => ''))
    .startsWith(`#2 in the queue · waiting for left: matrix ${ida} (queue-a), queued before it`),
  15_000, `matrix ${idb} does not say it is second, behind ${ida}`);
  await shoot(page, 'matrix-queue');

  // the first one leaves the queue: the second moves up, live
  assert.equal((await call('POST', `/api/v1/matrices/${ida}/cancel`)).status, 200);
  await eventually(async () => /^#1 in the queue · waiting for left: action \d+/.test(await queueOf(idb).textContent().catch(() => '')),
    10_000, `matrix ${idb} was not shown moving up to #1`);
  assert.equal(await rowOf(ida).getAttribute('data-state'), 'canceled');
  assert.equal(await queueOf(ida).count(), 0, 'a canceled matrix still shows a queue place');

  // the action ends: the matrix starts (its runs fail: nothing answers) and its row says so
  assert.equal((await call('POST', `/api/v1/actions/${action}/cancel`)).status, 202);
  await eventually(async () => ['running', 'failed'].includes(await rowOf(idb).getAttribute('data-state')),
    30_000, `matrix ${idb} did not leave the queue once left was free`);
  assert.equal(await queueOf(idb).count(), 0, 'a started matrix still shows a queue place');
  // the page before the login asks the API without a token: 401s only
  assert.deepEqual(bed.errors.filter((e) => !/Failed to load resource: .* 401 /.test(e)), []);
});

// Reservations on the hosts page (hostcard.mjs) in Debian's Chromium against
// the real testbedd (loopback inventory): alice (operator) reserves left
// over the API; the card of left says "Reserved by alice until ..." with the
// note, right's card says nothing; bob's boot of left through the API gets
// 409 naming alice; after alice releases, the card's line goes on the next
// read of the list (every 15 s: hostrefresh.mjs).  Screenshots (desktop and
// phone) go to $TB_BINARY_DIR/screenshots/reserve-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Bed, deadInventory, freePort, login, shoot } from './lib/testbed.mjs';

const bed = new Bed('reserve');
let tbd;
let page;
let alice;
let bob;

const call = (token, method, urlPath, body) => tbd.call(method, urlPath, body, token);

before(async () => {
  const closed = await freePort();
  tbd = await bed.startTestbedd(deadInventory(bed.root, `  left:
    role: host
    boot: {loader: grub, default: ubuntu, entries: {ubuntu: "0", freebsd: "freebsd"}}
    os:
      ubuntu: {address: 127.0.0.1, port: ${closed}}
      freebsd: {address: 127.0.0.2, port: ${closed}}
  right:
    role: host
    os:
      ubuntu: {address: 127.0.0.3, port: ${closed}}
`));
  alice = (await tbd.post('/api/v1/tokens', { name: 'alice', role: 'operator' })).secret;
  bob = (await tbd.post('/api/v1/tokens', { name: 'bob', role: 'operator' })).secret;
  page = await bed.openPage();
});

after(() => bed.close());

test('a reservation shows on its host card and refuses another operator', async () => {
  const until = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const r = await call(alice, 'POST', '/api/v1/reservations', { hosts: ['left'], until, note: 'kernel bisect' });
  assert.equal(r.status, 201);
  assert.equal(r.json.reservation.state, 'granted');
  const refused = await call(bob, 'POST', '/api/v1/hosts/left/boot', { os: 'freebsd' });
  assert.equal(refused.status, 409);
  assert.match(refused.json.error.message, /left is reserved by alice until/);

  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
  const line = page.locator('#host-left .host-reservation');
  await line.waitFor();
  assert.match(await line.textContent(), /^Reserved by alice until .* — kernel bisect$/);
  assert.equal(await page.locator('#host-right .host-reservation').isVisible(), false);
  await shoot(page, 'reserve-hosts');

  assert.equal((await call(alice, 'DELETE', `/api/v1/reservations/${r.json.reservation.id}`)).status, 204);
  await page.reload();
  await page.locator('h1', { hasText: 'Hosts' }).waitFor();
  await page.locator('#host-left h2').waitFor();
  assert.equal(await page.locator('#host-left .host-reservation').isVisible(), false);
});

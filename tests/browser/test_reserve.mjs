// Reservations on the hosts page (hostcard.mjs) in Debian's Chromium against
// the real testbedd (loopback inventory): alice (operator) reserves left
// over the API; the card of left says "Reserved by alice until ..." with the
// note, right's card says nothing; bob's boot of left through the API gets
// 409 naming alice; after alice releases, the card's line goes on the next
// read of the list (every 15 s: hostrefresh.mjs).  Screenshots (desktop and
// phone) go to $TB_BINARY_DIR/screenshots/reserve-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  Testbedd, binaryDir, freePort, launchChromium, removeDir, tempDir,
} from './lib/testbed.mjs';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
let dir;
let tbd;
let browser;
let page;
let shots;
let alice;
let bob;

async function call(token, method, urlPath, body) {
  const res = await fetch(`${tbd.base}${urlPath}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

before(async () => {
  dir = tempDir('tb-reserve-');
  const tbDir = path.join(dir, 'tb');
  mkdirSync(tbDir, { mode: 0o700 });
  const closed = await freePort();
  const keyPath = path.join(dir, 'ssh.key');
  writeFileSync(keyPath, 'not a key\n', { mode: 0o600 });
  tbd = new Testbedd(tbDir, `version: 1
ssh:
  user: root
  key_file: ${keyPath}
  connect_timeout_s: 2
machines:
  left:
    role: host
    boot: {loader: grub, default: ubuntu, entries: {ubuntu: "0", freebsd: "freebsd"}}
    os:
      ubuntu: {address: 127.0.0.1, port: ${closed}}
      freebsd: {address: 127.0.0.2, port: ${closed}}
  right:
    role: host
    os:
      ubuntu: {address: 127.0.0.3, port: ${closed}}
`);
  await tbd.start();
  alice = (await tbd.post('/api/v1/tokens', { name: 'alice', role: 'operator' })).secret;
  bob = (await tbd.post('/api/v1/tokens', { name: 'bob', role: 'operator' })).secret;
  shots = path.join(binaryDir, 'screenshots');
  mkdirSync(shots, { recursive: true });
  browser = await launchChromium(path.join(dir, 'chromium'), DESKTOP);
  page = browser.pages()[0] ?? await browser.newPage();
});

after(async () => {
  await browser?.close().catch(() => {});
  await tbd?.stop();
  removeDir(dir);
});

test('a reservation shows on its host card and refuses another operator', async () => {
  const until = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const r = await call(alice, 'POST', '/api/v1/reservations', { hosts: ['left'], until, note: 'kernel bisect' });
  assert.equal(r.status, 201);
  assert.equal(r.json.reservation.state, 'granted');
  const refused = await call(bob, 'POST', '/api/v1/hosts/left/boot', { os: 'freebsd' });
  assert.equal(refused.status, 409);
  assert.match(refused.json.error.message, /left is reserved by alice until/);

  await page.goto(`${tbd.base}/`);
  await page.getByLabel('API token').fill(tbd.adminToken);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('h1', { hasText: 'Hosts' }).waitFor();
  const line = page.locator('#host-left .host-reservation');
  await line.waitFor();
  assert.match(await line.textContent(), /^Reserved by alice until .* — kernel bisect$/);
  assert.equal(await page.locator('#host-right .host-reservation').isVisible(), false);
  await page.screenshot({ path: path.join(shots, 'reserve-hosts-desktop.png'), fullPage: true });
  await page.setViewportSize(PHONE);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await page.screenshot({ path: path.join(shots, 'reserve-hosts-phone.png'), fullPage: true });
  await page.setViewportSize(DESKTOP);
  assert.ok(overflow <= 0, `the page is ${overflow} px wider than a 390 px phone`);

  assert.equal((await call(alice, 'DELETE', `/api/v1/reservations/${r.json.reservation.id}`)).status, 204);
  await page.reload();
  await page.locator('h1', { hasText: 'Hosts' }).waitFor();
  await page.locator('#host-left h2').waitFor();
  assert.equal(await page.locator('#host-left .host-reservation').isVisible(), false);
});

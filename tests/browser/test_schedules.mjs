// Schedules on the matrices page (schedules.mjs) in Debian's Chromium
// against the real testbedd (loopback inventory, nothing answers): a spec
// pushed to the library and scheduled "* * * * *" shows as a row with its
// cron, next time and gate; within the next minute the schedule starts a
// matrix (it fails: no host answers), its gate is judged (no baseline: no
// matrix of that name ever succeeded) and the row shows one square linking
// to that matrix, coloured by the verdict.  No schedule: no section.
// Screenshots (desktop and phone) go to $TB_BINARY_DIR/screenshots/schedules-*.png.
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

async function call(method, urlPath, body) {
  const res = await fetch(`${tbd.base}${urlPath}`, {
    method,
    headers: { Authorization: `Bearer ${tbd.adminToken}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

before(async () => {
  dir = tempDir('tb-schedules-');
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
    os:
      ubuntu: {address: 127.0.0.1, port: ${closed}}
    links:
      lan10: {address: 198.19.10.2/24, ifname: {ubuntu: data0}}
  right:
    role: host
    os:
      ubuntu: {address: 127.0.0.3, port: ${closed}}
`);
  await tbd.start();
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

test('a schedule lists with its next time, then a square per verdict', async () => {
  await page.goto(`${tbd.base}/`);
  await page.getByLabel('API token').fill(tbd.adminToken);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.goto(`${tbd.base}/#/matrices`);
  await page.locator('h1', { hasText: 'Matrices' }).waitFor();
  await page.waitForTimeout(500);
  assert.equal(await page.locator('section.schedules').isVisible(), false);

  const spec = { name: 'nightly', pairs: [{ client: 'right', server: 'left' }], duration_s: 1, repeats: 1 };
  const pushed = await call('POST', '/api/v1/specs', spec);
  assert.equal(pushed.status, 201, JSON.stringify(pushed.json));
  const put = await call('PUT', '/api/v1/specs/nightly/schedule', { cron: '* * * * *', max_drop: 10 });
  assert.equal(put.status, 200);

  let gate = null;
  for (let i = 0; i < 400 && !gate; i++) {
    const r = await call('GET', '/api/v1/schedules');
    gate = r.json.schedules[0].last.find((g) => g.verdict) ?? null;
    if (!gate) await new Promise((res) => setTimeout(res, 200));
  }
  assert.ok(gate, 'the schedule started and judged a matrix within 80 s');
  assert.equal(gate.verdict, 'no_baseline');

  await page.reload();
  const row = page.locator('section.schedules tr[data-schedule="nightly"]');
  await row.waitFor();
  assert.match(await row.textContent(), /nightly\* \* \* \* \*/);
  assert.match(await row.locator('td').nth(2).textContent(), /receiver_bps, drop ≤ 10 % vs latest passing/);
  const sq = row.locator('a.gate-square');
  assert.equal(await sq.count(), 1);
  assert.equal(await sq.getAttribute('href'), `#/matrices/${gate.matrix}`);
  assert.match(await sq.getAttribute('class'), /gate-no_baseline/);
  assert.match(await sq.getAttribute('aria-label'), new RegExp(`matrix ${gate.matrix}: no baseline`));
  await page.screenshot({ path: path.join(shots, 'schedules-desktop.png'), fullPage: true });
  await page.setViewportSize(PHONE);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await page.screenshot({ path: path.join(shots, 'schedules-phone.png'), fullPage: true });
  await page.setViewportSize(DESKTOP);
  assert.ok(overflow <= 0, `the page is ${overflow} px wider than a 390 px phone`);
});

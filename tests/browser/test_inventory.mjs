// The Inventory page (#/inventory, admin) in Debian's Chromium (headless,
// driven by playwright-core) against the real testbedd (loopback inventory,
// no machine needs to answer).
//
// In order on one page: an admin opens Inventory from the nav and sees the
// file, its load time, "none since testbedd started" and both machines; a
// proposed text with a bad role is checked and the page says line 12,
// column 11 with the --check-config message; good text says ok, 2 machines;
// the file on disk is broken and Reload is refused: the API's FILE:LINE:COL
// shows, the last reload reads "refused" and both machines are still listed;
// the file fixed with a third machine reloads; a viewer is told the page is
// for admins (the only console errors: the 400 of the refused reload and
// the 401 before login).  The file is never written by testbedd (checked at the end).
// Screenshots (1280x800 and a 390x844 phone, light and dark) go to
// $TB_BINARY_DIR/screenshots/inventory-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
let viewerSecret;
let good;
const pageErrors = [];

const inventory = (keyPath, closed, extra = '') => `version: 1
ssh:
  user: root
  key_file: ${keyPath}
  connect_timeout_s: 2
machines:
  left:
    role: host
    os:
      ubuntu: {address: 127.0.0.1, port: ${closed}}
  right:
    role: host
    os:
      ubuntu: {address: 127.0.0.2, port: ${closed}}
${extra}`;

before(async () => {
  dir = tempDir('tb-inventory-');
  const tbDir = path.join(dir, 'tb');
  mkdirSync(tbDir, { mode: 0o700 });
  const closed = await freePort();
  const keyPath = path.join(dir, 'ssh.key');
  writeFileSync(keyPath, 'not a key\n', { mode: 0o600 });
  good = inventory(keyPath, closed);
  tbd = new Testbedd(tbDir, good);
  await tbd.start();
  viewerSecret = (await tbd.post('/api/v1/tokens', { name: 'inv-viewer', role: 'viewer' })).secret;
  shots = path.join(binaryDir, 'screenshots');
  mkdirSync(shots, { recursive: true });
  browser = await launchChromium(path.join(dir, 'chromium'), DESKTOP);
  page = browser.pages()[0] ?? await browser.newPage();
  page.on('pageerror', (err) => pageErrors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') pageErrors.push(`console: ${msg.text()}`); });
});

after(async () => {
  await browser?.close().catch(() => {});
  await tbd?.stop();
  removeDir(dir);
});

async function login(token) {
  const input = page.getByLabel('API token');
  await input.waitFor();
  await input.fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('h1', { hasText: 'Hosts' }).waitFor();
}

async function shoot(name) {
  await page.evaluate(() => document.activeElement?.blur());
  await page.screenshot({ path: path.join(shots, `inventory-${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await page.screenshot({ path: path.join(shots, `inventory-${name}-phone.png`), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: path.join(shots, `inventory-${name}-phone-dark.png`), fullPage: true });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(DESKTOP);
  assert.ok(overflow <= 0, `${name}: the page is ${overflow} px wider than a 390 px phone`);
}

const rows = () => page.locator('table.inv-machines tbody tr');

test('an admin opens Inventory from the nav: the file and its machines', async () => {
  await page.goto(`${tbd.base}/`);
  await login(tbd.adminToken);
  await page.getByRole('link', { name: 'Inventory' }).click();
  await page.locator('h1', { hasText: 'Inventory' }).waitFor();
  await page.getByText(tbd.inventory).waitFor();
  await page.getByText('none since testbedd started').waitFor();
  assert.equal(await rows().count(), 2);
});

test('a proposed text with a mistake: line and column', async () => {
  await page.getByLabel('Proposed inventory file').fill(good.replace('  right:\n    role: host', '  right:\n    role: hots'));
  await page.getByRole('button', { name: 'Check' }).click();
  const err = page.locator('.inv-verdict pre.inv-error');
  await err.waitFor();
  const t = await err.textContent();
  assert.match(t, /^line 12, column 11: .*:12:11: machines\.right\.role: expected one of host/);
  await shoot('check');
  await page.getByLabel('Proposed inventory file').fill(good);
  await page.getByRole('button', { name: 'Check' }).click();
  await page.locator('.inv-verdict', { hasText: 'ok 2 machines' }).waitFor();
});

test('a broken file is refused on reload and the old inventory stays', async () => {
  const broken = good.replace('  right:\n    role: host', '  right:\n    role: hots');
  writeFileSync(tbd.inventory, broken);
  await page.getByRole('button', { name: 'Reload the file' }).click();
  await page.locator('p.alert', { hasText: ':12:11:' }).waitFor();
  await page.locator('.inv-last', { hasText: 'refused' }).waitFor();
  assert.equal(await rows().count(), 2);
  await shoot('refused');
  writeFileSync(tbd.inventory, `${good}  third:\n    role: router\n    os:\n      ubuntu: {address: 127.0.0.3, port: 9}\n`);
  await page.getByRole('button', { name: 'Reload the file' }).click();
  await page.locator('.inv-last', { hasText: 'ok' }).waitFor();
  await page.locator('table.inv-machines tbody tr', { hasText: 'third' }).waitFor();
  assert.equal(await rows().count(), 3);
  assert.match(readFileSync(tbd.inventory, 'utf8'), /third:/); // as written here: testbedd never writes it
  assert.deepEqual(pageErrors.filter((e) => !/status of (400|401)/.test(e)), []);
});

test('a viewer is told the page is for admins', async () => {
  await page.getByRole('button', { name: 'Log out' }).click();
  await login(viewerSecret);
  await page.goto(`${tbd.base}/#/inventory`);
  await page.getByText('The inventory is for admins; you are viewer.').waitFor();
});

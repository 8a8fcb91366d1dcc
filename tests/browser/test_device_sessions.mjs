// "Remember this device" and "Log out everywhere" in Debian's Chromium
// against the real testbedd (loopback inventory, nothing answers): logging in
// with the box ticked gives a cookie that lasts 30 days; "Log out everywhere"
// in the header ends this browser's session (and, the integration test
// test_device_sessions shows, every other session of the token), back on the
// login page; the header fits a phone with the extra button.
// Screenshot (phone) goes to $TB_BINARY_DIR/screenshots/device-sessions-phone.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  Testbedd, binaryDir, launchChromium, removeDir, tempDir,
} from './lib/testbed.mjs';

const PHONE = { width: 390, height: 844 };
let dir;
let tbd;
let browser;
let shots;

before(async () => {
  dir = tempDir('tb-devsess-');
  const tbDir = path.join(dir, 'tb');
  mkdirSync(tbDir, { mode: 0o700 });
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
      ubuntu: {address: 127.0.0.1, port: 9}
`);
  await tbd.start();
  shots = path.join(binaryDir, 'screenshots');
  mkdirSync(shots, { recursive: true });
  browser = await launchChromium(path.join(dir, 'chromium'), PHONE);
});

after(async () => {
  await browser?.close().catch(() => {});
  await tbd?.stop();
  removeDir(dir);
});

async function login(page, remember) {
  await page.goto(`${tbd.base}/`);
  await page.getByLabel('API token').fill(tbd.adminToken);
  if (remember) await page.getByLabel('Remember this device for 30 days').check();
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
  await page.locator('#logout').waitFor({ state: 'visible' });
}

test('remember this device, then log out everywhere', async () => {
  const phone = browser.pages()[0] ?? await browser.newPage();
  await login(phone, true);
  const [cookie] = await phone.context().cookies();
  assert.equal(cookie.name, 'tb_session');
  const days = (cookie.expires - Date.now() / 1000) / 86400;
  assert.ok(days > 29.9 && days <= 30, `the cookie lasts ${days} days`);

  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await phone.screenshot({ path: path.join(shots, 'device-sessions-phone.png'), fullPage: true });
  assert.ok(overflow <= 0, `the page is ${overflow} px wider than a 390 px phone`);

  await phone.getByRole('button', { name: 'End all sessions', exact: true }).click();
  await phone.getByText('You are logged out on every device.').waitFor();
  await phone.getByLabel('API token').waitFor();
  const who = await phone.evaluate(async () => (await fetch('/api/v1/whoami')).status);
  assert.equal(who, 401);
});

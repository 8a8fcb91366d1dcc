// "Remember this device" and "Log out everywhere" in Debian's Chromium
// against the real testbedd (loopback inventory, nothing answers): logging in
// with the box ticked gives a cookie that lasts 30 days; "Log out everywhere"
// in the header ends this browser's session (and, the integration test
// test_device_sessions shows, every other session of the token), back on the
// login page; the header fits a phone with the extra button.
// "Your devices" (#/devices, the user name in the top bar links there) lists
// this browser's session, marked "This device", and one made elsewhere (a
// phone's Firefox: its browser summarized from the User-Agent); "End" ends
// that one (its cookie gets 401 then) and the list shrinks to this device.
// Each says when and from where it was last used.  "Log out everywhere" on
// that page ends every session of the token (another device's event stream
// ends, its cookie gets 401) and lands on the login page.
// Screenshots (phone) go to $TB_BINARY_DIR/screenshots/device-sessions-phone.png
// and devices-{desktop,phone}.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  Bed, DESKTOP, PHONE, deadInventory, eventStream, eventually, login, shoot, shotsDir, sideways,
} from './lib/testbed.mjs';

const bed = new Bed('device-sessions');
let tbd;
let phone;

before(async () => {
  tbd = await bed.startTestbedd(deadInventory(bed.root, `  left:
    role: host
    os:
      ubuntu: {address: 127.0.0.1, port: 9}
`));
  phone = await bed.openPage(PHONE);
});

after(() => bed.close());

test('remember this device, then log out everywhere', async () => {
  await phone.goto(`${tbd.base}/`);
  await login(phone, tbd.adminToken, { remember: true });
  await phone.locator('#logout').waitFor({ state: 'visible' });
  const [cookie] = await phone.context().cookies();
  assert.equal(cookie.name, 'tb_session');
  const days = (cookie.expires - Date.now() / 1000) / 86400;
  assert.ok(days > 29.9 && days <= 30, `the cookie lasts ${days} days`);

  const overflow = await sideways(phone);
  await phone.screenshot({ path: path.join(shotsDir(), 'device-sessions-phone.png'), fullPage: true });
  assert.ok(overflow <= 0, `the page is ${overflow} px wider than a 390 px phone`);

  await phone.getByRole('button', { name: 'End all sessions', exact: true }).click();
  await phone.getByText('You are logged out on every device.').waitFor();
  await phone.getByLabel('API token').waitFor();
  const who = await phone.evaluate(async () => (await fetch('/api/v1/whoami')).status);
  assert.equal(who, 401);
});

test('your devices: this one marked, end the other', async () => {
  await phone.setViewportSize(DESKTOP);
  await phone.goto(`${tbd.base}/`);
  await login(phone, tbd.adminToken);
  // another device logs in with the same token
  const res = await fetch(`${tbd.base}/api/v1/session`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': 'Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0',
    },
    body: JSON.stringify({ token: tbd.adminToken, remember: true }),
  });
  assert.equal(res.status, 200);
  const other = res.headers.get('set-cookie').split(';')[0];
  const otherWho = async () => (await fetch(`${tbd.base}/api/v1/whoami`, { headers: { Cookie: other } })).status;
  assert.equal(await otherWho(), 200);

  await phone.locator('#who').click();
  await phone.locator('h1', { hasText: 'Your devices' }).waitFor();
  const items = phone.locator('li.device');
  await phone.waitForFunction(() => document.querySelectorAll('li.device').length === 2);
  const mine = phone.locator('li.device[data-current="true"]');
  const theirs = phone.locator('li.device[data-current="false"]');
  assert.equal(await mine.count(), 1);
  assert.match(await mine.textContent(), /This device/);
  assert.equal(await mine.getByRole('button').count(), 0);
  assert.match(await theirs.innerText(), /Firefox on Android/);
  assert.match(await theirs.innerText(), /remembered until/);
  // last used: the login (this minute), from the address testbedd saw
  assert.match(await mine.innerText(), /last used just now from 127\.0\.0\.1/);
  assert.match(await theirs.innerText(), /last used just now from 127\.0\.0\.1/);
  assert.doesNotMatch(await theirs.textContent(), /This device/);
  await shoot(phone, 'devices');

  await theirs.getByRole('button', { name: /^End the session of Firefox on Android/ }).click();
  await phone.getByText('Only this device is logged in.').waitFor();
  assert.equal(await items.count(), 1);
  assert.equal(await otherWho(), 401);
  // this browser goes on
  const who = await phone.evaluate(async () => (await fetch('/api/v1/whoami')).status);
  assert.equal(who, 200);
});

test('your devices: log out everywhere ends every session and its streams', async () => {
  const res = await fetch(`${tbd.base}/api/v1/session`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token: tbd.adminToken, remember: true }),
  });
  assert.equal(res.status, 200);
  const other = res.headers.get('set-cookie').split(';')[0];
  const es = await eventStream(tbd.base, { Cookie: other }, 'the other device\'s stream');

  await phone.locator('#nav').getByRole('link', { name: 'Hosts' }).click();
  await phone.locator('#who').click();
  await phone.locator('h1', { hasText: 'Your devices' }).waitFor();
  await phone.waitForFunction(() => document.querySelectorAll('li.device').length === 2);
  phone.once('dialog', (d) => d.accept());
  await phone.getByRole('button', { name: 'Log out everywhere', exact: true }).click();
  await phone.getByText('You are logged out on every device.').waitFor();
  await phone.getByLabel('API token').waitFor();
  await eventually(() => es.ended, 20_000, 'the other device\'s stream is still open');
  await es.done;
  es.abort();
  assert.equal((await fetch(`${tbd.base}/api/v1/whoami`, { headers: { Cookie: other } })).status, 401);
  assert.equal(await phone.evaluate(async () => (await fetch('/api/v1/whoami')).status), 401);
});

// "Remember this device" and "Log out everywhere" in Debian's Chromium
// against the real testbedd (loopback inventory, nothing answers): logging in
// with the box ticked gives a cookie that lasts 30 days; "Log out everywhere"
// in the header ends this browser's session (and, the integration test
// test_device_sessions shows, every other session of the token), back on the
// login page; the header fits a phone with the extra button.
// Screenshot (phone) goes to $TB_BINARY_DIR/screenshots/device-sessions-phone.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  Bed, PHONE, deadInventory, login, shotsDir, sideways,
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

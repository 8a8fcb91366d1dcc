// IPv6 in the matrix builder (issue 20 item 8), in Debian's Chromium
// (headless, playwright-core) against the real testbedd on a loopback
// inventory (a plan contacts no host, so no sim): the form's "Address
// families" follows the JSON ("family" absent: IPv4 ticked); ticking IPv6
// writes "family": ["ipv4", "ipv6"], and the plan shows the IPv6 runs with
// -6 against the server's address6; a pair whose server has no address6 is
// refused with the error at the Address families field, naming the host and
// the inventory field.  Screenshots: $TB_BINARY_DIR/screenshots/matrix-family-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  Bed, DESKTOP, deadInventory, eventually, login, shotsDir,
} from './lib/testbed.mjs';

const SOON = 15_000;
const bed = new Bed('matrix-family');
const pageErrors = bed.errors;
let tbd;
let page;

before(async () => {
  tbd = await bed.startTestbedd(deadInventory(bed.root, `  left:
    role: host
    os:
      ubuntu: {address: 127.0.0.1, port: 9}
    links:
      lan10: {address: 198.19.10.2/24, address6: 2001:2:0:10::2/64}
  right:
    role: host
    os:
      ubuntu: {address: 127.0.0.3, port: 9}
    links:
      lan20: {address: 198.19.20.2/24, address6: 2001:2:0:20::2/64}
  far:
    role: host
    os:
      ubuntu: {address: 127.0.0.4, port: 9}
    links:
      lan30: {address: 198.19.30.2/24}
`));
  page = await bed.openPage(DESKTOP, { timeout: SOON });
});

after(() => bed.close());

const spec = () => page.locator('textarea#spec');
const planRows = () => page.locator('.plan-table tbody tr');
const specJson = async () => JSON.parse(await spec().inputValue());

test('Address families in the builder: IPv6 ticked plans -6 runs to address6; a server without one is refused at the field', { timeout: 90_000 }, async () => {
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
  await page.evaluate(() => sessionStorage.removeItem('testbedd.matrix-spec'));
  await page.goto(`${tbd.base}/#/matrices/new`);
  await page.locator('textarea#spec[data-ready="yes"]').waitFor();
  await spec().fill(JSON.stringify({ name: 'v6', pairs: [{ client: 'left', server: 'right' }], duration_s: 3 }, null, 2));
  await eventually(async () => (await page.locator('#b-name').inputValue()) === 'v6', SOON, 'the JSON did not fill the form');

  const fam = page.locator('fieldset[data-field="family"]');
  assert.match(await fam.locator('legend').innerText(), /Address families/);
  assert.equal(await page.locator('#b-family-ipv4').isChecked(), true, 'no "family": IPv4');
  assert.equal(await page.locator('#b-family-ipv6').isChecked(), false);

  await page.locator('#b-family-ipv6').check();
  assert.deepEqual((await specJson()).family, ['ipv4', 'ipv6'], 'the JSON follows the form');
  await page.getByRole('button', { name: 'Plan' }).click();
  await eventually(async () => (await planRows().count()) === 2, SOON, 'the plan should have an IPv4 and an IPv6 run');
  assert.doesNotMatch(await planRows().nth(0).innerText(), /-6/);
  assert.match(await planRows().nth(1).innerText(), /-t 3 -6/);
  const plan = (await tbd.post('/api/v1/matrices/plan', await specJson())).plan.plan;
  assert.deepEqual(plan.map((r) => [r.family, r.server_address]), [['ipv4', '198.19.20.2'], ['ipv6', '2001:2:0:20::2']]);
  await page.screenshot({ path: path.join(shotsDir(), 'matrix-family-plan.png'), fullPage: true });

  // IPv6 alone, against far (no address6): the error shows at Address families
  await page.locator('#b-family-ipv4').uncheck();
  assert.equal((await specJson()).family, 'ipv6');
  const json = await specJson();
  json.pairs = [{ client: 'left', server: 'far' }];
  await spec().fill(JSON.stringify(json, null, 2));
  await page.getByRole('button', { name: 'Plan' }).click();
  const bad = page.locator('.b-checks.b-invalid');
  await bad.waitFor({ timeout: SOON });
  assert.equal(await bad.getAttribute('data-field'), 'family');
  const msg = await bad.locator('.b-error').innerText();
  assert.match(msg, /far/);
  assert.match(msg, /machines\.far\.links\.lan30\.address6/);
  await page.screenshot({ path: path.join(shotsDir(), 'matrix-family-error.png'), fullPage: true });
  // (the page's first request before the login is a 401 in the console: not an error of the page)
  assert.deepEqual(pageErrors.filter((e) => !/status of 401|status of 400/.test(e)), []);
});

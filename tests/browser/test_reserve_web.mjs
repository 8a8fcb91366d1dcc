// Reserving and releasing from the hosts page (hostreserve.mjs) in Debian's
// Chromium against the real testbedd (loopback inventory, no sim), one page
// whose user changes by logging out and in: alice (operator) reserves left
// with "Reserve…" and the API then has it; her second try gets 409 and an
// empty "until a time" gets 400 naming the field, both in the dialog; bob's
// reservation of left is queued with position 1 shown; alice's "Release"
// grants bob's, and the card says so without a reload (reservation.* events);
// an admin's "Break" (confirmed) ends bob's; bob withdraws a queued one from
// its line; a viewer has no buttons.
// Screenshots (desktop and phone): $TB_BINARY_DIR/screenshots/reserve-web-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Bed, deadInventory, freePort, login, shoot } from './lib/testbed.mjs';

const bed = new Bed('reserve-web');
let tbd;
let page;
const tok = {};

before(async () => {
  const closed = await freePort();
  tbd = await bed.startTestbedd(deadInventory(bed.root, `  left:
    role: host
    os:
      ubuntu: {address: 127.0.0.1, port: ${closed}}
  right:
    role: host
    os:
      ubuntu: {address: 127.0.0.3, port: ${closed}}
`));
  for (const [name, role] of [['alice', 'operator'], ['bob', 'operator'], ['vera', 'viewer']])
    tok[name] = (await tbd.post('/api/v1/tokens', { name, role })).secret;
  page = await bed.openPage();
  await page.goto(`${tbd.base}/`);
});

after(() => bed.close());

async function as(token) {
  if (await page.locator('#logout').isVisible()) await page.locator('#logout').click();
  await login(page, token);
  await page.locator('#host-left h2').waitFor();
}

const card = (name) => page.locator(`#host-${name}`);
const dialog = () => page.locator('dialog.reserve-dialog');
const reservations = async () => (await tbd.call('GET', '/api/v1/reservations')).json.reservations;

async function reserve(host, { duration = '1 h', note = '' } = {}) {
  await card(host).getByRole('button', { name: 'Reserve…' }).click();
  await dialog().waitFor();
  await dialog().getByLabel('For how long').selectOption({ label: duration });
  await dialog().getByLabel('Note').fill(note);
  await dialog().getByRole('button', { name: 'Reserve', exact: true }).click();
}

test('reserve, queue, release, break and a viewer from the hosts page', async () => {
  await as(tok.alice);
  await reserve('left', { note: 'kernel bisect' });
  // the card's host is picked, the other is not
  assert.equal(await dialog().getByLabel('left').isChecked(), true);
  assert.equal(await dialog().getByLabel('right').isChecked(), false);
  await dialog().locator('.reserve-result', { hasText: /^Granted: reservation \d+ of left until / }).waitFor();
  let list = await reservations();
  assert.equal(list.length, 1);
  assert.deepEqual([list[0].owner, list[0].state, list[0].hosts, list[0].note], ['alice', 'granted', ['left'], 'kernel bisect']);
  const aliceId = list[0].id;

  // refusals in the dialog, naming the field: 409 (alice has left already) and 400
  await dialog().getByRole('button', { name: 'Reserve', exact: true }).click();
  await dialog().getByRole('alert').filter({ hasText: /^Not reserved \(Hosts\): you already have reservation \d+ / }).waitFor();
  await dialog().getByLabel('For how long').selectOption({ label: 'until a time…' });
  await dialog().getByRole('button', { name: 'Reserve', exact: true }).click();
  await dialog().getByRole('alert').filter({ hasText: /^Not reserved \(For how long\): until must be/ }).waitFor();
  assert.equal(await page.locator('#reserve-until').getAttribute('aria-invalid'), 'true');
  assert.equal(await dialog().locator('fieldset.reserve-hosts').getAttribute('aria-invalid'), null, 'only the field named now is marked');
  await shoot(page, 'reserve-web-dialog', { fullPage: false });
  await dialog().getByRole('button', { name: 'Close' }).click();

  // the card, live: reserved by alice, her Release
  await card('left').locator('.host-reservation', { hasText: /^Reserved by alice until .* — kernel bisect$/ }).waitFor();
  await card('left').getByRole('button', { name: 'Release' }).waitFor();
  assert.equal(await card('left').getByRole('button', { name: 'Break' }).count(), 0);

  // bob: queued at position 1, shown in the dialog and on the card; neither button on alice's
  await as(tok.bob);
  await reserve('left', { duration: '30 min', note: 'after alice' });
  await dialog().locator('.reserve-result', { hasText: /^Queued: position 1, estimated start / }).waitFor();
  await dialog().getByRole('button', { name: 'Close' }).click();
  await card('left').locator('.host-queued', { hasText: /^Queued: bob \(position 1, estimated start .*\) — after alice$/ }).waitFor();
  assert.equal(await card('left').getByRole('button', { name: /^(Release|Break)$/ }).count(), 0);
  list = await reservations();
  assert.deepEqual(list.map((r) => [r.owner, r.state, r.position ?? null]), [['alice', 'granted', null], ['bob', 'queued', 1]]);
  await shoot(page, 'reserve-web-queued');

  // alice releases from the page: bob's is granted and the card says so without a reload
  await as(tok.alice);
  await page.evaluate(() => { window.__notReloaded = true; });
  await card('left').getByRole('button', { name: 'Release' }).click();
  await card('left').locator('.host-reservation', { hasText: /^Reserved by bob until .* — after alice$/ }).waitFor();
  await card('left').locator('.host-queued').waitFor({ state: 'detached' });
  assert.equal(await page.evaluate(() => window.__notReloaded), true);
  list = await reservations();
  assert.deepEqual(list.map((r) => [r.owner, r.state]), [['bob', 'granted']]);
  assert.ok(!list.some((r) => r.id === aliceId));
  assert.equal(await card('left').getByRole('button', { name: /^(Release|Break)$/ }).count(), 0);

  // the admin breaks bob's (after a confirm)
  await as(tbd.adminToken);
  const breakButton = card('left').getByRole('button', { name: 'Break' });
  page.once('dialog', (d) => d.dismiss());
  await breakButton.click();
  assert.equal((await reservations()).length, 1, 'dismissing the confirm breaks nothing');
  let asked = '';
  page.once('dialog', (d) => { asked = d.message(); d.accept(); });
  await breakButton.click();
  await card('left').locator('.host-reservation').waitFor({ state: 'hidden' });
  assert.match(asked, /^Break bob's reservation \d+ of left\?/);
  assert.deepEqual(await reservations(), []);

  // bob queues behind alice's reservation of right and withdraws it from its line
  const r = await tbd.call('POST', '/api/v1/reservations', {
    hosts: ['right'], until: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z'), note: '',
  }, tok.alice);
  assert.equal(r.status, 201);
  await as(tok.bob);
  await reserve('right');
  await dialog().locator('.reserve-result', { hasText: /^Queued: position 1, / }).waitFor();
  await dialog().getByRole('button', { name: 'Close' }).click();
  await card('right').getByRole('button', { name: 'Withdraw' }).click();
  await card('right').locator('.host-queued').waitFor({ state: 'detached' });
  assert.deepEqual((await reservations()).map((x) => [x.owner, x.state]), [['alice', 'granted']]);

  // a viewer sees a reservation but no button
  await as(tok.vera);
  await card('right').locator('.host-reservation', { hasText: /^Reserved by alice until / }).waitFor();
  assert.equal(await page.getByRole('button', { name: /^(Reserve…|Release|Break|Withdraw)$/ }).count(), 0);
  await shoot(page, 'reserve-web-viewer');
  // the 401 (before login), 409 and 400 above are the browser's own lines; nothing else
  assert.deepEqual(bed.errors.filter((e) => !/Failed to load resource: .* (401|409|400) /.test(e)), []);
});

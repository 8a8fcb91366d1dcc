// Schedules on the matrices page (schedules.mjs) in Debian's Chromium
// against the real testbedd (loopback inventory, nothing answers): a spec
// pushed to the library and scheduled "* * * * *" shows as a row with its
// cron, next time and gate; within the next minute the schedule starts a
// matrix (it fails: no host answers), its gate is judged (no baseline: no
// matrix of that name ever succeeded) and the row shows one square linking
// to that matrix, coloured by the verdict.  No schedule: no section.  Before
// that, while another operator (alice) reserves left, the first time starts
// nothing: a line under the row says when and why (her reservation) until a
// later time starts a matrix and clears it.  That matrix's page says under
// its head that the schedule started it and its gate's verdict.
// Screenshots (desktop and phone) go to $TB_BINARY_DIR/screenshots/schedules-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  Bed, deadInventory, eventually, freePort, login, shoot,
} from './lib/testbed.mjs';

const bed = new Bed('schedules');
let tbd;
let page;

const call = (method, urlPath, body) => tbd.call(method, urlPath, body);

before(async () => {
  const closed = await freePort();
  tbd = await bed.startTestbedd(deadInventory(bed.root, `  left:
    role: host
    os:
      ubuntu: {address: 127.0.0.1, port: ${closed}}
    links:
      lan10: {address: 198.19.10.2/24, ifname: {ubuntu: data0}}
  right:
    role: host
    os:
      ubuntu: {address: 127.0.0.3, port: ${closed}}
`));
  page = await bed.openPage();
});

after(() => bed.close());

test('a schedule lists with its next time, then a square per verdict', async () => {
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
  await page.goto(`${tbd.base}/#/matrices`);
  await page.locator('h1', { hasText: 'Matrices' }).waitFor();
  await page.waitForTimeout(500);
  assert.equal(await page.locator('section.schedules').isVisible(), false);

  const spec = { name: 'nightly', pairs: [{ client: 'right', server: 'left' }], duration_s: 1, repeats: 1 };
  const pushed = await call('POST', '/api/v1/specs', spec);
  assert.equal(pushed.status, 201, JSON.stringify(pushed.json));
  const alice = (await tbd.post('/api/v1/tokens', { name: 'alice', role: 'operator' })).secret;
  const resv = await tbd.call('POST', '/api/v1/reservations', {
    hosts: ['left'], until: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z'), note: 'bisect',
  }, alice);
  assert.equal(resv.status, 201, JSON.stringify(resv.json));
  const put = await call('PUT', '/api/v1/specs/nightly/schedule', { cron: '* * * * *', max_drop: 10 });
  assert.equal(put.status, 200);

  // the first time: left reserved by alice, nothing starts
  const failed = await eventually(async () => (await call('GET', '/api/v1/schedules')).json.schedules[0].last_failure,
    80_000, 'the schedule recorded no failure');
  assert.match(failed.message, /left is reserved by alice/);
  await page.reload();
  const note = page.locator('section.schedules tr.schedule-failure[data-schedule-failure="nightly"]');
  await note.waitFor();
  assert.match(await note.textContent(), /^Not started at .+: left is reserved by alice until .+ \(reservation \d+: bisect\)$/);
  assert.equal(await note.locator('td').getAttribute('colspan'), '5');
  await shoot(page, 'schedules-failed', { fullPage: false });
  assert.equal((await tbd.call('DELETE', `/api/v1/reservations/${resv.json.reservation.id}`, undefined, alice)).status, 204);

  const gate = await eventually(async () => (await call('GET', '/api/v1/schedules')).json.schedules[0].last.find((g) => g.verdict),
    80_000, 'the schedule started and judged no matrix');
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
  assert.equal(await page.locator('section.schedules tr.schedule-failure').count(), 0, 'a started time clears the line');
  await shoot(page, 'schedules');

  // the matrix's own page: started by the schedule, its gate's verdict
  await sq.click();
  const line = page.locator('p.mx-gate');
  await line.waitFor();
  assert.equal(await line.getAttribute('data-verdict'), 'no_baseline');
  assert.equal(await line.textContent(),
    ' Started by the schedule of nightly (version 1): has no baseline to compare with (no earlier matrix of nightly passed).');
  assert.equal(await line.locator('button').count(), 0, 'no comparison without a baseline');
});

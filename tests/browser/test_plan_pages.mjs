// The matrix builder with a plan larger than one page, in Debian's Chromium
// (headless, playwright-core) against the real testbedd on a loopback
// inventory (a plan contacts no host, so no sim): a spec of 1,200 runs (shuffled,
// no seed) plans to the first 500 rows with "The first 500 of 1200 runs";
// "Show the next 500 runs" adds runs 500..999 and then 1000..1199, in the
// order of the plan the API gives for the spec the first page stored (its
// seed: the next pages are of the same shuffled plan), and disappears after
// the last page.  Screenshot: $TB_BINARY_DIR/screenshots/plan-pages-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import {
  Bed, DESKTOP, deadInventory, login, shotsDir,
} from './lib/testbed.mjs';

const SOON = 15_000;
// right -> left (left has the link): 4 durations x 300 repeats = 1200 runs, shuffled without a seed
const SPEC = {
  name: 'pages',
  pairs: [{ client: 'right', server: 'left' }],
  duration_s: [1, 2, 3, 4],
  repeats: 300,
  order: 'shuffled',
};
const bed = new Bed('plan-pages');
const pageErrors = bed.errors;
let tbd;
let page;

before(async () => {
  tbd = await bed.startTestbedd(deadInventory(bed.root, `  left:
    role: host
    os:
      ubuntu: {address: 127.0.0.1, port: 9}
    links:
      lan10: {address: 198.19.10.2/24}
  right:
    role: host
    os:
      ubuntu: {address: 127.0.0.3, port: 9}
`));
  page = await bed.openPage(DESKTOP, { timeout: SOON });
});

after(() => bed.close());

const planRows = () => page.locator('.plan-table tbody tr');
const more = () => page.getByRole('button', { name: 'Show the next 500 runs' });

test('a plan of 1200 runs shows 500, then the next pages of the same plan', { timeout: 90_000 }, async () => {
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
  await page.goto(`${tbd.base}/#/matrices/new`);
  await page.locator('textarea#spec[data-ready="yes"]').waitFor();
  await page.locator('textarea#spec').fill(JSON.stringify(SPEC, null, 2));

  // the page's own first reply, to know the seed it got
  const first = page.waitForResponse((r) => r.url().includes('/api/v1/matrices/plan?limit=500'));
  await page.getByRole('button', { name: 'Plan' }).click();
  const reply = await (await first).json();
  await planRows().nth(499).waitFor();
  assert.equal(await planRows().count(), 500);
  assert.match(await page.locator('.plan-more').innerText(), /The first 500 of 1200 runs/);
  assert.match(await page.locator('.plan-summary').innerText(), /1200 runs/);
  assert.ok(Number.isInteger(reply.plan.spec.seed), 'the first page stored a seed');

  // the whole plan of that spec (its seed), from the API, in pages of 1000
  const whole = [];
  for (let offset = 0; offset !== null;) {
    const p = (await tbd.post(`/api/v1/matrices/plan?offset=${offset}&limit=1000`, reply.plan.spec)).plan;
    whole.push(...p.plan);
    offset = p.page.next_offset;
  }
  assert.equal(whole.length, 1200);

  await more().click();
  await planRows().nth(999).waitFor();
  assert.match(await page.locator('.plan-more').innerText(), /The first 1000 of 1200 runs/);
  await more().click();
  await planRows().nth(1199).waitFor();
  assert.equal(await planRows().count(), 1200);
  assert.equal(await page.locator('.plan-more').innerText(), '');
  assert.equal(await more().isVisible(), false, 'no more pages: the button is gone');
  const shown = await planRows().evaluateAll((trs) => trs.map((tr) => [tr.cells[0].textContent.trim(), tr.cells[5].textContent.trim()]));
  assert.deepEqual(shown, whole.map((r) => [String(r.seq), r.iperf_args]), 'the rows are the plan of the stored spec, in order');

  // every table downloads as CSV and JSON: the plan's shown rows too
  const [csv] = await Promise.all([page.waitForEvent('download'), page.locator('.export-bar .export-csv').first().click()]);
  assert.equal(csv.suggestedFilename(), 'planned-runs.csv');
  const lines = readFileSync(await csv.path(), 'utf8').trimEnd().split('\r\n');
  assert.equal(lines[0], 'seq,round,client → server,protocol,direction,iperf args');
  assert.equal(lines.length, 1 + 1200, 'a line per run shown');
  assert.ok(lines[1].startsWith(`${whole[0].seq},`) && lines[1].endsWith(whole[0].iperf_args.includes(',') ? '"' : whole[0].iperf_args),
    `the first run: ${lines[1]}`);
  const [json] = await Promise.all([page.waitForEvent('download'), page.locator('.export-bar .export-json').first().click()]);
  const rows = JSON.parse(readFileSync(await json.path(), 'utf8'));
  assert.deepEqual(rows.map((r) => [r.seq, r['iperf args']]), shown, 'the JSON rows are the table\'s');

  await page.screenshot({ path: path.join(shotsDir(), 'plan-pages-desktop.png') });
  // (the page's first request before the login is a 401 in the console: not an error of the page)
  assert.deepEqual(pageErrors.filter((e) => !/status of 401/.test(e)), []);
});

// A run's flame graphs on its page (issue 20 item 2), in Debian's Chromium
// (headless, playwright-core) against the real testbedd and the simulated
// testbed (deploy/sim, prefix tbfw, block 197).
//
// A 3 s TCP run left -> right with "profile": {"side": "both"}: the sender
// (left, ubuntu: perf) and the receiver (right, freebsd persona: no dtrace
// on this Linux kernel).  Once the run ended its page shows a "Flame graph"
// section: left's figure holds testbedd's SVG inline (the frames' <title>s
// there, tcp_sendmsg among them, as many rectangles as the served SVG has),
// right's says exactly why there is none (the reason GET /runs/{id}/profile
// has).  A run without "profile" shows no such section.  Screenshots go to
// $TB_BINARY_DIR/screenshots/run-flame-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Bed, eventually, login, shoot } from './lib/testbed.mjs';

const PREFIX = 'tbfw';
const BLOCK = '197';
const SOON = 15_000;
const SPEC = {
  name: 'flame',
  pairs: [{ client: 'left', server: 'right' }],
  protocols: ['tcp'],
  directions: ['forward'],
  duration_s: 3,
  repeats: 1,
  profile: { side: 'both' },
  os: [{ left: 'ubuntu', right: 'freebsd' }],
};
const bed = new Bed('run-flame');
const pageErrors = bed.errors;
let tbd;
let page;

before(async () => {
  tbd = await bed.startTestbedd(bed.upSim(PREFIX, BLOCK));
  await bed.hostsUp();
  page = await bed.openPage();
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
});

after(() => bed.close());

/** Run spec to its end: the run's id. */
async function runToEnd(spec) {
  const { matrix } = await tbd.post('/api/v1/matrices', spec);
  await tbd.matrixSucceeded(matrix.id);
  const { matrix: m } = await tbd.get(`/api/v1/matrices/${matrix.id}`);
  return m.runs[0].id;
}

test('a profiled run: the sender\'s flame graph inline, the receiver\'s reason', { timeout: 240_000 }, async () => {
  const run = await runToEnd(SPEC);
  const prof = await tbd.get(`/api/v1/runs/${run}/profile`);
  const left = prof.profiles.find((p) => p.host === 'left');
  const right = prof.profiles.find((p) => p.host === 'right');
  assert.equal(left.state, 'ok', JSON.stringify(left));
  assert.equal(right.state, 'unavailable', JSON.stringify(right));
  const svg = await (await fetch(`${tbd.base}/api/v1/runs/${run}/flamegraph.svg?host=left`,
    { headers: { Authorization: `Bearer ${tbd.adminToken}` } })).text();
  const rects = (svg.match(/<rect /g) ?? []).length;

  await page.goto(`${tbd.base}/#/runs/${run}`);
  await page.locator('.run-page[data-state="ok"]').waitFor();
  const fig = page.locator('figure.flame[data-host="left"]');
  await fig.locator('.flame-svg[data-loaded="ok"] svg').waitFor({ timeout: SOON });
  const titles = await fig.locator('svg title').allTextContents();
  assert.ok(titles.some((t) => t.startsWith('tcp_sendmsg (')), `no tcp_sendmsg among ${titles.length} titles`);
  assert.equal(await fig.locator('svg rect').count(), rects);
  assert.match(await fig.locator('figcaption').textContent(), /left, the sender \(perf -F 99\): \d+ samples/);
  assert.equal(await fig.locator('a.flame-link').getAttribute('href'),
    `api/v1/runs/${run}/flamegraph.svg?host=left`);
  const why = page.locator('figure.flame[data-host="right"] .flame-reason');
  assert.equal(await why.textContent(), right.reason);
  assert.match(right.reason, /^right: dtrace was not found/);
  await page.locator('.run-flame').scrollIntoViewIfNeeded();
  await shoot(page, 'run-flame-both');
});

test('a run without profile shows no flame graph section', { timeout: 120_000 }, async () => {
  const { profile, os, ...plain } = SPEC;
  assert.ok(profile && os);
  const run = await runToEnd({ ...plain, name: 'plain', duration_s: 2 });
  await page.goto(`${tbd.base}/#/runs/${run}`);
  await page.locator('.run-page[data-state="ok"] .interval-chart').waitFor();
  await page.waitForTimeout(500); // the profile's 404 has come
  assert.equal(await page.locator('.run-flame').isVisible(), false);
  assert.deepEqual(pageErrors.filter((e) => !/Failed to load resource|net::ERR_|EventSource|404/.test(e)), []);
});

// A run's latency under load on its page (issue 20 item 7), in Debian's
// Chromium (headless, playwright-core) against the real testbedd and the
// simulated testbed (deploy/sim, prefix tbrl, block 238) with its router's
// link limited to 20 Mbit/s (`sim link --rate`: the queue builds).
//
// A 4 s TCP run left -> right with "latency": "irtt": its page, opened
// before the run ends, shows the RTT chart fed by the run.rtt events of the
// live tail; after the end it has every load bin GET /runs/{id}/latency
// has (the medians drawn are the API's), the idle median as a dashed line
// (the API's idle bins' median of medians), and a summary line saying irtt
// and the API's median ratio.  A run of a spec without "latency" shows no
// latency box.  Screenshots go to $TB_BINARY_DIR/screenshots/run-latency-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Bed, eventually, login, shoot, sim } from './lib/testbed.mjs';

const PREFIX = 'tbrl';
const BLOCK = '238';
const SOON = 15_000;
const SPEC = {
  name: 'bloat',
  pairs: [{ client: 'left', server: 'right' }],
  protocols: ['tcp'],
  directions: ['forward'],
  duration_s: 4,
  repeats: 1,
  latency: 'irtt',
};
const bed = new Bed('run-latency');
const pageErrors = bed.errors;
let tbd;
let page;

before(async () => {
  tbd = await bed.startTestbedd(bed.upSim(PREFIX, BLOCK));
  await bed.hostsUp();
  sim('link', '--prefix', PREFIX, '--rate', '20mbit');
  page = await bed.openPage();
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
});

after(() => bed.close());

/** Start spec: {matrix, run} ids once its run exists. */
async function start(spec) {
  const { matrix } = await tbd.post('/api/v1/matrices', spec);
  let run = null;
  await eventually(async () => {
    const { matrix: m } = await tbd.get(`/api/v1/matrices/${matrix.id}`);
    run = m.runs?.[0]?.id ?? null;
    return run !== null;
  }, SOON, `matrix ${matrix.id} has no run`);
  return { matrix: matrix.id, run };
}

/** The latency chart's series from ECharts' own options: {median: [ys], idle: y or null}. */
async function drawn() {
  return page.evaluate(async () => {
    const echarts = await import(new URL('vendor/echarts.mjs', document.baseURI).href);
    const box = document.querySelector('.run-latency .chart-latency');
    const series = (box && echarts.getInstanceByDom(box)?.getOption().series) ?? [];
    const med = series.find((s) => s.name === 'median RTT under load');
    const idle = series.find((s) => s.name === 'idle median');
    return { median: (med?.data ?? []).map((p) => p[1]), idle: idle?.data?.[0]?.[1] ?? null };
  });
}

test('a run with latency: RTT under load against the idle RTT, live then from the store, as the API has it', { timeout: 150_000 }, async () => {
  const { matrix, run } = await start(SPEC);
  await page.goto(`${tbd.base}/#/runs/${run}`);
  await page.locator('.run-page').waitFor();
  await eventually(async () => (await drawn()).median.length >= 1, 30_000, 'no RTT drawn while the run ran');
  const liveState = await page.locator('.run-page').getAttribute('data-state');
  await tbd.matrixSucceeded(matrix);
  await eventually(async () => (await page.locator('.run-page').getAttribute('data-state')) === 'ok', SOON,
    'the page did not follow the run to its end');
  console.log(`# live: RTT drawn in state ${liveState}`);

  const api = await tbd.get(`/api/v1/runs/${run}/latency`);
  assert.equal(api.tool, 'irtt');
  assert.ok(api.summary.median_ratio >= 3, `median ratio ${api.summary.median_ratio}`);
  const want = api.bins.load.filter((b) => b.n > 0).map((b) => b.median);
  const idleMedians = api.bins.idle.filter((b) => b.n > 0).map((b) => b.median).sort((a, b) => a - b);
  const idle = idleMedians.length % 2 ? idleMedians[(idleMedians.length - 1) / 2]
    : (idleMedians[idleMedians.length / 2 - 1] + idleMedians[idleMedians.length / 2]) / 2;
  // the page followed the end: the summary line, and every stored bin
  await eventually(async () => /irtt: idle median/.test(await page.locator('.latency-summary').textContent()), SOON,
    'no summary under the chart after the end');
  await eventually(async () => JSON.stringify((await drawn()).median) === JSON.stringify(want), SOON,
    async () => `the chart shows ${JSON.stringify((await drawn()).median)}, the API ${JSON.stringify(want)}`);
  // opened again after the end: the same, from the store only
  await page.goto(`${tbd.base}/#/matrices/${matrix}`);
  await page.goto(`${tbd.base}/#/runs/${run}`);
  await eventually(async () => JSON.stringify((await drawn()).median) === JSON.stringify(want), SOON,
    'the chart does not show every stored load bin');
  const d = await drawn();
  assert.ok(Math.abs(d.idle - idle) < 1e-9, `idle line ${d.idle} against the API's ${idle}`);
  const text = await page.locator('.latency-summary').textContent();
  assert.match(text, new RegExp(`${api.summary.median_ratio}× the idle median`));
  assert.equal(await page.locator('.run-latency-box').isVisible(), true);
  await page.locator('.run-latency-box').scrollIntoViewIfNeeded();
  await shoot(page, 'run-latency-bloat');
});

test('a run without latency shows no latency box', { timeout: 120_000 }, async () => {
  const { latency, ...plain } = SPEC;
  assert.ok(latency);
  sim('link', '--prefix', PREFIX, '--rate', 'none');
  const { matrix, run } = await start({ ...plain, name: 'plain', duration_s: 2 });
  await tbd.matrixSucceeded(matrix);
  assert.deepEqual((await tbd.get(`/api/v1/runs/${run}/latency`)).bins, { idle: [], load: [] });
  await page.goto(`${tbd.base}/#/runs/${run}`);
  await page.locator('.run-page[data-state="ok"] .interval-chart').waitFor();
  await page.waitForTimeout(500);   // the latency reply has come
  assert.equal(await page.locator('.run-latency-box').isVisible(), false);
  assert.equal(await page.locator('.chart-latency').count(), 0);
  assert.deepEqual(pageErrors.filter((e) => !/Failed to load resource|net::ERR_|EventSource/.test(e)), []);
});

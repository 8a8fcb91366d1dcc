// A run's CPU and memory on its page (issue 20 item 1), in Debian's Chromium
// (headless, playwright-core) against the real testbedd and the simulated
// testbed (deploy/sim, prefix tbrp, block 224).
//
// A 3 s run left -> right with "sample": ["cpu", "mem"]: its page, opened
// before the run ends, shows a CPU/memory chart per host (left, right) fed by
// the run.sample events of the live tail; opened again after the end it
// draws them from GET /runs/{id}/samples, and each host's chart has as many
// points as the API's summary counts samples, names the summary's busiest
// core, and its busiest core's mean and memory's maximum are the summary's.
// A run of a spec without "sample" shows no CPU/memory box at all.
// The router on the path (its FreeBSD persona: the sim's sysctl stand-in
// answers kern.cp_times from the kernel's /proc/stat, five counters per
// CPU) gets a chart of its own, "router (router)".  With "latency": "irtt" the idle
// probe runs 2-3 s before iperf3: the samples are drawn from the loaded
// stream's start (iperf3's), not the run's started_at.
// Screenshots (1280x800 and a 390x844 phone) go to
// $TB_BINARY_DIR/screenshots/run-samples-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Bed, DESKTOP, PHONE, eventually, login, shoot } from './lib/testbed.mjs';

const PREFIX = 'tbrp';
const BLOCK = '224';
const SOON = 15_000;
const SPEC = {
  name: 'sampled',
  pairs: [{ client: 'left', server: 'right' }],
  protocols: ['tcp'],
  directions: ['forward'],
  duration_s: 3,
  repeats: 1,
  sample: ['cpu', 'mem'],
};
const bed = new Bed('run-samples');
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

/** Per host chart on the page: {host: {points, busiest name, busiest mean, memory max}} from ECharts' own options. */
async function drawn() {
  return page.evaluate(async () => {
    const echarts = await import(new URL('vendor/echarts.mjs', document.baseURI).href);
    const out = {};
    for (const box of document.querySelectorAll('.run-samples .chart-samples')) {
      const host = box.previousElementSibling.textContent.split(' ')[0];
      const chart = echarts.getInstanceByDom(box);
      const series = chart?.getOption().series ?? [];
      const busy = series.find((s) => / \(busiest\)$/.test(s.name));
      const mem = series.find((s) => s.name === 'memory used');
      const ys = (s) => (s?.data ?? []).map((p) => p[1]);
      out[host] = {
        points: busy?.data.length ?? 0,
        busiest: busy ? Number(busy.name.match(/^cpu(\d+)/)[1]) : null,
        mean: ys(busy).reduce((a, b) => a + b, 0) / Math.max(1, ys(busy).length),
        memMax: Math.max(...ys(mem)),
        xs: (busy?.data ?? []).map((p) => p[0]),
      };
    }
    return out;
  });
}

test('a sampled run: CPU and memory per host, live then from the store, as the API sums them', { timeout: 150_000 }, async () => {
  const { matrix, run } = await start(SPEC);
  await page.goto(`${tbd.base}/#/runs/${run}`);
  await page.locator('.run-page').waitFor();
  // live: both hosts' charts appear while the run has not ended
  await eventually(async () => (await page.locator('.run-samples .chart-samples').count()) === 3, 30_000,
    'no CPU/memory chart per host (left, right, the router) while the run ran');
  const liveState = await page.locator('.run-page').getAttribute('data-state');
  const live = await drawn();
  assert.deepEqual(Object.keys(live).sort(), ['left', 'right', 'router']);
  assert.equal(await page.locator('.run-samples h4', { hasText: 'router (router)' }).count(), 1);
  await tbd.matrixSucceeded(matrix);
  await eventually(async () => (await page.locator('.run-page').getAttribute('data-state')) === 'ok', SOON,
    'the page did not follow the run to its end');
  console.log(`# live: charts shown in state ${liveState} with ${JSON.stringify(live)}`);
  // the interval chart, updated in place by the live tail (charts.mjs merges
  // new data into the panels it has): every interval of both sides is drawn
  const { run: r } = await tbd.get(`/api/v1/runs/${run}`);
  const want = [r.intervals.client.length, r.intervals.server.length];
  await eventually(async () => {
    const got = await page.evaluate(async () => {
      const echarts = await import(new URL('vendor/echarts.mjs', document.baseURI).href);
      const rate = echarts.getInstanceByDom(document.querySelector('.interval-chart .chart-rate'));
      const detail = echarts.getInstanceByDom(document.querySelector('.interval-chart .chart-detail'));
      const n = (c, re) => c?.getOption().series.find((x) => re.test(x.name))?.data.length ?? 0;
      return [n(rate, /\(client\)$/), n(rate, /\(server\)$/), n(detail, /^retransmits \(client\)$/)];
    });
    return got[0] === want[0] && got[1] === want[1] && got[2] === want[0];
  }, SOON, `the live interval chart does not show ${want} intervals`);

  // from the store: the page opened again after the end
  const api = await tbd.get(`/api/v1/runs/${run}/samples`);
  assert.deepEqual(Object.keys(api.hosts).sort(), ['left', 'right', 'router']);
  assert.equal(api.hosts.router.side, 'router');
  await page.goto(`${tbd.base}/#/matrices/${matrix}`);
  await page.goto(`${tbd.base}/#/runs/${run}`);
  await eventually(async () => {
    const d = await drawn();
    return Object.keys(api.hosts).every((hst) => d[hst]?.points === api.hosts[hst].samples.length);
  }, SOON, 'the charts do not show every stored sample');
  const d = await drawn();
  for (const [hst, x] of Object.entries(api.hosts)) {
    const s = x.summary;
    assert.equal(d[hst].points, s.samples, `${hst}: points`);
    // the busiest core: the summary's, or one whose mean is the same to rounding (the
    // chart sums busy % rounded to 0.1, the summary cuts means to 0.01: a near tie may flip)
    assert.ok(d[hst].busiest === s.busiest
      || Math.abs(s.cpu[d[hst].busiest].busy_mean - s.cpu[s.busiest].busy_mean) < 0.2,
    `${hst}: the busiest core ${d[hst].busiest} against the summary's ${s.busiest} (${JSON.stringify(s.cpu)})`);
    assert.ok(Math.abs(d[hst].mean - s.cpu[s.busiest].busy_mean) < 0.2,
      `${hst}: busiest core's mean ${d[hst].mean} against the summary's ${s.cpu[s.busiest].busy_mean}`);
    assert.ok(Math.abs(d[hst].memMax - s.mem_used_max_pct) < 0.2,
      `${hst}: memory max ${d[hst].memMax} against the summary's ${s.mem_used_max_pct}`);
  }
  assert.equal(await page.locator('.run-samples-box').isVisible(), true);
  await shoot(page, 'run-samples-sampled');
  // each host's chart follows its box's width (a phone's), not the width it was drawn at
  await page.setViewportSize(PHONE);
  try {
    await eventually(() => page.evaluate(() => [...document.querySelectorAll('.run-samples .chart-samples')]
      .every((box) => box.querySelector('canvas')?.clientWidth === box.clientWidth)), 5_000,
    async () => `the samples' charts did not follow the phone's width: ${await page.evaluate(() => JSON.stringify(
      [...document.querySelectorAll('.run-samples .chart-samples')].map((b) => [b.clientWidth, b.querySelector('canvas')?.clientWidth])))}`);
  } finally {
    await page.setViewportSize(DESKTOP);
  }
});

test('with latency, the samples are drawn from iperf3\'s start (the loaded stream\'s), not the idle probe\'s', { timeout: 150_000 }, async () => {
  const { matrix, run } = await start({ ...SPEC, name: 'sampled-latency', latency: 'irtt' });
  await tbd.matrixSucceeded(matrix);
  const [{ run: r }, smp, lat] = await Promise.all([tbd.get(`/api/v1/runs/${run}`),
    tbd.get(`/api/v1/runs/${run}/samples`), tbd.get(`/api/v1/runs/${run}/latency`)]);
  const first = lat.bins.load[0];
  const loadStart = first.at_ms - first.t * 1000;
  const started = Date.parse(r.started_at);
  console.log(`# the loaded stream (iperf3) started ${((loadStart - started) / 1000).toFixed(2)} s after the run`);
  assert.ok(loadStart - started >= 1500, 'the idle probe did not run before the load: nothing to align');
  await page.goto(`${tbd.base}/#/runs/${run}`);
  const want = (hst) => api(smp, hst).map((s) => Math.round((Date.parse(s.at) - loadStart) / 100) / 10).sort((a, b) => a - b);
  await eventually(async () => {
    const d = await drawn();
    return ['left', 'right'].every((hst) => JSON.stringify([...(d[hst]?.xs ?? [])].sort((a, b) => a - b)) === JSON.stringify(want(hst)));
  }, SOON, async () => `the samples are not drawn from the loaded stream's start: ${JSON.stringify(await drawn())} against ${JSON.stringify(want('right'))}`);
  // the server's samples within 1 s of its intervals' ends, on the chart's own axis
  const xs = (await drawn()).right.xs;
  const ends = r.intervals.server.map((iv) => iv.end ?? iv.sum?.end).filter(Number.isFinite);
  assert.ok(ends.length >= 2 && ends.every((e) => xs.some((x) => Math.abs(x - e) <= 1)),
    `intervals ending at ${ends} against samples at ${xs}`);
  await shoot(page, 'run-samples-latency');
});

function api(smp, hst) { return smp.hosts[hst].samples; }

test('a run that did not sample shows no CPU/memory box', { timeout: 120_000 }, async () => {
  const { sample, ...plain } = SPEC;
  assert.ok(sample);
  const { matrix, run } = await start({ ...plain, name: 'plain' });
  await tbd.matrixSucceeded(matrix);
  assert.deepEqual((await tbd.get(`/api/v1/runs/${run}/samples`)).hosts, {});
  await page.goto(`${tbd.base}/#/runs/${run}`);
  await page.locator('.run-page[data-state="ok"] .interval-chart').waitFor();
  await page.waitForTimeout(500);   // the samples' reply has come
  assert.equal(await page.locator('.run-samples-box').isVisible(), false);
  assert.equal(await page.locator('.chart-samples').count(), 0);
  // a 401 before the login, a stream cut by a page change: the browser's own notes, not the page's errors
  assert.deepEqual(pageErrors.filter((e) => !/Failed to load resource|net::ERR_|EventSource/.test(e)), []);
});

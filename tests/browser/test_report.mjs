// The report to publish and the A/B section, in Debian's Chromium (headless,
// playwright-core), against the real testbedd and the simulated testbed
// (deploy/sim, prefix tbar, block 203): two matrices of one spec (left ->
// right, tcp and udp at 10 Mbit/s, forward, 1 s, 3 repeats), the second
// started by a schedule of the spec with the first as its pinned baseline.
//
// The second's page says under its head that the schedule started it and its
// gate's verdict against the first; "Show the comparison" fills and runs the
// A/B section with the gate's baseline.
// The matrix page: the A/B section compares with the first matrix and shows
// both medians and IQRs as the API gives them, the hosts diff beside the
// table, and links to the CSVs and the A/B report; the head's "Report: HTML"
// link downloads the report (an attachment).  That file is then opened from
// disk in a second Chromium with JavaScript disabled and the network offline:
// every table of the report and every chart (inline SVG) shows, with the
// numbers of the API, and the page asks for nothing.  Screenshots (desktop
// and phone) go to $TB_BINARY_DIR/screenshots/report-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  Bed, DESKTOP, PHONE, eventually, launchChromium, login, shotsDir, sim,
} from './lib/testbed.mjs';

const PREFIX = 'tbar';
const BLOCK = '203';
const SOON = 15_000;
const SPEC = {
  name: 'report-ab',
  pairs: [{ client: 'left', server: 'right' }],
  protocols: ['tcp', 'udp'],
  directions: ['forward'],
  duration_s: 1,
  repeats: 3,
  iperf: { bitrate: '10M', udp_bitrate: '10M' },
};
const bed = new Bed('report');
const pageErrors = bed.errors;
let tbd;
let page;
let A;
let B;
let reportFile;

before(async () => {
  tbd = await bed.startTestbedd(bed.upSim(PREFIX, BLOCK));
  await bed.hostsUp();
  page = await bed.openPage(DESKTOP, { timeout: SOON });
});

after(() => bed.close());

/** Screenshots of p at both sizes (no sideways check: the report from disk was never asked to fit a phone). */
async function shoot(p, name) {
  await p.evaluate(() => window.scrollTo(0, 0)).catch(() => {});
  await p.screenshot({ path: path.join(shotsDir(), `report-${name}-desktop.png`), fullPage: true });
  await p.setViewportSize(PHONE);
  await p.waitForTimeout(300);
  await p.screenshot({ path: path.join(shotsDir(), `report-${name}-phone.png`), fullPage: true });
  await p.setViewportSize(DESKTOP);
}

test('two matrices of one spec run on the sim, the second started by its schedule', { timeout: 300_000 }, async () => {
  A = await tbd.runMatrix(SPEC, 120_000);
  assert.equal((await tbd.call('POST', '/api/v1/specs', SPEC)).status, 201);
  const put = await tbd.call('PUT', `/api/v1/specs/${SPEC.name}/schedule`, { cron: '* * * * *', baseline: A, max_drop: 50 });
  assert.equal(put.status, 200, JSON.stringify(put.json));
  // its page opened while it runs: the gate line waits, then its matrix.gate event draws the verdict
  const started = await eventually(async () => (await tbd.call('GET', '/api/v1/schedules')).json.schedules[0].last[0],
    90_000, 'the schedule started no matrix');
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
  await page.goto(`${tbd.base}/#/matrices/${started.matrix}`);
  const line = page.locator('p.mx-gate');
  await line.waitFor();
  assert.equal(await line.getAttribute('data-verdict'), 'pending', 'the page opened after the gate was judged');
  assert.match(await line.textContent(), /the gate is judged when it ends\.$/);
  await page.locator('p.mx-gate:not([data-verdict="pending"])').waitFor({ timeout: 60_000 });
  const g = await eventually(async () => (await tbd.call('GET', '/api/v1/schedules')).json.schedules[0].last.find((x) => x.verdict),
    150_000, 'the schedule started and judged no matrix');
  assert.equal(g.state, 'succeeded');
  assert.equal(g.baseline, A);
  assert.equal(g.matrix, started.matrix);
  assert.equal(await line.getAttribute('data-verdict'), g.verdict, 'the event drew the stored verdict');
  B = g.matrix;
  assert.equal((await tbd.call('DELETE', `/api/v1/specs/${SPEC.name}/schedule`)).status, 204);
});

test('the A/B section: both medians and IQRs as the API gives them, the hosts diff beside, CSV and report links', { timeout: 60_000 }, async () => {
  pageErrors.length = 0;   // logged in in the test before; the login page's whoami before it is a 401
  await page.goto(`${tbd.base}/#/matrices/${B}`);
  const section = page.locator('section.mx-compare');
  await section.waitFor();
  // started by the schedule: its gate under the head, and the comparison it was judged by one click away
  const gate = (await tbd.get(`/api/v1/matrices/${B}/gate`)).gate;
  const line = page.locator('p.mx-gate');
  await line.waitFor();
  assert.equal(await line.getAttribute('data-verdict'), gate.verdict);
  assert.match(await line.textContent(), new RegExp(`^ Started by the schedule of report-ab \\(version 1\\): ${gate.verdict === 'pass'
    ? 'passed' : 'failed'} the gate against matrix ${A} \\(receiver_bps, drop ≤ 50 %\\): `));
  await line.getByRole('button', { name: 'Show the comparison' }).click();
  await section.locator('table.cmp-table tbody tr').first().waitFor();
  assert.equal(await page.getByLabel('Baseline matrix').inputValue(), String(A));
  assert.equal(await page.getByLabel('Largest drop allowed (%)').inputValue(), '50');
  assert.match(await section.locator('.cmp-verdict').innerText(), new RegExp(`^${gate.verdict === 'pass' ? 'Pass' : 'Fail'}: `));
  assert.deepEqual(await page.locator('#cmp-metric option').evaluateAll((os) => os.map((o) => o.value)),
    ['receiver_bps', 'sender_bps', 'lost_percent', 'retransmits', 'jitter_ms']);
  await page.getByLabel('Baseline matrix').fill(String(A));
  await page.getByLabel('Largest drop allowed (%)').fill('50');
  await section.getByRole('button', { name: 'Compare', exact: true }).click();
  await section.locator('table.cmp-table tbody tr').first().waitFor();
  const api = (await tbd.get(`/api/v1/matrices/${B}/compare?baseline=${A}&max_drop=50`)).compare;
  const shown = await section.locator('table.cmp-table tbody tr').evaluateAll((trs) => trs.map((tr) => ({
    verdict: tr.dataset.verdict,
    overlap: tr.dataset.overlap,
    medians: [...tr.querySelectorAll('td.num .cmp-median span[title]')].map((x) => x.title),
    iqrs: [...tr.querySelectorAll('td .cmp-iqr-cell span[title]')].map((x) => x.title),
  })));
  const bits = (v) => `${Math.round(v)} bit/s`;
  assert.deepEqual(shown, api.cells.map((c) => ({
    verdict: c.verdict,
    overlap: String(c.overlap),
    medians: [c.baseline_median, c.median].map(bits),
    iqrs: [c.baseline_q1, c.baseline_q3, c.q1, c.q3].map(bits),
  })));
  assert.match(await section.locator('.cmp-verdict').innerText(), /beyond the spread/);
  const diff = section.locator('.cmp-diff');
  await diff.waitFor();
  const diffApi = (await tbd.get(`/api/v1/matrices/${B}/hosts/diff?other=${A}`)).diff;
  const nDiff = diffApi.hosts.reduce((n, h) => n + (h.in === 'both' ? h.differences.length : 1), 0);
  assert.equal(await diff.locator('tbody tr').count(), nDiff);
  assert.match(await diff.locator('.cmp-diff-note').innerText(),
    nDiff === 0 ? new RegExp(`Nothing changed on the hosts since matrix ${A}`) : /difference/);
  // beside the table on a desktop: the two boxes share a row
  const [t, d] = await Promise.all([section.locator('.cmp-main').boundingBox(), diff.boundingBox()]);
  assert.ok(d.x > t.x && Math.abs(d.y - t.y) < 40, `the hosts diff is beside the table: ${JSON.stringify([t, d])}`);
  // and the whole table shows beside it, the change and verdict columns too, without a sideways scroll
  assert.ok(await section.locator('.cmp-main').evaluate((w) => w.scrollWidth <= w.clientWidth + 1),
    'the comparison table needs a sideways scroll beside the hosts diff');
  assert.equal(await section.locator('a.cmp-csv').getAttribute('href'),
    `api/v1/matrices/${B}/compare?baseline=${A}&max_drop=50&metric=receiver_bps&format=csv`);
  assert.equal(await section.locator('a.cmp-report').getAttribute('href'), `api/v1/matrices/${B}/report?baseline=${A}`);
  await section.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shotsDir(), 'report-ab-section-desktop.png'), fullPage: true });

  // the head's Report link downloads the report as an attachment
  const link = page.locator('a.mx-report-html');
  assert.equal(await link.getAttribute('href'), `api/v1/matrices/${B}/report`);
  const [dl] = await Promise.all([page.waitForEvent('download'), link.click()]);
  assert.equal(dl.suggestedFilename(), `matrix-${B}-report.html`);
  reportFile = path.join(bed.root, 'report.html');
  await dl.saveAs(reportFile);
  assert.deepEqual(pageErrors, []);
});

test('the report opens from disk, offline and without JavaScript: every table and chart shows', { timeout: 60_000 }, async () => {
  assert.ok(reportFile && existsSync(reportFile), 'the report was downloaded');
  const html = readFileSync(reportFile, 'utf8');
  assert.ok(!/<script/i.test(html), 'the report has no script');
  // the A/B report too, saved beside it (from the API as tbctl gets it)
  const ab = await (await fetch(`${tbd.base}/api/v1/matrices/${B}/report?baseline=${A}`,
    { headers: { Authorization: `Bearer ${tbd.adminToken}` } })).text();
  const abFile = path.join(bed.root, 'report-ab.html');
  writeFileSync(abFile, ab);

  const ctx = await launchChromium(path.join(bed.root, 'chromium-nojs'), DESKTOP, { javaScriptEnabled: false, offline: true });
  try {
    const p = ctx.pages()[0] ?? await ctx.newPage();
    const requests = [];
    p.on('request', (r) => requests.push(r.url()));
    const results = (await tbd.get(`/api/v1/matrices/${B}/results`)).cells;
    for (const [file, tables, charts] of [
      [reportFile, ['summary', 'cells', 'hosts', 'commands'], ['chart-receiver_bps', 'chart-lost_percent']],
      [abFile, ['summary', 'cells', 'ab', 'hosts-diff', 'hosts', 'commands'], ['chart-receiver_bps', 'chart-lost_percent', 'chart-ab']],
    ]) {
      await p.goto(`file://${file}`);
      assert.equal(await p.evaluate(() => 1).catch(() => 'no js'), 1, 'evaluate runs in the utility world');
      assert.deepEqual(await p.locator('table').evaluateAll((ts) => ts.map((t) => t.id)), tables);
      for (const id of tables) {
        const box = await p.locator(`table#${id}`).boundingBox();
        assert.ok(box && box.width > 0 && box.height > 0, `table ${id} shows`);
        assert.ok(await p.locator(`table#${id} tbody tr`).count() > 0 || id === 'hosts-diff', `table ${id} has rows`);
      }
      assert.deepEqual(await p.locator('svg.chart').evaluateAll((s) => s.map((x) => x.getAttribute('aria-labelledby'))), charts);
      for (const id of charts) {
        const svg = p.locator(`svg[aria-labelledby="${id}"]`);
        const box = await svg.boundingBox();
        assert.ok(box && box.width > 300 && box.height > 60, `chart ${id} shows: ${JSON.stringify(box)}`);
        // the background and a box per cell drawn (a loss of 0 is a box 1 px wide)
        assert.ok(await svg.locator('rect').count() >= 2, `chart ${id} draws boxes`);
      }
      // the cells table says what the API says
      const rows = await p.locator('table#cells tbody tr').evaluateAll((trs) => trs.map((tr) => tr.cells[0].textContent));
      assert.deepEqual(rows, results.map((c) => String(c.cell)));
      // a dot per run in the bitrate chart
      assert.equal(await p.locator('svg[aria-labelledby="chart-receiver_bps"] circle').count(),
        results.reduce((n, c) => n + (c.receiver_bps?.values?.length ?? 0), 0));
      await shoot(p, file === reportFile ? 'html' : 'ab-html');
    }
    assert.deepEqual(requests.filter((u) => !u.startsWith('file://')), [], 'the report asked for nothing');
  } finally {
    await ctx.close();
  }
});

// What changed, when it is the link: a rate profile put on the router (sim link, the
// same pipe its ipfw stand-in shows) between B and C is a "link shaping" row in ipfw's words
test('a rate put on the router between two matrices shows as link shaping in what changed', { timeout: 180_000 }, async () => {
  sim('link', '--prefix', PREFIX, '--dir', bed.simDir, '--rate', '50mbit');
  try {
    const C = await tbd.runMatrix(SPEC, 120_000);
    await page.goto(`${tbd.base}/#/matrices/${C}`);
    const section = page.locator('section.mx-compare');
    await page.getByLabel('Baseline matrix').fill(String(B));
    await section.getByRole('button', { name: 'Compare', exact: true }).click();
    const row = section.locator('.cmp-diff tbody tr[data-kind="link shaping"]');
    await eventually(async () => (await row.count()) === 1, SOON, 'no link shaping row in what changed');
    assert.equal(await row.locator('td').first().innerText(), 'router@freebsd\nlink shaping');
    assert.equal(await row.locator('td code').innerText(), 'shaping.pipes.1');
    assert.equal(await row.locator('.cmp-diff-was').innerText(), '—', 'the baseline had no pipe');
    assert.match(await row.locator('.cmp-diff-now').innerText(), /^bw 50\.0 Mbit\/s, plr 0 \(0 %\), delay 0 ms/);
    await section.locator('.cmp-side').screenshot({ path: path.join(shotsDir(), 'report-link-shaping-desktop.png') });
    // beside the comparison, the whole diff shows without a sideways scroll
    assert.ok(await section.locator('.cmp-diff .table-wrap').evaluate((w) => w.scrollWidth <= w.clientWidth + 1),
      'the hosts diff needs a sideways scroll');
  } finally {
    sim('link', '--prefix', PREFIX, '--dir', bed.simDir, '--rate', 'none');
  }
  assert.deepEqual(pageErrors, []);
});

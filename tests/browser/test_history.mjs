// Views II in Debian's Chromium (headless, driven by playwright-core),
// against the real testbedd and the simulated testbed (deploy/sim).
//
// The sim runs under prefix tbhi, block 204 (198.18.204.0/24).  Three tiny
// matrices of the same spec (left -> right, tcp forward, 1 s, 2 repeats)
// and a fourth of another name: GET /matrices filters them by name, state
// and time and pages them; the history of their cell
// (GET /matrices/{id}/cells/0/history) has a point per matrix with the
// medians of each one's results, and its page shows them in a chart and a
// table whose "grid as of" links open each matrix with the cell marked; a
// run's page opened directly by its URL shows the commands and raw output
// the API gives; the downloads (CSV and JSON of the tables, PNG and SVG of
// the charts) are files of that content.  Screenshots (1280x800 and a
// 390x844 phone) go to $TB_BINARY_DIR/screenshots/history-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Bed, eventually, login, shoot } from './lib/testbed.mjs';

const PREFIX = 'tbhi';
const BLOCK = '204';
const SOON = 15_000;
const SPEC = {
  name: 'hist-nightly',
  pairs: [{ client: 'left', server: 'right' }],
  protocols: ['tcp'],
  directions: ['forward'],
  duration_s: 1,
  repeats: 2,
};
const bed = new Bed('history');
const pageErrors = bed.errors;
let tbd;
let page;
const ids = [];          // the three matrices of SPEC, oldest first
let other;               // a matrix of another name

before(async () => {
  tbd = await bed.startTestbedd(bed.upSim(PREFIX, BLOCK));
  await bed.hostsUp();
  page = await bed.openPage();
});

after(() => bed.close());

/** Click what locator finds and read the file it downloads: {name, text, bytes}. */
async function downloaded(locator) {
  const [dl] = await Promise.all([page.waitForEvent('download'), locator.click()]);
  const file = path.join(bed.root, `dl-${Date.now()}-${dl.suggestedFilename()}`);
  await dl.saveAs(file);
  const bytes = readFileSync(file);
  return { name: dl.suggestedFilename(), bytes, text: bytes.toString('utf8') };
}

test('three matrices of one spec and one of another name run', { timeout: 300_000 }, async () => {
  for (let i = 0; i < 3; i++) ids.push(await tbd.runMatrix(SPEC));
  other = await tbd.runMatrix({ ...SPEC, name: 'adhoc' });
});

test('GET /matrices filters by name, state and time, and pages', { timeout: 30_000 }, async () => {
  const list = async (q) => tbd.get(`/api/v1/matrices?${q}`);
  let r = await list('name=nightly');
  assert.deepEqual(r.matrices.map((m) => m.id), [...ids].reverse());
  assert.equal(r.total, 3);
  r = await list('state=succeeded&limit=2');
  assert.deepEqual(r.matrices.map((m) => m.id), [other, ids[2]]);
  assert.equal(r.total, 4);
  r = await list('limit=2&offset=2');
  assert.deepEqual(r.matrices.map((m) => m.id), [ids[1], ids[0]]);
  assert.equal((await list('state=failed')).total, 0);
  assert.equal((await list('since=2999-01-01T00:00:00Z')).total, 0);
  assert.equal((await list('since=2000-01-01T00:00:00Z')).total, 4);
  const bad = await fetch(`${tbd.base}/api/v1/matrices?state=done`, { headers: { Authorization: `Bearer ${tbd.adminToken}` } });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.field, 'state');
});

test('the history of the cell has a point per matrix, as their results say', { timeout: 60_000 }, async () => {
  const { history } = await tbd.get(`/api/v1/matrices/${ids[2]}/cells/0/history`);
  assert.deepEqual(history.points.map((p) => p.matrix), [...ids, other], 'every matrix with the cell, oldest first');
  for (const p of history.points) {
    const { cells } = await tbd.get(`/api/v1/matrices/${p.matrix}/results`);
    assert.equal(p.n, 2);
    assert.equal(p.stats.median, cells[p.cell].receiver_bps.median);
    assert.equal(p.stats.min, cells[p.cell].receiver_bps.min);
    assert.equal(p.stats.max, cells[p.cell].receiver_bps.max);
  }
  const named = (await tbd.get(`/api/v1/matrices/${ids[2]}/cells/0/history?name=nightly&metric=sender_bps`)).history;
  assert.deepEqual(named.points.map((p) => p.matrix), ids, 'a history per spec: by name');
});

test('the history page: a chart and a table, linked to each matrix\'s grid', { timeout: 90_000 }, async () => {
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);

  await page.goto(`${tbd.base}/#/matrices/${ids[2]}/cells/0/history?same_name=1`);
  const rows = page.locator('.history-table tbody tr');
  await eventually(async () => (await rows.count()) === 3, SOON, 'the history table does not show the 3 matrices named alike');
  const { history } = await tbd.get(`/api/v1/matrices/${ids[2]}/cells/0/history?name=hist-nightly`);
  assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.dataset.matrix))), ids);
  const medians = await rows.locator('td.median').allTextContents();
  for (const [i, p] of history.points.entries()) {
    const m = /^(\d+(?:\.\d+)?) ([kMGT]?)bit\/s$/.exec(medians[i]);
    assert.ok(m, `row ${i} shows a bitrate (${medians[i]})`);
    const shown = Number(m[1]) * { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2]];
    assert.ok(Math.abs(shown - p.stats.median) / p.stats.median < 0.01, `row ${i}: ${medians[i]} is the median ${p.stats.median}`);
  }
  const chart = page.locator('.chart-history');
  await eventually(async () => (await chart.getAttribute('data-points')) === '3', SOON, 'the chart does not draw 3 matrices');
  assert.ok(await chart.locator('canvas').count() >= 1, 'the chart is drawn on a canvas');
  assert.deepEqual(await rows.locator('a.grid-as-of').evaluateAll((as) => as.map((a) => a.getAttribute('href'))),
    ids.map((id) => `#/matrices/${id}?cell=0`));
  await shoot(page, 'history-page');

  // all matrices with the cell, then one "grid as of" link: that matrix's page with the cell marked
  await page.locator('input[name="same_name"]').uncheck();
  await eventually(async () => (await rows.count()) === 4, SOON, 'without the name filter the 4 matrices show');
  assert.ok(page.url().endsWith(`#/matrices/${ids[2]}/cells/0/history`), page.url());
  await rows.nth(0).locator('a.grid-as-of').click();
  const focus = page.locator('.mx-cell-focus[data-cell="0"]');
  await focus.waitFor();
  await page.locator('.grid-cell.cell-focus[data-cell="0"]').waitFor();
  assert.ok(page.url().endsWith(`#/matrices/${ids[0]}?cell=0`), page.url());
  assert.equal(await focus.locator('ul.cell-runs li').count(), 2, 'the cell\'s 2 runs are listed');
  assert.equal(await focus.locator('a.cell-history').getAttribute('href'), `#/matrices/${ids[0]}/cells/0/history`);
  await shoot(page, 'history-cell');
});

test('a run\'s page opened by its URL shows the commands and the raw output', { timeout: 60_000 }, async () => {
  const { matrix } = await tbd.get(`/api/v1/matrices/${ids[1]}`);
  const runId = matrix.runs[1].id;
  const { run } = await tbd.get(`/api/v1/runs/${runId}`);
  await page.goto(`${tbd.base}/#/runs/${runId}`);
  await page.reload();     // opened cold, as a link from elsewhere would
  const runPage = page.locator(`.run-page[data-run="${runId}"]`);
  await runPage.locator('code.client-command').waitFor();
  assert.equal(await runPage.locator('code.client-command').textContent(), run.client_command);
  assert.equal(await runPage.locator('code.server-command').textContent(), run.server_command);
  assert.match(await runPage.innerText(), new RegExp(`client ${run.client_version.replace(/\./g, '\\.')}`));
  assert.equal(await page.locator('#nav a[aria-current="page"]').innerText(), 'Matrices');
  assert.equal(await runPage.locator('a.crumb-cell').getAttribute('href'), `#/matrices/${ids[1]}?cell=${run.cell}`);
  for (const side of ['client', 'server']) {
    const res = await fetch(`${tbd.base}/api/v1/runs/${runId}/raw?side=${side}&stream=stdout`,
      { headers: { Authorization: `Bearer ${tbd.adminToken}` } });
    const want = await res.text();
    const d = runPage.locator(`details.raw-output[data-side="${side}"][data-stream="stdout"]`);
    await d.locator('summary').click();
    await eventually(async () => (await d.getAttribute('data-loaded')) === 'ok', SOON, `the ${side} stdout did not load`);
    assert.ok(want.length > 0, `the API has the ${side}'s output`);
    assert.equal(await d.locator('pre').textContent(), want);
  }
  await eventually(async () => Number(await runPage.locator('.interval-chart').getAttribute('data-drawn')) > 0, SOON,
    'the run\'s intervals are not charted');
  await shoot(page, 'history-run');

  // the chart's downloads: a PNG and an SVG of both panels
  const png = await downloaded(runPage.locator('.interval-chart button.export-png'));
  assert.equal(png.name, `run-${runId}-intervals.png`);
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  const width = png.bytes.readUInt32BE(16);
  const height = png.bytes.readUInt32BE(20);
  assert.ok(width > 400 && height > 600, `both panels at twice their size (${width}x${height})`);
  const svg = await downloaded(runPage.locator('.interval-chart button.export-svg'));
  assert.equal(svg.name, `run-${runId}-intervals.svg`);
  assert.match(svg.text, /^<\?xml[^>]*>\n<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.equal((svg.text.match(/<svg\b/g) ?? []).length, 3, 'the document and its 2 panels');
  assert.match(svg.text, /bitrate \(Gbit\/s\)/, 'the bitrate panel\'s title is text in the SVG');
  assert.doesNotMatch(svg.text, /<script/i);
});

test('the downloads of the tables are CSV and JSON of what they show', { timeout: 60_000 }, async () => {
  await page.goto(`${tbd.base}/#/matrices/${ids[2]}/cells/0/history`);
  const rows = page.locator('.history-table tbody tr');
  await eventually(async () => (await rows.count()) === 4, SOON, 'the history table does not show 4 matrices');
  const { history } = await tbd.get(`/api/v1/matrices/${ids[2]}/cells/0/history`);
  const bar = page.locator('.history-points .export-bar');
  const csv = await downloaded(bar.locator('button.export-csv'));
  assert.equal(csv.name, `matrix-${ids[2]}-cell-0-history-receiver_bps.csv`);
  const lines = csv.text.trimEnd().split('\r\n');
  assert.equal(lines.length, 5, 'a header and 4 matrices');
  const head = lines[0].split(',');
  const col = (k) => head.indexOf(k);
  for (const [i, p] of history.points.entries()) {
    const f = lines[i + 1].split(',');
    assert.equal(Number(f[col('matrix')]), p.matrix);
    assert.equal(Number(f[col('median')]), p.stats.median);
    assert.equal(Number(f[col('n')]), 2);
  }
  const json = JSON.parse((await downloaded(bar.locator('button.export-json'))).text);
  assert.deepEqual(json.map((r) => [r.matrix, r.median, r.min, r.max]),
    history.points.map((p) => [p.matrix, p.stats.median, p.stats.min, p.stats.max]));
  const chartSvg = await downloaded(page.locator('.history-chart button.export-svg'));
  assert.match(chartSvg.text, /<svg\b/);
  assert.match(chartSvg.text, new RegExp(`#${ids[0]}`), 'the matrices are named on the axis');

  // the list of matrices, filtered in the page, and its downloads
  await page.goto(`${tbd.base}/#/matrices`);
  await page.locator('.mx-list tbody tr').first().waitFor();
  await page.locator('.mx-filters input[name="name"]').fill('nightly');
  await page.locator('.mx-filters button[type="submit"]').click();
  await eventually(async () => (await page.locator('.mx-list tbody tr').count()) === 3, SOON, 'the name filter leaves 3 matrices');
  assert.ok(page.url().endsWith('#/matrices?name=nightly'), page.url());
  const list = JSON.parse((await downloaded(page.locator('.export-bar button.export-json'))).text);
  assert.deepEqual(list.map((m) => m.id), [...ids].reverse());
  const listCsv = await downloaded(page.locator('.export-bar button.export-csv'));
  assert.equal(listCsv.text.trimEnd().split('\r\n').length, 4);
  await shoot(page, 'history-list');

  // the matrix page's tables: the per-cell summary as shown, the runs as testbedd gives them
  await page.goto(`${tbd.base}/#/matrices/${ids[0]}`);
  await page.locator('.cells-table tbody tr').first().waitFor();
  const cells = JSON.parse((await downloaded(page.locator('.mx-cells .export-bar button.export-json'))).text);
  assert.equal(cells.length, 1);
  assert.equal(cells[0].cell, '0');
  assert.equal(await page.locator('a.json-results').getAttribute('href'), `api/v1/matrices/${ids[0]}/results`);
  // a 401 before the login, a stream cut by a page change: the browser's own notes, not the page's errors
  assert.deepEqual(pageErrors.filter((e) => !/Failed to load resource|net::ERR_|EventSource/.test(e)), []);
});

// The spread per cell and the OS side-by-side page in Debian's Chromium
// (headless, playwright-core), against the real testbedd and the simulated
// testbed (deploy/sim: real sshd personas and iperf3 in network namespaces;
// the sim boots a host into its other persona as tests/sim/test_matrix_os.sh
// shows).
//
// The sim runs under prefix tbos, block 205 (198.18.205.0/24; 200 is the demo's).  One small
// OS-combination matrix: left -> right, TCP and UDP (unlimited), forward,
// 1 s, 3 repeats (the least the U test takes), under ubuntu/ubuntu and
// freebsd/freebsd.  Then: the matrix page links "OS side by side"; its grid
// marks exactly the cells the API calls noisy; its cells table shows each
// cell's cv as the API gives it and a box plot per cell with a dot per run;
// the OS page (#/os/ID?a=ubuntu/ubuntu&b=freebsd/freebsd) shows per row the
// medians, difference, IQR overlap, U test p-value, verdict and sender
// against receiver exactly as GET /api/v1/matrices/{id}/os gives them (the
// numbers read from the page and compared with the API's), with a drawn box
// plot per row; changing A and B in the form asks the API again (the address
// keeps them); a pair the matrix lacks shows the API's refusal.  Screenshots
// (1280x800 and a 390x844 phone, the OS page dark too) go to
// $TB_BINARY_DIR/screenshots/views-os-*.png; no page is wider than the phone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Bed, eventually, login, shoot } from './lib/testbed.mjs';

const PREFIX = 'tbos';
const BLOCK = '205';
const SOON = 15_000;
const SPEC = {
  name: 'os-views',
  pairs: [{ client: 'left', server: 'right' }],
  protocols: ['tcp', 'udp'],
  directions: ['forward'],
  duration_s: 1,
  repeats: 3,
  iperf: { udp_bitrate: '0' },
  os: [{ left: 'ubuntu', right: 'ubuntu' }, { left: 'freebsd', right: 'freebsd' }],
};
const bed = new Bed('views-os');
const pageErrors = bed.errors;
let tbd;
let page;
let matrixId;

before(async () => {
  tbd = await bed.startTestbedd(bed.upSim(PREFIX, BLOCK), ['--probe-interval', '2']);
  await bed.hostsUp();
  page = await bed.openPage();
});

after(() => bed.close());

/** Every box plot of the page scrolled into view (they draw when seen), then all drawn. */
async function boxesDrawn(selector, n) {
  const boxes = page.locator(selector);
  await eventually(async () => (await boxes.count()) === n, SOON, `${n} box plots (${selector})`);
  for (let i = 0; i < n; i++) await boxes.nth(i).scrollIntoViewIfNeeded();
  await eventually(async () => (await page.locator(`${selector}[data-drawn="1"]`).count()) === n, SOON,
    `all ${n} box plots drawn (${selector}): is the chart library installed (deploy/setup)?`);
}

/** "3.11 Gbit/s" -> 3.11e9 */
function bits(text) {
  const m = /(\d+(?:\.\d+)?) ([kMGT]?)bit\/s/.exec(text);
  assert.ok(m, `a bitrate in "${text}"`);
  return Number(m[1]) * { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2]];
}

const near = (shown, want, what) => assert.ok(Math.abs(shown - want) <= Math.abs(want) * 0.01 + 1e-9,
  `${what}: the page shows ${shown}, the API says ${want}`);

const signed = (v) => (typeof v !== 'number' ? '—' : `${v > 0 ? '+' : v < 0 ? '−' : '±'}${Math.abs(v).toFixed(1)} %`);
const pText = (p) => (typeof p !== 'number' ? '—' : p < 0.001 ? '<0.001' : p.toFixed(3));

test('an OS-combination matrix of 3 repeats runs on the sim', { timeout: 300_000 }, async () => {
  const res = await tbd.post('/api/v1/matrices', SPEC);
  matrixId = res.matrix.id;
  await tbd.matrixSucceeded(matrixId, 280_000);
});

test('the matrix page: the OS link, noisy cells marked in the grid, cv and a box plot per cell', { timeout: 90_000 }, async () => {
  assert.ok(matrixId, 'the matrix ran');
  const results = await tbd.get(`/api/v1/matrices/${matrixId}/results`);
  const cells = results.cells.filter(Boolean);
  assert.equal(cells.length, 4, '2 protocols x 2 OS combinations');
  for (const c of cells) {
    assert.equal(c.receiver_bps.values.length, 3, `cell ${c.cell}: every value`);
    assert.equal(typeof c.receiver_bps.q1, 'number');
    assert.equal(c.receiver_bps.noisy, c.receiver_bps.cv > 0.05, `cell ${c.cell}: noisy is cv > 5 %`);
  }
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
  await page.goto(`${tbd.base}/#/matrices/${matrixId}`);
  const grid = page.locator('.mx-grid');
  await eventually(async () => (await grid.locator('.grid-cell[data-state="ok"]').count()) === 4, SOON, 'the grid shows 4 ok cells');
  for (const c of cells) {
    assert.equal(await grid.locator(`.grid-cell[data-cell="${c.cell}"]`).getAttribute('data-noisy'),
      c.receiver_bps.noisy ? '1' : '0', `grid cell ${c.cell} marked noisy as the API says`);
  }
  const rows = page.locator('.cells-table tbody tr');
  await eventually(async () => (await rows.count()) === 4, SOON, 'the cells table shows 4 cells');
  for (const c of cells) {
    const td = page.locator(`.cells-table tbody tr[data-cell="${c.cell}"] td.cv`);
    assert.equal((await td.textContent()).replace(' noisy', ''), `${(c.receiver_bps.cv * 100).toFixed(1)} %`, `cell ${c.cell}'s cv`);
    assert.equal(await td.getAttribute('data-noisy'), c.receiver_bps.noisy ? '1' : '0');
  }
  await boxesDrawn('.cells-table .boxplot', 4);
  assert.deepEqual(await page.locator('.cells-table .boxplot').evaluateAll((els) => els.map((e) => e.dataset.points)),
    cells.map((c) => String(c.sender_bps.values.length + c.receiver_bps.values.length)), 'a dot per run, sender and receiver');
  await shoot(page, 'views-os-matrix');
  await page.locator('a.os-link', { hasText: 'OS side by side' }).click();
  await page.locator('h1', { hasText: 'OS side by side' }).waitFor();
  assert.match(page.url(), new RegExp(`#/os/${matrixId}$`));
});

test('the OS page shows the API\'s numbers; A and B are chosen in the form and kept in the address', { timeout: 90_000 }, async () => {
  assert.ok(matrixId, 'the matrix ran');
  // default: the first two pairs by name
  await page.locator('.os-table tbody tr').first().waitFor();
  assert.equal(await page.locator('select[name="a"]').inputValue(), 'freebsd/freebsd');
  assert.equal(await page.locator('select[name="b"]').inputValue(), 'ubuntu/ubuntu');
  await page.locator('select[name="a"]').selectOption('ubuntu/ubuntu');
  await page.locator('select[name="b"]').selectOption('freebsd/freebsd');
  await eventually(async () => page.url().includes('a=ubuntu%2Fubuntu') && page.url().includes('b=freebsd%2Ffreebsd'), SOON,
    'the address keeps A and B');
  const { os } = await tbd.get(`/api/v1/matrices/${matrixId}/os?a=ubuntu/ubuntu&b=freebsd/freebsd`);
  assert.equal(os.rows.length, 2, 'TCP and UDP forward');
  await eventually(async () => (await page.locator('.os-table thead th').nth(1).textContent()) === 'A: ubuntu/ubuntu', SOON,
    'the table is drawn for A = ubuntu/ubuntu');
  const shown = await page.locator('.os-table tbody tr').evaluateAll((trs) => trs.map((tr) => ({
    protocol: tr.dataset.protocol, direction: tr.dataset.direction, verdict: tr.dataset.verdict,
    a: tr.querySelector('.a-median .median')?.textContent, b: tr.querySelector('.b-median .median')?.textContent,
    aCell: tr.querySelector('.a-median')?.dataset.cell, bCell: tr.querySelector('.b-median')?.dataset.cell,
    diff: tr.querySelector('.diff').textContent, overlap: tr.querySelector('.overlap').textContent,
    p: tr.querySelector('.pvalue').textContent, aSr: tr.querySelector('.a-sr').textContent,
    bSr: tr.querySelector('.b-sr').textContent, aLoss: tr.querySelector('.a-sr').dataset.loss,
    bLoss: tr.querySelector('.b-sr').dataset.loss,
  })));
  assert.equal(shown.length, os.rows.length);
  os.rows.forEach((r, i) => {
    const s = shown[i];
    const what = `${r.protocol} ${r.direction}`;
    assert.equal(s.protocol, r.protocol);
    assert.equal(s.direction, r.direction);
    assert.equal(s.verdict, r.verdict, `${what}: verdict`);
    assert.equal(s.aCell, String(r.a.cell));
    assert.equal(s.bCell, String(r.b.cell));
    near(bits(s.a), r.a.stats.median, `${what}: A's median`);
    near(bits(s.b), r.b.stats.median, `${what}: B's median`);
    assert.equal(s.diff, signed(r.diff_percent), `${what}: B against A`);
    assert.equal(s.overlap, r.iqr_overlap ? 'overlap' : 'apart', `${what}: IQRs`);
    assert.ok(r.mann_whitney, `${what}: 3 runs a side give a U test`);
    assert.equal(s.p, `${pText(r.mann_whitney.p)} ${r.mann_whitney.method}`, `${what}: U test p`);
    const [aTx, aRx] = s.aSr.split('→');
    near(bits(aTx), r.a.sender_bps.median, `${what}: A sent`);
    near(bits(aRx), r.a.receiver_bps.median, `${what}: A received`);
    const [bTx, bRx] = s.bSr.split('→');
    near(bits(bTx), r.b.sender_bps.median, `${what}: B sent`);
    near(bits(bRx), r.b.receiver_bps.median, `${what}: B received`);
    assert.equal(s.aLoss, r.a.loss ? '1' : '0', `${what}: A's loss flag`);
    assert.equal(s.bLoss, r.b.loss ? '1' : '0', `${what}: B's loss flag`);
    assert.equal(r.a.loss, r.a.gap_percent > 5, `${what}: loss is a gap over 5 %`);
  });
  console.log('# OS rows:', JSON.stringify(os.rows.map((r) => [r.protocol, r.a.stats.median, r.b.stats.median,
    r.diff_percent, r.iqr_overlap, r.mann_whitney?.p, r.verdict, r.a.gap_percent, r.b.gap_percent])));
  await boxesDrawn('.os-table .boxplot', 2);
  assert.match(await page.locator('.os-method').textContent(), /Mann-Whitney/);
  await shoot(page, 'views-os-page', { dark: true });

  // another metric: the address keeps it, the API is asked again
  await page.locator('select[name="metric"]').selectOption('sender_bps');
  await eventually(async () => page.url().includes('metric=sender_bps'), SOON, 'the address keeps the metric');
  const { os: tx } = await tbd.get(`/api/v1/matrices/${matrixId}/os?a=ubuntu/ubuntu&b=freebsd/freebsd&metric=sender_bps`);
  await eventually(async () => (await page.locator('.os-table tbody tr .diff').allTextContents()).join('|')
    === tx.rows.map((r) => signed(r.diff_percent)).join('|'), SOON, 'the sender\'s differences as the API gives them');

  // a pair the matrix lacks: the API's refusal on the page
  await page.goto(`${tbd.base}/#/os/${matrixId}?a=windows/windows`);
  await page.locator('.os-page .alert', { hasText: 'no cell of this matrix ran under windows/windows' }).waitFor();
  // refused requests (the 401 before login, the 400 just above) are the console's, not the scripts'
  assert.deepEqual(pageErrors.filter((e) => !/Failed to load resource|net::ERR_|EventSource/.test(e)), [],
    'no script error on the pages');
});

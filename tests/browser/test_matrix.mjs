// The Matrices pages in Debian's Chromium (headless, driven by
// playwright-core), against the real testbedd and the simulated testbed
// (deploy/sim: real sshd personas and iperf3 in network namespaces).
//
// The sim runs under prefix tbwm, block 232 (198.18.232.0/24).  The cases
// run in order on one page: "Matrices" is in the navigation and New matrix
// comes prefilled with deploy/examples/baseline.json (its pair made of the
// inventory's machines of role host); a small spec (left -> right, tcp,
// forward + reverse, 2 s, 1 repeat) plans to a table of 2 runs; a bad spec
// shows the field and message the API gives; Start opens the matrix's page,
// whose live bitrate text changes while a run is in progress (before that
// run's row says ok), whose runs table ends with 2 ok rows and whose cells
// table has the 2 cells; a click on a grid square shows that cell (its
// permalink #/matrices/ID?cell=N, marked, with its runs) and its latest run's
// page charts the intervals; a run's page (#/runs/ID) shows the client and
// server commands exactly as GET /api/v1/runs/{id} gives them, with the raw
// output; the CSV link downloads the table; the list shows the matrix;
// Rerun opens a new matrix of the same spec, Cancel stops it mid-run and
// Resume completes it; comparing the rerun with the first matrix shows each
// cell's medians and verdict and the CI commands; a viewer may plan but sees Start and Rerun disabled,
// saying why; a late viewer of two disjoint pairs running at once gets a live chart per run,
// with the intervals so far and then the live tail.
// Screenshots of every page (1280x800 and a 390x844 phone, some dark) go to
// $TB_BINARY_DIR/screenshots/matrix-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  Bed, eventually, login as logIn, shoot as shootPage, sourceDir,
} from './lib/testbed.mjs';

const PREFIX = 'tbwm';
const BLOCK = '232';
const SOON = 15_000;
const SMALL = {
  name: 'small',
  pairs: [{ client: 'left', server: 'right' }],
  protocols: ['tcp'],
  directions: ['forward', 'reverse'],
  duration_s: 2,
  repeats: 1,
};
const BAD = { name: 'bad', pairs: [{ client: 'left', server: 'nosuch' }] };
const bed = new Bed('matrix');
const pageErrors = bed.errors;
let tbd;
let page;
let viewerSecret;
let matrixId;
let rerunId;      // the rerun of matrixId (canceled, then resumed to the end)

before(async () => {
  const simInventory = bed.upSim(PREFIX, BLOCK);
  // a second pair for the rounds: the router and the relay, over the management network
  const inventory = simInventory
    .replace('        ifname: {freebsd: ix1}\n', `        ifname: {freebsd: ix1}\n      mgmt:\n        address: 198.18.${BLOCK}.50/24\n`)
    .replace('  relay:\n    role: relay\n', `  relay:\n    role: relay\n    links:\n      mgmt:\n        address: 198.18.${BLOCK}.2/24\n`)
    // right's data link has a rate: the grid shades against it
    .replace('      lan20:\n        address: 198.19.20.2/24\n', '      lan20:\n        address: 198.19.20.2/24\n        rate: 40G\n');
  assert.match(inventory, /rate: 40G/, 'right\'s link got its rate');
  assert.match(inventory, /mgmt:\n {8}address: 198\.18\.\d+\.2\//, 'the relay got its link');
  tbd = await bed.startTestbedd(inventory);
  await bed.hostsUp();
  viewerSecret = (await tbd.post('/api/v1/tokens', { name: 'matrix-viewer', role: 'viewer' })).secret;
  page = await bed.openPage();
});

after(() => bed.close());

const login = (token) => logIn(page, token);

/**
 * Screenshots at the desktop and phone sizes (and dark on the phone if
 * asked): of the full page, or of the viewport for a modal dialog; the page
 * fits the phone.
 */
const shoot = (name, options) => shootPage(page, `matrix-${name}`, options);

/** POST a spec to the API with the admin token: {status, body}. */
async function apiPost(urlPath, body) {
  const res = await fetch(`${tbd.base}${urlPath}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${tbd.adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const spec = () => page.locator('textarea#spec');
const specError = () => page.locator('#spec-error');
const planRows = () => page.locator('.plan-table tbody tr');
const runRows = () => page.locator('.runs-table tbody tr');

async function setSpec(value) {
  await spec().fill(typeof value === 'string' ? value : JSON.stringify(value, null, 2));
}

test('"Matrices" is in the navigation; New matrix is prefilled with the baseline example', { timeout: 60_000 }, async () => {
  await page.goto(`${tbd.base}/`);
  await login(tbd.adminToken);
  await page.locator('#nav').getByRole('link', { name: 'Matrices' }).click();
  await page.locator('h1', { hasText: 'Matrices' }).waitFor();
  assert.equal(await page.locator('#nav a[aria-current="page"]').innerText(), 'Matrices');
  await page.getByText('No matrix yet').waitFor();
  await shoot('list-empty');

  await page.getByRole('link', { name: 'New matrix' }).first().click();
  await page.locator('h1', { hasText: 'New matrix' }).waitFor();
  assert.match(page.url(), /#\/matrices\/new$/);
  await page.locator('textarea#spec[data-ready="yes"]').waitFor();
  const hosts = (await tbd.get('/api/v1/hosts')).hosts.filter((m) => m.role === 'host').map((m) => m.name);
  const baseline = JSON.parse(readFileSync(path.join(sourceDir, 'deploy', 'examples', 'baseline.json'), 'utf8'));
  baseline.pairs = [{ client: hosts[0], server: hosts[1] }];
  assert.deepEqual(JSON.parse(await spec().inputValue()), baseline,
    'the textarea holds deploy/examples/baseline.json with the first two machines of role host');
  assert.equal(await page.getByRole('button', { name: 'Start' }).isDisabled(), false, 'an admin may start');
  await shoot('new-example');
});

test('Plan shows the 2 runs of a small spec, with their iperf args and the estimated time', { timeout: 30_000 }, async () => {
  await setSpec(SMALL);
  await page.getByRole('button', { name: 'Plan' }).click();
  await planRows().first().waitFor();
  assert.equal(await planRows().count(), 2);
  const api = (await apiPost('/api/v1/matrices/plan', SMALL)).body.plan;
  const shown = await planRows().evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent.trim())));
  assert.deepEqual(shown.map((r) => r.slice(0, 5)), [['0', '0', 'left → right', 'tcp', 'forward'], ['1', '1', 'left → right', 'tcp', 'reverse']]
    .map((r, i) => [r[0], r[1], `${r[2]}${api.plan[i].link ? ` (${api.plan[i].link} ${api.plan[i].server_address})` : ''}`, r[3], r[4]]));
  assert.deepEqual(shown.map((r) => r[5]), api.plan.map((r) => r.iperf_args), 'the iperf args are the API\'s');
  assert.match(shown[1][5], /-R\b/, 'the reverse run has -R');
  assert.equal(await page.locator('.plan-timeline').count(), 0, 'one run at a time: no timeline');
  assert.match(await page.locator('.plan-summary').innerText(), /2 runs in 2 cells .* estimated \d+ s/);
  assert.equal(await specError().isVisible(), false);
  await shoot('new-plan', { dark: true });
});

test('two disjoint pairs plan in rounds, shown as a timeline', { timeout: 30_000 }, async () => {
  const spec = { ...SMALL, name: 'rounds', pairs: [{ client: 'left', server: 'right' }, { client: 'router', server: 'relay', link: 'mgmt' }] };
  await setSpec(spec);
  await page.getByRole('button', { name: 'Plan' }).click();
  await page.locator('.plan-timeline').waitFor();
  const api = (await apiPost('/api/v1/matrices/plan', spec)).body.plan;
  assert.equal(api.rounds, 2);
  assert.match(await page.locator('.plan-summary').innerText(), /4 runs in 4 cells .* 2 rounds \(runs on disjoint hosts go at once\)/);
  const rounds = await page.locator('.tl-round').evaluateAll((lis) => lis.map((li) => [...li.querySelectorAll('.tl-run')]
    .map((x) => Number(x.dataset.seq))));
  assert.deepEqual(rounds, api.timeline.map((t) => t.runs));
  assert.deepEqual(await planRows().evaluateAll((trs) => trs.map((tr) => tr.cells[1].textContent.trim())),
    api.plan.map((r) => String(r.round)));
  await shoot('new-plan-rounds');
});

test('OS combinations plan with their boots, each with its estimate', { timeout: 30_000 }, async () => {
  const spec = { ...SMALL, name: 'os', directions: ['forward'], os: [{ left: 'freebsd', right: 'freebsd' }, { left: 'ubuntu', right: 'ubuntu' }] };
  await setSpec(spec);
  await page.getByRole('button', { name: 'Plan' }).click();
  await page.locator('.plan-boots').waitFor();
  const api = (await apiPost('/api/v1/matrices/plan', spec)).body.plan;
  assert.equal(api.combinations, 2);
  assert.match(await page.locator('.plan-summary').innerText(), /2 OS combinations/);
  const boots = await page.locator('.boot-list li').allInnerTexts();
  assert.equal(boots.length, api.boots.length);
  api.boots.forEach((b, i) => {
    assert.match(boots[i], new RegExp(`^${b.seq === null ? 'after the last run' : `before run ${b.seq}`}: ${b.machine} ${b.from ?? 'off'} → ${b.to}`));
    // how each host will be switched (issue 21: the boot path the planner chose)
    assert.ok(b.path, `the plan's boot ${i} names its path`);
    assert.match(boots[i], new RegExp(` by ${b.path} `), `boot ${i} on the page says its path`);
  });
  assert.deepEqual(await planRows().evaluateAll((trs) => trs.map((tr) => tr.cells[2].textContent.trim().split(' (')[0])),
    api.plan.map((r) => `${r.client}@${r.client_os} → ${r.server}@${r.server_os}`));
  await shoot('new-plan-os');
});

test('a bad spec shows the field and message the API names, next to the textarea', { timeout: 30_000 }, async () => {
  const api = await apiPost('/api/v1/matrices/plan', BAD);
  assert.equal(api.status, 400);
  await setSpec(BAD);
  await page.getByRole('button', { name: 'Plan' }).click();
  await specError().waitFor({ state: 'visible' });
  assert.equal(await specError().locator('.field').innerText(), api.body.error.field);
  assert.equal(api.body.error.field, 'pairs[0].server');
  // The message is the API's, without the field it starts with (shown apart, once).
  const message = await specError().locator('.message').innerText();
  assert.ok([message, `${api.body.error.field}: ${message}`].includes(api.body.error.message),
    `the message shown ("${message}") is the API's ("${api.body.error.message}")`);
  assert.equal(await spec().getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('.plan-out').getAttribute('data-stale'), 'yes', 'the earlier plan is marked out of date');
  await shoot('new-error');
  // Not JSON at all: said without asking testbedd.
  await setSpec('{"name": "x",');
  await page.getByRole('button', { name: 'Plan' }).click();
  await eventually(async () => /not JSON/.test(await specError().innerText()), SOON, 'a spec that is not JSON is not refused');
  assert.equal(await specError().locator('.field').count(), 0);
});

test('Start: the live bitrate changes while a run is in progress; the table ends with 2 ok rows', { timeout: 120_000 }, async (t) => {
  await setSpec(SMALL);
  // Every text the live bitrate takes, with the run shown and that run's row state at that moment.
  await page.evaluate(() => {
    window.__rates = [];
    const seen = window.__rates;
    new MutationObserver(() => {
      const cur = document.querySelector('.mx-current');
      const el = cur?.querySelector('.live-bps');
      if (!el || cur.hidden) return;
      const run = cur.dataset.run ?? null;
      const row = run ? document.querySelector(`.runs-table tr[data-run="${run}"]`) : null;
      const last = seen[seen.length - 1];
      if (last && last.text === el.textContent && last.run === run) return;
      seen.push({ text: el.textContent, run, rowState: row?.dataset.state ?? null });
    }).observe(document.getElementById('main'), { subtree: true, childList: true, characterData: true, attributes: true });
    // Every count of points the live chart drew, with its run's row state then.
    window.__drawn = [];
    new MutationObserver(() => {
      for (const fig of document.querySelectorAll('.live-chart')) {
        const drawn = fig.querySelector('.interval-chart')?.dataset.drawn;
        const row = document.querySelector(`.runs-table tr[data-run="${fig.dataset.run}"]`);
        const last = window.__drawn.filter((x) => x.run === fig.dataset.run).pop();
        if (drawn && drawn !== '0' && (!last || last.drawn !== drawn)) {
          window.__drawn.push({ run: fig.dataset.run, drawn, rowState: row?.dataset.state ?? null,
            canvas: fig.querySelectorAll('canvas').length });
        }
      }
    }).observe(document.getElementById('main'), { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForURL(/#\/matrices\/\d+$/);
  matrixId = Number(/(\d+)$/.exec(page.url())[1]);
  await page.locator('h1', { hasText: 'small' }).waitFor();
  assert.equal(await runRows().count(), 2);

  // A screenshot while a run is in progress, once its bitrate shows.
  const bps = page.locator('.mx-current .live-bps');
  const roundText = page.locator('.mx-current .mx-round');
  const showing = await eventually(async () => /bit\/s/.test(await bps.innerText()) ||
    (await page.locator('main').getAttribute('data-matrix-state')) === 'succeeded', 60_000,
  'no bitrate was shown and the matrix did not end');
  if (showing && await page.locator('.mx-current').isVisible()) {
    assert.match((await roundText.innerText()).trim(), /^· round [12] of 2$/, 'the current round is shown (SMALL: 2 rounds of 1)');
    await shoot('running', { dark: true });
  }
  else console.warn('the matrix ended before a screenshot of a run in progress');

  await eventually(async () => {
    const st = await page.locator('main').getAttribute('data-matrix-state');
    if (st === 'failed' || st === 'canceled') throw new Error(`the matrix ${st}`);
    return st === 'succeeded';
  }, 90_000, async () => `matrix ${matrixId} should succeed; the API says ${JSON.stringify((await tbd.get(`/api/v1/matrices/${matrixId}`)).matrix)}`);
  await eventually(async () => (await runRows().evaluateAll((trs) => trs.map((tr) => tr.dataset.state))).join() === 'ok,ok', SOON,
    async () => `the table should end with 2 ok rows; it shows ${await runRows().evaluateAll((trs) => trs.map((tr) => tr.dataset.state))}`);

  const seen = await page.evaluate(() => window.__rates);
  t.diagnostic(`the live bitrate: ${seen.map((x) => `run ${x.run} (${x.rowState}): ${x.text}`).join(' | ')}`);
  const rated = seen.filter((s) => /\d (k|M|G|T)?bit\/s/.test(s.text) && s.rowState !== 'ok');
  const byRun = new Map();
  for (const s of rated) byRun.set(s.run, new Set([...(byRun.get(s.run) ?? []), s.text]));
  assert.ok([...byRun.values()].some((texts) => texts.size >= 2),
    `the live bitrate text should change while a run is in progress (seen: ${JSON.stringify(seen)})`);
  assert.match([...byRun.values()][0].values().next().value, /^client (\d+(\.\d+)? [kMGT]?bit\/s|…|at the end) · server (\d+(\.\d+)? [kMGT]?bit\/s|…)$/);

  // The live chart drew points while its run was still in progress, on a canvas (2 s runs: that
  // it grows while running is the builder's and the late viewer's case, with longer runs).
  const drawn = await page.evaluate(() => window.__drawn);
  t.diagnostic(`the live chart drew: ${drawn.map((x) => `run ${x.run} (${x.rowState}): ${x.drawn}`).join(' | ')}`);
  assert.ok(drawn.some((d) => d.rowState === 'running' && Number(d.drawn) >= 1),
    `the live chart should draw while a run is in progress (seen: ${JSON.stringify(drawn)})`);
  assert.ok(drawn.every((x) => x.canvas >= 1), 'the live chart draws on a canvas');

  // The grid: one square (left@OS -> right@OS) with a cell per direction, the receiver medians of /results.
  const grid = page.locator('.mx-grid');
  await eventually(async () => (await grid.locator('.grid-cell[data-state="ok"]').count()) === 2, SOON,
    async () => `the grid should show 2 ok cells; it shows ${await grid.locator('.grid-cell').evaluateAll((bs) => bs.map((b) => b.dataset.state))}`);

  // The rows have the API's values; the per-cell summary has both cells with n = 1.
  const results = await tbd.get(`/api/v1/matrices/${matrixId}/results`);
  const rows = await runRows().evaluateAll((trs) => trs.map((tr) => ({
    run: Number(tr.dataset.run), pair: tr.querySelector('.pair').textContent, sender: tr.querySelector('.sender').textContent,
  })));
  assert.deepEqual(rows.map((r) => r.run), results.runs.map((r) => r.id));
  assert.deepEqual(rows.map((r) => r.pair), results.runs.map((r) => `left@${r.client_os} → right@${r.server_os}`));
  for (const r of rows) assert.match(r.sender, /^\d+(\.\d+)? [kMGT]?bit\/s$/);
  const cells = page.locator('.cells-table tbody tr');
  await eventually(async () => (await cells.count()) === 2, SOON, 'the per-cell summary does not show 2 cells');
  const apiCells = results.cells.filter(Boolean);
  assert.deepEqual(await grid.locator('table.grid > thead th').allTextContents(),
    ['client ↓ server →', `right@${apiCells[0].server_os}`], 'one server column');
  assert.equal(await grid.locator('table.grid > tbody > tr > th').first().textContent(), `left@${apiCells[0].client_os}`);
  for (const c of apiCells) {
    const text = (await grid.locator(`.grid-cell[data-cell="${c.cell}"]`).textContent()).trim();
    const m = /^(\d+(?:\.\d+)?) ([kMGT]?)bit\/s$/.exec(text);
    assert.ok(m, `grid cell ${c.cell} shows a bitrate (${text})`);
    const shown = Number(m[1]) * { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2]];
    assert.ok(Math.abs(shown - c.receiver_bps.median) / c.receiver_bps.median < 0.01,
      `grid cell ${c.cell} shows the receiver median ${c.receiver_bps.median} (${text})`);
    assert.equal(await grid.locator(`.grid-cell[data-cell="${c.cell}"]`).getAttribute('data-direction'), c.direction);
    await eventually(async () => Math.abs(Number(await grid.locator(`.grid-cell[data-cell="${c.cell}"]`).getAttribute('data-share'))
      - c.receiver_bps.median / 40e9) < 0.001, SOON, `grid cell ${c.cell} is shaded against right's 40G link`);
  }
  // A click on a grid cell shows the cell (its permalink in the address), whose latest run's page charts it.
  await grid.locator(`.grid-cell[data-cell="${apiCells[1].cell}"]`).click();
  const runOfCell = results.runs.find((r) => r.cell === apiCells[1].cell);
  const focus = page.locator(`.mx-cell-focus[data-cell="${apiCells[1].cell}"]`);
  await focus.waitFor();
  assert.ok(page.url().endsWith(`#/matrices/${matrixId}?cell=${apiCells[1].cell}`), `the address is the cell's permalink (${page.url()})`);
  assert.equal(await grid.locator(`.grid-cell.cell-focus`).getAttribute('data-cell'), String(apiCells[1].cell));
  assert.equal(await focus.locator('a.cell-history').getAttribute('href'), `#/matrices/${matrixId}/cells/${apiCells[1].cell}/history`);
  await focus.locator('a.cell-latest').click();
  await page.locator(`.run-page[data-run="${runOfCell.id}"]`).waitFor();
  const charted = page.locator('.run-page .interval-chart');
  await eventually(async () => Number(await charted.getAttribute('data-drawn')) > 0, SOON, 'the run\'s intervals are not charted');
  await page.goBack();
  await page.locator(`.mx-cell-focus[data-cell="${apiCells[1].cell}"]`).waitFor();
  await eventually(async () => (await page.locator('main').getAttribute('data-matrix-state')) === 'succeeded', SOON,
    'back on the matrix page');
  await eventually(async () => (await cells.count()) === 2, SOON, 'the per-cell summary does not show 2 cells');
  // opened from its link, the page marks the cell in the grid (drawn again when the link rates come) and the tables
  await eventually(async () => (await grid.locator(`.grid-cell.cell-focus[data-cell="${apiCells[1].cell}"]`).count()) === 1
    && (await page.locator(`.cells-table tr.cell-focus[data-cell="${apiCells[1].cell}"]`).count()) === 1, SOON,
  'the cell of the link is not marked in the grid and the per-cell table');
  assert.deepEqual(await cells.locator('td.n').allInnerTexts(), ['1', '1']);
  assert.equal(await page.locator('.mx-current').isVisible(), false, 'an ended matrix has no current run');
  assert.match(await page.locator('.mx-progress-text').innerText(), /^2 of 2 runs done \(2 ok\)/);
  assert.equal(await page.getByRole('button', { name: 'Rerun' }).isVisible(), true);
  assert.equal(await page.getByRole('button', { name: 'Cancel', exact: true }).isVisible(), false);
  await shoot('done', { dark: true });
});

test('a run\'s page shows the commands the API gives, with the raw output', { timeout: 30_000 }, async () => {
  const first = runRows().first();
  const runId = Number(await first.getAttribute('data-run'));
  const { run } = await tbd.get(`/api/v1/runs/${runId}`);
  assert.ok(run.client_command, 'the API has the client command');
  await first.getByRole('link', { name: /^Run 0/ }).focus();
  await page.keyboard.press('Enter');
  await page.waitForURL(`**/#/runs/${runId}`);
  const runPage = page.locator('.run-page');
  await runPage.locator('code.client-command').waitFor();
  assert.equal(await runPage.locator('code.client-command').textContent(), run.client_command);
  assert.equal(await runPage.locator('code.server-command').textContent(), run.server_command);
  assert.match(await runPage.innerText(), new RegExp(`client ${run.client_version.replace(/\./g, '\\.')}`));
  const links = await runPage.locator('a.raw-link').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.deepEqual(links, ['client&stream=stdout', 'client&stream=stderr', 'server&stream=stdout', 'server&stream=stderr']
    .map((q) => `api/v1/runs/${runId}/raw?side=${q}`));
  // The links work with the session cookie.
  const raw = await page.evaluate(async (href) => { const r = await fetch(href); return { status: r.status, text: await r.text() }; }, links[0]);
  assert.equal(raw.status, 200);
  assert.ok(raw.text.length > 0, 'the client\'s raw output is not empty');
  // The client's stdout opens in the page, as the API gives it.
  await runPage.locator('details.raw-output[data-side="client"][data-stream="stdout"] > summary').click();
  await eventually(async () => (await runPage.locator('details.raw-output[data-side="client"][data-stream="stdout"]').getAttribute('data-loaded')) === 'ok',
    SOON, 'the client stdout did not load');
  assert.equal(await runPage.locator('details.raw-output[data-side="client"][data-stream="stdout"] pre').textContent(), raw.text);
  // The ended run's charts follow a switch to dark and back: drawn again in the page's colours.
  const chart = runPage.locator('.interval-chart').first();
  await eventually(async () => (await chart.getAttribute('data-scheme')) === 'light', SOON, 'the run\'s chart was not drawn');
  const fg = async () => page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--fg').trim());
  const lightFg = await fg();
  assert.equal(await chart.getAttribute('data-fg'), lightFg, 'the chart\'s text is the page\'s --fg');
  await page.emulateMedia({ colorScheme: 'dark' });
  const darkFg = await fg();
  assert.notEqual(darkFg, lightFg, 'app.css has a dark --fg');
  await eventually(async () => (await chart.getAttribute('data-scheme')) === 'dark' && (await chart.getAttribute('data-fg')) === darkFg,
    SOON, async () => `the chart did not follow the dark scheme (scheme ${await chart.getAttribute('data-scheme')}, fg ${await chart.getAttribute('data-fg')})`);
  await page.emulateMedia({ colorScheme: 'light' });
  await eventually(async () => (await chart.getAttribute('data-scheme')) === 'light' && (await chart.getAttribute('data-fg')) === lightFg,
    SOON, 'the chart did not go back to light');
  await shoot('run-details', { dark: true });
  await page.goBack();
  await eventually(async () => (await page.locator('main').getAttribute('data-matrix-state')) === 'succeeded', SOON,
    'back on the matrix page');
});

test('the CSV link downloads the results table', { timeout: 30_000 }, async () => {
  const href = await page.locator('a.csv-runs').getAttribute('href');
  assert.equal(href, `api/v1/matrices/${matrixId}/results?format=csv&view=runs`);
  const csv = await page.evaluate(async (u) => { const r = await fetch(u); return { status: r.status, type: r.headers.get('content-type'), text: await r.text() }; }, href);
  assert.equal(csv.status, 200);
  assert.match(csv.type, /^text\/csv/);
  const lines = csv.text.trim().split(/\r\n/);
  assert.match(lines[0], /^id,seq,/);
  assert.equal(lines.length, 3, 'a header and 2 runs');
});

test('the Hosts section shows what each host was, with the exact command', { timeout: 30_000 }, async () => {
  const api = (await tbd.get(`/api/v1/matrices/${matrixId}/hosts`)).hosts;
  assert.ok(api.length >= 2, `the matrix has host snapshots: ${JSON.stringify(api.map((x) => x.host))}`);
  const section = page.locator('section.mx-hosts');
  await eventually(async () => (await section.locator('tbody tr').count()) === api.length, SOON,
    'the Hosts section does not list every snapshot');
  const rows = await section.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => ({
    host: tr.dataset.host, os: tr.dataset.os, release: tr.cells[2].textContent.trim(), mtu: tr.cells[6].textContent.trim(),
  })));
  assert.deepEqual(rows, api.map((x) => ({
    host: x.host, os: x.os, release: x.metadata.release ?? '—', mtu: x.metadata.nic?.mtu !== undefined ? String(x.metadata.nic.mtu) : '—',
  })));
  const left = api.find((x) => x.host === 'left');
  const cmd = section.locator(`details.host-meta-cmd[data-host="left"]`);
  await cmd.locator('summary').click();
  assert.equal(await cmd.locator('pre.cmd').innerText(), left.command, 'the command exactly as it ran');
  const raw = await cmd.getByRole('link', { name: 'Raw output' }).getAttribute('href');
  const text = await page.evaluate(async (u) => (await fetch(u)).text(), raw);
  assert.match(text, /^@@testbedd-section uname_a/m);
  await section.scrollIntoViewIfNeeded();
  await shoot('hosts');
});

test('the list shows the matrix with its state and progress', { timeout: 30_000 }, async () => {
  await page.locator('.crumbs').getByRole('link', { name: 'Matrices' }).click();
  const row = page.locator(`.mx-list tr[data-matrix="${matrixId}"]`);
  await row.waitFor();
  assert.equal(await row.getAttribute('data-state'), 'succeeded');
  assert.match(await row.innerText(), /small/);
  assert.match(await row.innerText(), /2\/2/);
  await shoot('list', { dark: true });
  await row.getByRole('link', { name: 'small' }).click();
  await page.waitForURL(new RegExp(`#/matrices/${matrixId}$`));
});

test('Rerun starts the same spec again; Cancel stops it mid-run; Resume completes it', { timeout: 150_000 }, async () => {
  const mainState = () => page.locator('main').getAttribute('data-matrix-state');
  const states = () => runRows().evaluateAll((trs) => trs.map((tr) => tr.dataset.state));
  await page.getByRole('button', { name: 'Rerun' }).click();
  rerunId = await eventually(() => {
    const m = /#\/matrices\/(\d+)$/.exec(page.url());
    return m && Number(m[1]) !== matrixId && Number(m[1]);
  }, SOON, 'Rerun did not open the new matrix');
  const made = (await tbd.get(`/api/v1/matrices/${rerunId}?runs=0`)).matrix;
  assert.equal(made.rerun_of, matrixId);
  await page.locator('.mx-meta a', { hasText: `#${matrixId}` }).waitFor();

  await page.locator('.runs-table tr[data-seq="0"][data-state="running"]').waitFor({ timeout: 60_000 });
  await page.getByRole('button', { name: 'Cancel', exact: true }).click();
  await eventually(async () => (await mainState()) === 'canceled', 30_000,
    async () => `matrix ${rerunId} should be canceled; the API says ${JSON.stringify((await tbd.get(`/api/v1/matrices/${rerunId}`)).matrix)}`);
  await eventually(async () => !(await states()).includes('running'), SOON, 'a run still shows running after the cancel');
  assert.ok((await states()).some((st) => st !== 'ok'), `a canceled matrix has a run left to do (${await states()})`);
  assert.equal(await page.getByRole('button', { name: 'Cancel', exact: true }).isVisible(), false);
  assert.equal(await page.getByRole('button', { name: 'Rerun' }).isVisible(), true);
  await shoot('canceled');

  await page.getByRole('button', { name: 'Resume' }).click();
  await eventually(async () => (await mainState()) === 'succeeded', 90_000,
    async () => `matrix ${rerunId} should succeed after the resume; the API says ${JSON.stringify((await tbd.get(`/api/v1/matrices/${rerunId}`)).matrix)}`);
  await eventually(async () => (await states()).join() === 'ok,ok', SOON, async () => `the table should end with 2 ok rows: ${await states()}`);
  const api = (await tbd.get(`/api/v1/matrices/${rerunId}`)).matrix;
  assert.deepEqual(await runRows().evaluateAll((trs) => trs.map((tr) => Number(tr.dataset.run))), api.runs.map((r) => r.id),
    'the resumed runs keep their ids');
  assert.equal(await page.getByRole('button', { name: 'Resume' }).isVisible(), false);
});

test('Compare with a baseline: the rerun against the first matrix, cell by cell, with the CI commands', { timeout: 60_000 }, async () => {
  const section = page.locator('section.mx-compare');
  await section.waitFor();
  const baseline = page.getByLabel('Baseline matrix');
  // A bad baseline is said at the field; nothing is shown as a result.
  await baseline.fill('999999');
  await page.getByLabel('Largest drop allowed (%)').fill('100');
  await section.getByRole('button', { name: 'Compare' }).click();
  await eventually(async () => /There is no matrix 999999/.test(await page.locator('#cmp-error').innerText()), SOON,
    'an unknown baseline is not said');
  assert.equal(await baseline.getAttribute('aria-invalid'), 'true');
  assert.equal(await section.locator('table.cmp-table').isVisible(), false);
  await page.getByLabel('Largest drop allowed (%)').fill('250');
  await baseline.fill(String(matrixId));
  await section.getByRole('button', { name: 'Compare' }).click();
  await eventually(async () => /0 to 100/.test(await page.locator('#cmp-error').innerText()), SOON,
    'a drop over 100 % is not refused');

  // A drop of 100 % cannot be exceeded: every cell that ran ok in both is ok.
  await page.getByLabel('Largest drop allowed (%)').fill('100');
  await section.getByRole('button', { name: 'Compare' }).click();
  await section.locator('table.cmp-table tbody tr').first().waitFor();
  assert.equal(await page.locator('#cmp-error').isVisible(), false);
  const api = (await tbd.get(`/api/v1/matrices/${rerunId}/compare?baseline=${matrixId}&max_drop=100`)).compare;
  assert.equal(api.pass, true, `the API's comparison: ${JSON.stringify(api)}`);
  const shown = await section.locator('table.cmp-table tbody tr').evaluateAll((trs) => trs.map((tr) => ({
    verdict: tr.dataset.verdict, medians: [...tr.querySelectorAll('td.num .cmp-median span[title]')].map((x) => x.title),
  })));
  assert.deepEqual(shown, api.cells.map((c) => ({
    verdict: c.verdict,
    medians: [c.baseline_median, c.median].map((v) => `${Math.round(v)} bit/s`),
  })));
  assert.equal(shown.length, 2);
  assert.match(await section.locator('.cmp-verdict').innerText(), new RegExp(`^Pass: 2 cells compared with matrix ${matrixId}`));
  assert.equal(await section.getAttribute('data-pass'), 'true');
  const cmd = await section.locator('pre.cmp-command').innerText();
  assert.match(cmd, new RegExp(`tbctl matrix compare ${rerunId} --baseline ${matrixId} --max-drop 100`));
  assert.match(cmd, new RegExp(`curl -sf .*/api/v1/matrices/${rerunId}/compare\\?baseline=${matrixId}&max_drop=100&metric=receiver_bps`));
  await section.scrollIntoViewIfNeeded();
  await shoot('compare', { dark: true });

  // The hosts against the first matrix's: what the diff API says, value by value.
  const diff = (await tbd.get(`/api/v1/matrices/${rerunId}/hosts/diff?other=${matrixId}`)).diff;
  const hostsSec = page.locator('section.mx-hosts');
  await hostsSec.locator('#hosts-diff-other').fill('0');
  await hostsSec.getByRole('button', { name: 'Show the differences' }).click();
  await hostsSec.locator('.hosts-diff .field-error').waitFor();
  await hostsSec.locator('#hosts-diff-other').fill(String(matrixId));
  await hostsSec.getByRole('button', { name: 'Show the differences' }).click();
  const want = diff.hosts.flatMap((x) => (x.in === 'both' ? x.differences.map((d) => `${x.host}@${x.os} ${d.path}`) : [`${x.host}@${x.os} ${x.in}`]));
  if (want.length === 0) {
    await hostsSec.locator('.hosts-diff-none').waitFor({ timeout: SOON });
    assert.match(await hostsSec.locator('.hosts-diff-none').innerText(), new RegExp(`same in #${rerunId} and #${matrixId}`));
  } else {
    const rows = hostsSec.locator('.hosts-diff-table tbody tr');
    await eventually(async () => (await rows.count()) === want.length, SOON, `the diff should list ${want.length} values`);
    const got = await rows.evaluateAll((trs) => trs.map((tr) => `${tr.dataset.host}@${tr.dataset.os} ${tr.dataset.path ?? ''}`.trim()));
    assert.deepEqual(got.map((g) => g.split(' ')[0]), want.map((w) => w.split(' ')[0]));
  }
  // and against a matrix that differs for sure: one that does not exist
  await hostsSec.locator('#hosts-diff-other').fill('9999');
  await hostsSec.getByRole('button', { name: 'Show the differences' }).click();
  await eventually(async () => /Could not compare with matrix 9999/.test(await hostsSec.locator('.hosts-diff').innerText()), SOON,
    'a missing matrix is said');
});

test('the builder: a matrix made in the form plans, shows an error at its field, starts and charts live', { timeout: 120_000 }, async (t) => {
  await page.evaluate(() => sessionStorage.removeItem('testbedd.matrix-spec'));   // no draft
  await page.goto(`${tbd.base}/#/matrices`);
  await page.getByRole('link', { name: 'New matrix' }).first().click();
  await page.locator('form.builder[data-ready="yes"]').waitFor();
  // an earlier matrix's spec loads into the form and the JSON, to edit and run again
  await page.locator('#spec-from').selectOption(String(matrixId));
  await eventually(async () => (await page.locator('#b-name').inputValue()) === 'small', SOON,
    'the spec of the first matrix did not fill the form');
  const stored = (await tbd.get(`/api/v1/matrices/${matrixId}?runs=0`)).matrix.spec;
  assert.deepEqual(JSON.parse(await spec().inputValue()), stored, 'the JSON is the stored spec');
  assert.equal(await page.locator('#b-duration').inputValue(), String(stored.duration_s));
  assert.equal(await page.locator('#b-proto-udp').isChecked(), false);
  await page.locator('#spec-from').selectOption('example');
  await eventually(async () => (await page.locator('#b-name').inputValue()) === 'baseline', SOON, 'the example did not fill the form');
  // The form shows the example; now build a smaller matrix with it.
  assert.equal(await page.locator('.b-pair select[data-part="client"]').inputValue(), 'left');
  assert.equal(await page.locator('.b-pair select[data-part="server"]').inputValue(), 'right');
  assert.equal(await page.locator('#b-proto-udp').isChecked(), true);
  await page.locator('#b-name').fill('built');
  await page.locator('#b-proto-udp').uncheck();
  await page.locator('#b-dir-reverse').uncheck();
  await page.locator('#b-duration').fill('5');
  await page.locator('#b-repeats').fill('1');
  await page.locator('#b-order').selectOption('sequential');
  await page.locator('.b-pair select[data-part="link"]').selectOption('lan20');
  await page.locator('#b-iperf-parallel').fill('1 2');
  await page.locator('#b-iperf-udp_bitrate').fill('');
  const json = JSON.parse(await spec().inputValue());
  assert.deepEqual({ name: json.name, pairs: json.pairs, protocols: json.protocols, directions: json.directions,
    duration_s: json.duration_s, repeats: json.repeats, order: json.order, iperf: json.iperf },
  { name: 'built', pairs: [{ client: 'left', server: 'right', link: 'lan20' }], protocols: ['tcp'], directions: ['forward'],
    duration_s: 5, repeats: 1, order: 'sequential', iperf: { parallel: [1, 2] } }, 'the JSON follows the form');

  await shoot('builder-form');
  await page.getByRole('button', { name: 'Plan' }).click();
  await eventually(async () => (await planRows().count()) === 2, SOON, async () => 'the plan of the built spec should have 2 runs '
    + `(the -P sweep); the page says: ${await specError().isVisible() ? await specError().innerText() : '(no error)'}`);
  assert.match(await planRows().nth(1).innerText(), /-t 5 -P 2/);
  await shoot('builder-plan');

  // A bad value: the API's error is shown at its field in the form.
  await page.locator('#b-iperf-parallel').fill('1 0');
  await page.getByRole('button', { name: 'Plan' }).click();
  const bad = page.locator('.b-field.b-invalid');
  await bad.waitFor({ timeout: SOON });
  assert.equal(await bad.locator('input').getAttribute('id'), 'b-iperf-parallel');
  assert.match(await bad.locator('.b-error').innerText(), /1\.\.128/);
  assert.equal(await page.locator('#b-iperf-parallel').getAttribute('aria-invalid'), 'true');
  await shoot('builder-error');
  // Editing the JSON moves the form: the fix made there shows in the field.
  const fixed = JSON.parse(await spec().inputValue());
  fixed.iperf.parallel = 2;
  await setSpec(fixed);
  assert.equal(await page.locator('#b-iperf-parallel').inputValue(), '2');

  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForURL(/#\/matrices\/\d+$/);
  const id = Number(/(\d+)$/.exec(page.url())[1]);
  const made = (await tbd.get(`/api/v1/matrices/${id}`)).matrix;
  assert.equal(made.name, 'built');
  assert.equal(made.spec.iperf.parallel, 2);
  assert.equal(made.runs.length, 1);
  // The live chart's points grow while the run is in progress.
  const chart = page.locator(`.live-chart[data-run="${made.runs[0].id}"] .interval-chart`);
  await chart.waitFor({ timeout: 60_000 });
  const counts = new Set();
  await eventually(async () => {
    const row = await page.locator(`.runs-table tr[data-run="${made.runs[0].id}"]`).getAttribute('data-state');
    const drawn = await chart.getAttribute('data-drawn');
    if (row === 'running' && drawn !== '0') counts.add(drawn);
    return counts.size >= 2 || (row !== 'running' && row !== 'pending');
  }, 60_000, 'the run did not start');
  t.diagnostic(`points drawn while running: ${[...counts].join(', ')}`);
  assert.ok(counts.size >= 2, `the live chart should grow while the run is in progress (drawn: ${[...counts]})`);
  await eventually(async () => (await page.locator('main').getAttribute('data-matrix-state')) === 'succeeded', 60_000,
    'the built matrix did not succeed');
});

test('a viewer may plan, but sees Start and Rerun disabled, saying why', { timeout: 60_000 }, async () => {
  const before = (await tbd.get('/api/v1/matrices')).matrices.length;
  await page.getByRole('button', { name: 'Log out' }).click();
  await login(viewerSecret);
  await page.goto(`${tbd.base}/#/matrices/${matrixId}`);
  const rerun = page.getByRole('button', { name: 'Rerun' });
  await rerun.waitFor();
  assert.equal(await rerun.isDisabled(), true);
  assert.match(await rerun.getAttribute('title'), /operator role/);
  await page.locator('main[data-matrix-state="succeeded"]').waitFor();
  await shoot('viewer');
  await page.goto(`${tbd.base}/#/matrices/new`);
  const start = page.getByRole('button', { name: 'Start' });
  await start.waitFor();
  assert.equal(await start.isDisabled(), true);
  assert.match(await start.getAttribute('title'), /needs the operator role; you are viewer/);
  await setSpec(SMALL);
  await page.getByRole('button', { name: 'Plan' }).click();
  await eventually(async () => (await planRows().count()) === 2, SOON, 'a viewer cannot plan');
  assert.equal((await tbd.get('/api/v1/matrices')).matrices.length, before, 'nothing was started');
});

test('a late viewer of two pairs at once: a chart each, starting with the intervals so far, then the live tail', { timeout: 90_000 }, async () => {
  // left -> right and router -> relay (over mgmt) share no host: one round, both runs at once
  const { status, body } = await apiPost('/api/v1/matrices', { name: 'late', pairs: [{ client: 'left', server: 'right' },
    { client: 'router', server: 'relay', link: 'mgmt' }], protocols: ['tcp'], directions: ['forward'], duration_s: 8, repeats: 1 });
  assert.equal(status, 201, JSON.stringify(body));
  const id = body.matrix.id;
  // Wait (through the API) until both runs have streamed 3 intervals, then open the page.
  const runIds = await eventually(async () => {
    const { runs } = (await tbd.get(`/api/v1/matrices/${id}`)).matrix;
    return runs.length === 2 && runs.map((r) => r.id);
  }, SOON, 'the matrix does not have its 2 runs');
  const planned = (await tbd.get(`/api/v1/matrices/${id}`)).matrix.runs;
  assert.deepEqual(planned.map((r) => r.round), [0, 0], 'both runs are in round 0');
  for (const runId of runIds) {
    const sofar = await eventually(async () => {
      const { run } = await tbd.get(`/api/v1/runs/${runId}`);
      if (run.state !== 'running' && run.state !== 'pending') throw new Error(`run ${runId} ended (${run.state}) before the page opened`);
      return run.intervals.server.length >= 3 && run;
    }, 60_000, `the running run ${runId}'s intervals so far do not come with GET /runs/{id}`);
    assert.equal(sofar.intervals_live, true, 'a running run says its intervals are the live ones');
  }
  await page.goto(`${tbd.base}/#/matrices/${id}`);
  await eventually(async () => /round 1 of 1, 2 runs at once/.test(await page.locator('.mx-round').innerText()), SOON,
    async () => `the page does not say both runs go at once: "${await page.locator('.mx-round').innerText()}"`);
  const charts = runIds.map((runId) => page.locator(`.live-chart[data-run="${runId}"] .interval-chart`));
  const firsts = [];
  for (const chart of charts) {
    await chart.waitFor({ timeout: SOON });
    firsts.push(await eventually(async () => Number(await chart.getAttribute('data-points')) >= 3
      && Number(await chart.getAttribute('data-points')), 5_000, 'the late viewer\'s chart lacks the intervals so far'));
  }
  assert.equal(await page.locator('.live-chart').count(), 2, 'one live chart per running run');
  for (const [i, chart] of charts.entries()) {
    await eventually(async () => Number(await chart.getAttribute('data-points')) > firsts[i], 20_000,
      `the late viewer's chart of run ${runIds[i]} does not grow with the live tail`);
  }
  await shoot('late-viewer');
  await eventually(async () => (await page.locator('main').getAttribute('data-matrix-state')) === 'succeeded', 60_000,
    'the late matrix did not succeed');
  for (const runId of runIds) {
    const { run } = await tbd.get(`/api/v1/runs/${runId}`);
    assert.equal(run.intervals_live, undefined, 'an ended run\'s intervals are the stored ones');
    assert.ok(run.intervals.server.length >= 8, `the stored run has its intervals (${run.intervals.server.length})`);
  }
});

test('the live plot is drawn by a worker, and by the page itself where the browser has no OffscreenCanvas', { timeout: 150_000 }, async () => {
  const { status, body } = await apiPost('/api/v1/matrices', { name: 'plots', pairs: [{ client: 'left', server: 'right' }],
    protocols: ['tcp'], directions: ['forward'], duration_s: 10, repeats: 1, idle: false });  // (under a loaded check the idle look may hold it)
  assert.equal(status, 201, JSON.stringify(body));
  const id = body.matrix.id;
  const runId = await eventually(async () => (await tbd.get(`/api/v1/matrices/${id}`)).matrix.runs[0]?.id, SOON, 'the matrix has no run');
  await loggedIn();
  // a second tab of the same session, in a browser without OffscreenCanvas (Safari before 16.4)
  const plain = await page.context().newPage();
  await plain.addInitScript(() => { delete window.OffscreenCanvas; });
  try {
    for (const [p, drawer] of [[page, 'worker'], [plain, 'page']]) {
      await p.goto(`${tbd.base}/#/matrices/${id}`);
      const box = p.locator(`.live-chart[data-run="${runId}"] .live-plot`);
      await box.waitFor({ timeout: 90_000 });
      await eventually(async () => Number(await box.getAttribute('data-drawn')) >= 2, 30_000, `${drawer}: the plot drew no points`);
      const rate = box.locator('canvas.chart-rate');
      // a canvas handed to a worker (transferControlToOffscreen) has no context on the page
      assert.equal(await rate.evaluate((c) => { try { return c.getContext('2d') ? 'page' : 'none'; } catch { return 'worker'; } }), drawer);
      // the page's screenshot of the canvas's box: an element screenshot waits for the element to be
      // "stable" over animation frames, which a loaded machine once did not give it within 30 s
      await p.bringToFront();
      await rate.evaluate((c) => c.scrollIntoView({ block: 'center' }));
      const line = await seriesPixels(p, await p.screenshot({ clip: await rate.boundingBox() }));
      assert.ok(line > 100, `${drawer}: the bitrate line is on the canvas (${line} pixels of the first series' colour)`);
      if (drawer === 'worker') {
        // the worker reads the page's own stream: the page holds the app's stream and the matrix's, no third
        await eventually(async () => (await sseClients()) === 2, SOON,
          async () => `the one page open holds ${await sseClients()} event streams, not 2`);
      }
      // the events reach the page either way: the live bitrate shows
      await eventually(async () => /bit\/s/.test(await p.locator('.mx-current .live-bps').innerText()), SOON,
        `${drawer}: the page shows no live bitrate`);
    }
  } finally {
    await plain.close();
  }
  await eventually(async () => (await tbd.get(`/api/v1/matrices/${id}`)).matrix.state === 'succeeded', 60_000, 'the plots matrix did not succeed');
});

test('a swept tunable reads as its values in the per-cell table and the grid, never as an object', { timeout: 120_000 }, async () => {
  const { status, body } = await apiPost('/api/v1/matrices', { name: 'mtu', pairs: [{ client: 'left', server: 'right' }],
    protocols: ['tcp'], directions: ['forward'], duration_s: 1, repeats: 1, idle: false,
    tunables: [{ mtu: true, values: [1500, 1400] }] });
  assert.equal(status, 201, JSON.stringify(body));
  const id = body.matrix.id;
  await eventually(async () => (await tbd.get(`/api/v1/matrices/${id}`)).matrix.state === 'succeeded', 90_000,
    async () => `the mtu matrix did not succeed: ${JSON.stringify((await tbd.get(`/api/v1/matrices/${id}`)).matrix.runs)}`);
  await loggedIn();
  await page.goto(`${tbd.base}/#/matrices/${id}`);
  const swept = page.locator('.cells-table td[data-label="swept"]');
  await eventually(async () => (await swept.count()) === 2, SOON, 'the per-cell table has no swept column of 2 cells');
  assert.deepEqual((await swept.allInnerTexts()).map((x) => x.trim()), ['tunables=MTU 1500', 'tunables=MTU 1400']);
  assert.doesNotMatch(await page.locator('main').innerText(), /\[object Object\]/, 'no parameter shows as [object Object]');
});

/** The page logged in (by the tests before, or here when a test runs alone). */
async function loggedIn() {
  await page.goto(`${tbd.base}/`);
  const token = page.getByLabel('API token');
  await token.or(page.locator('h1', { hasText: 'Hosts' })).first().waitFor();
  if (await token.isVisible()) await login(tbd.adminToken);
}

/** testbedd's open event streams (GET /metrics, testbedd_sse_clients). */
async function sseClients() {
  const res = await fetch(`${tbd.base}/metrics`, { headers: { Authorization: `Bearer ${tbd.adminToken}` } });
  return Number(/^testbedd_sse_clients (\d+)$/m.exec(await res.text())?.[1]);
}

/** Pixels of a PNG (a screenshot) near the first series' colour of ECharts' light or dark palette. */
function seriesPixels(p, png) {
  return p.evaluate(async (bytes) => {
    const bmp = await createImageBitmap(new Blob([new Uint8Array(bytes)], { type: 'image/png' }));
    const c = document.createElement('canvas');
    c.width = bmp.width;
    c.height = bmp.height;
    const g = c.getContext('2d');
    g.drawImage(bmp, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    const near = (i, [r, gr, b]) => Math.abs(d[i] - r) < 40 && Math.abs(d[i + 1] - gr) < 40 && Math.abs(d[i + 2] - b) < 40;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (near(i, [0x54, 0x70, 0xc6]) || near(i, [0x49, 0x92, 0xff])) n++;
    return n;
  }, [...png]);
}

test('no script errors on the pages', () => {
  const real = pageErrors.filter((e) => !/Failed to load resource|net::ERR_|EventSource/.test(e));
  assert.deepEqual(real, []);
});

// The status page (#/status, issue 19 item 3: where the installed app opens)
// in Debian's Chromium (headless, playwright-core) against the real testbedd
// and the simulated testbed (deploy/sim, prefix tbsu, block 217), plus one
// machine, ghost, on a closed loopback port: always down (its link on the
// sim's data net is never used: a run to it fails at its ssh).
//
// A matrix left -> right of 10 s runs: the page shows the machines (left and
// right up and busy, held by that matrix; ghost down), the matrix's progress
// and its run's live bitrate (NowRunning fed by the matrix's event stream);
// when it ends the page says so by itself.  A matrix whose second run goes
// to ghost fails: the last results show it failed with 1 ok and 1 failed,
// linking to the failed run's page.  An admin sees the newest notification
// (a rule's test message, from GET /notifications/deliveries); a viewer
// does not see the section.  Then offline (context.setOffline): the page
// says "Offline since HH:MM (N min)"; a reload still loads the shell from
// the service worker's cache (the worker installed once, no reload under
// its control: it cached the modules by reading app.mjs's imports) and
// shows the last data with the same "since"; back online the banner goes
// and the page reads testbedd again by itself.  Screenshots (1280x800 and a
// 390x844 phone) go to $TB_BINARY_DIR/screenshots/status-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Bed, eventually, freePort, login, shoot } from './lib/testbed.mjs';

const PREFIX = 'tbsu';
const BLOCK = '217';
const SOON = 20_000;
const bed = new Bed('status');
let tbd;
let page;
let running;     // the matrix id that ran live on the page
let failed;      // the matrix id that failed

before(async () => {
  const closed = await freePort();
  const inventory = `${bed.upSim(PREFIX, BLOCK)}
  ghost:
    role: host
    os:
      ubuntu: {address: 127.0.0.1, port: ${closed}}
    links:
      lan10: {address: 198.19.10.250/24, ifname: {ubuntu: eth0}}
`;
  tbd = await bed.startTestbedd(inventory);
  await bed.hostsUp();
  // a rule and its test message (to a closed loopback port, refused without the admin's allowance: nothing leaves)
  const rule = await tbd.post('/api/v1/notifications', {
    name: 'phone', triggers: ['matrix.failed'], sink: { template: 'ntfy', url: 'http://127.0.0.1:9/status' },
  });
  assert.equal((await tbd.call('POST', `/api/v1/notifications/${rule.id}/test`)).status, 202);
  page = await bed.openPage(undefined, { timeout: SOON });
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);   // the desktop default stays the Hosts page
});

after(() => bed.close());

const host = (name) => page.locator(`.st-host[data-host="${name}"]`);

test('the manifest opens the installed app on the status page; the nav links it', async () => {
  const m = await (await fetch(`${tbd.base}/manifest.webmanifest`)).json();
  assert.equal(m.start_url, './#/status');
  assert.ok(m.shortcuts.some((s) => s.url === './#/status'));
  await page.locator('#nav a', { hasText: 'Status' }).click();
  await page.locator('h1', { hasText: 'Status' }).waitFor();
  assert.equal(await page.locator('#nav a[aria-current="page"]').textContent(), 'Status');
});

test('machines and a running matrix with its progress and live bitrate', { timeout: 120_000 }, async () => {
  await host('left').waitFor();
  assert.equal(await host('left').getAttribute('data-reachability'), 'up');
  await eventually(async () => (await host('ghost').getAttribute('data-reachability')) === 'down', SOON, 'ghost is not down');
  ({ matrix: { id: running } } = await tbd.post('/api/v1/matrices', {
    name: 'live', pairs: [{ client: 'left', server: 'right' }], protocols: ['tcp'], directions: ['forward'],
    duration_s: 10, repeats: 1,
  }));
  const section = page.locator('.st-running');
  await section.locator(`a[href="#/matrices/${running}"]`).waitFor();
  await section.locator('.mx-progress-text', { hasText: /0 of 1 runs done/ }).waitFor();
  // the run's bitrate from run.interval events (the server's side is live whatever the client's iperf3)
  await section.locator('.live-bps', { hasText: /[0-9.]+ [kMGT]?bit\/s/ }).waitFor({ timeout: 40_000 });
  // left and right are busy: held by the matrix
  for (const name of ['left', 'right']) {
    await eventually(async () => (await host(name).getAttribute('data-busy')) === 'true', SOON, `${name} is not busy`);
    await host(name).locator(`.st-held a[href="#/matrices/${running}"]`).waitFor();
  }
  assert.match(await page.locator('.st-section .summary').textContent(), /machines · \d+ up · 1 down · 2 busy/);
  await shoot(page, 'status-running');
  // it ends: the page follows by itself (matrix.state), the last results say succeeded
  await section.waitFor({ state: 'hidden', timeout: 60_000 });
  await page.locator(`.st-matrix[data-matrix="${running}"][data-state="succeeded"]`).waitFor();
  assert.match(await page.locator(`.st-matrix[data-matrix="${running}"] .st-counts`).textContent(), /1 ok · 0 failed of 1 runs/);
});

test('a failed matrix: its counts and a link to its failed run', { timeout: 120_000 }, async () => {
  ({ matrix: { id: failed } } = await tbd.post('/api/v1/matrices', {
    name: 'broken', pairs: [{ client: 'left', server: 'right' }, { client: 'left', server: 'ghost' }],
    protocols: ['tcp'], directions: ['forward'], duration_s: 1, repeats: 1,
  }));
  const row = page.locator(`.st-matrix[data-matrix="${failed}"][data-state="failed"]`);
  await row.waitFor({ timeout: 90_000 });
  assert.match(await row.locator('.st-counts').textContent(), /1 ok · 1 failed of 2 runs/);
  const { matrix } = await tbd.get(`/api/v1/matrices/${failed}`);
  const bad = matrix.runs.find((r) => r.state === 'failed');
  assert.equal(bad.server, 'ghost');
  const link = row.locator(`.st-failed-runs a[href="#/runs/${bad.id}"]`);
  await link.waitFor();
  // the newest notification: the rule's test message
  const note = page.locator('.st-deliveries li').first();
  await note.waitFor();
  assert.match(await note.textContent(), /phone/);
  await shoot(page, 'status-results', { dark: true });
  await link.click();
  await page.waitForURL(new RegExp(`#/runs/${bad.id}$`));
  await page.goBack();
  await page.locator('h1', { hasText: 'Status' }).waitFor();
});

test('offline: says since when, reloads from the cache with the last data, comes back by itself', { timeout: 90_000 }, async () => {
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
  await eventually(() => page.evaluate(() => navigator.serviceWorker.controller !== null), SOON,
    'the service worker does not control the page');
  const before = await page.evaluate(() => JSON.parse(sessionStorage.getItem('testbedd.status')).at);
  const banner = page.locator('.st-offline');
  await bed.browser.setOffline(true);
  let since;
  try {
    await banner.waitFor();
    since = /Offline since (\d\d:\d\d) \((\d+) min\)/.exec(await banner.textContent());
    assert.ok(since, await banner.textContent());
    const now = await page.evaluate(() => { const d = new Date(); return d.getHours() * 60 + d.getMinutes(); });
    const [hh, mm] = since[1].split(':').map(Number);
    assert.ok(((now - (hh * 60 + mm)) + 1440) % 1440 <= 1, `since ${since[1]} is not now`);
    await page.reload();
    await page.locator('h1', { hasText: 'Status' }).waitFor();
    await banner.waitFor();
    assert.equal(/Offline since (\d\d:\d\d)/.exec(await banner.textContent())[1], since[1], 'the since survives a reload');
    await host('left').waitFor();
    await page.locator(`.st-matrix[data-matrix="${failed}"][data-state="failed"]`).waitFor();
    await page.locator('.st-deliveries li').first().waitFor();
    await shoot(page, 'status-offline');
  } finally {
    await bed.browser.setOffline(false);
  }
  await banner.waitFor({ state: 'hidden', timeout: SOON });
  await eventually(() => page.evaluate((t) => JSON.parse(sessionStorage.getItem('testbedd.status')).at > t, before),
    SOON, 'the page did not read testbedd again');
  await page.locator('#live[data-state="live"]').waitFor();
  assert.equal(await host('ghost').getAttribute('data-reachability'), 'down');
  // the cache holds the shell, no API reply
  const urls = await page.evaluate(async () => (await (await caches.open('testbedd-shell-v1')).keys())
    .map((r) => new URL(r.url).pathname));
  assert.ok(urls.includes('/js/status.mjs'), urls.join(' '));
  assert.deepEqual(urls.filter((u) => u.startsWith('/api') || u === '/metrics'), []);
});

test('a viewer sees machines and matrices, not the notifications', async () => {
  const { secret } = await tbd.post('/api/v1/tokens', { name: 'watcher', role: 'viewer' });
  await page.locator('#logout').click();
  await login(page, secret);
  await page.goto(`${tbd.base}/#/status`);
  await host('left').waitFor();
  await page.locator(`.st-matrix[data-matrix="${failed}"]`).waitFor();
  assert.equal(await page.locator('.st-notes').isHidden(), true);
  const errors = bed.errors.filter((e) => !/net::ERR_INTERNET_DISCONNECTED|Failed to load resource/.test(e));
  assert.deepEqual(errors, []);
});

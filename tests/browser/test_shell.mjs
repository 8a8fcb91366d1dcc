// The page's shell survives a module that fails to load (static/js/boot.js).
//
// Chromium aborts a module it is loading with ERR_NETWORK_CHANGED when a
// phone changes networks, and a proxy may answer 5xx: one failed module of
// the graph used to leave the page blank for good.  Here Playwright's
// page.route fails one module of the real testbedd's pages: once (the app
// still comes up: the login form, then the Hosts page) and for good (the page
// says "Could not load testbedd's page: ..." with a Retry button, which
// brings the app up once the module loads again).  The service worker is
// blocked: with its cache it would answer for the failed module itself,
// hiding what boot.js does; the last test lets a worker in a browser of its
// own answer a module's 503 with its cached copy.  And the history and OS
// pages of a matrix that is not there (their load failure).  No sim.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Bed, DESKTOP, deadInventory, eventually, freePort, launchChromium, login, shoot } from './lib/testbed.mjs';

const bed = new Bed('shell');
let tbd;
let page;
const pageErrors = [];

before(async () => {
  const closed = await freePort();
  tbd = await bed.startTestbedd(deadInventory(bed.root, `  left:
    role: host
    os:
      ubuntu: {address: 127.0.0.1, port: ${closed}}
`));
  bed.browser = await launchChromium(path.join(bed.root, 'chromium'), DESKTOP, { serviceWorkers: 'block' });
  page = bed.browser.pages()[0] ?? await bed.browser.newPage();
  page.setDefaultTimeout(30_000);
  page.on('pageerror', (err) => pageErrors.push(err.message));
});

after(() => bed.close());

/** Fail the first `times` loads of static/js/<file> with fail(route); returns the count of loads seen. */
async function failing(file, times, fail) {
  const seen = { loads: 0 };
  await page.route(`**/js/${file}`, (route) => {
    seen.loads += 1;
    if (seen.loads <= times) return fail(route);
    return route.continue();
  });
  return seen;
}

test('a module aborted once (the network changed): the app still comes up', async () => {
  const seen = await failing('login.mjs', 1, (route) => route.abort('internetdisconnected'));
  try {
    await page.goto(`${tbd.base}/`);
    await page.getByLabel('API token').waitFor();
    assert.equal(seen.loads, 2, 'login.mjs was loaded again after the abort');
    await login(page, tbd.adminToken);
  } finally {
    await page.unrouteAll();
  }
  assert.deepEqual(pageErrors, []);
});

test('a module answered 503 once: the app still comes up', async () => {
  const seen = await failing('hosts.mjs', 1, (route) => route.fulfill({ status: 503, body: 'busy' }));
  try {
    await page.reload();
    await page.locator('h1', { hasText: 'Hosts' }).waitFor();
    assert.equal(seen.loads, 2, 'hosts.mjs was loaded again after the 503');
  } finally {
    await page.unrouteAll();
  }
  assert.deepEqual(pageErrors, []);
});

test('a module that never loads: the page says so and Retry brings the app up', async () => {
  const seen = await failing('hosts.mjs', Infinity, (route) => route.abort('internetdisconnected'));
  let failed;
  try {
    await page.reload();
    failed = page.getByRole('alert').filter({ hasText: "Could not load testbedd's page:" });
    await failed.waitFor({ timeout: 30_000 });
    assert.ok(seen.loads >= 4, `hosts.mjs was tried ${seen.loads} times, not 4 (1 + 3 retries)`);
    await failed.getByRole('button', { name: 'Retry' }).waitFor();
    await shoot(page, 'shell-failed');
  } finally {
    await page.unrouteAll();
  }
  await failed.getByRole('button', { name: 'Retry' }).click();
  await page.locator('h1', { hasText: 'Hosts' }).waitFor();
  assert.deepEqual(pageErrors, []);
});

test("the service worker answers a module's 503 with its cached copy", async () => {
  const other = await launchChromium(path.join(bed.root, 'chromium-sw'), DESKTOP);
  try {
    const p = other.pages()[0] ?? await other.newPage();
    p.setDefaultTimeout(30_000);
    await p.goto(`${tbd.base}/`);
    await p.getByLabel('API token').waitFor();
    await eventually(() => p.evaluate(() => navigator.serviceWorker.controller !== null), 20_000,
      'the service worker does not control the page');
    await p.reload(); // through the worker: its cache gets every module
    await p.getByLabel('API token').waitFor();
    let served = 0;
    // the browser context's route sees the worker's own fetches too
    await other.route('**/js/login.mjs', (route) => { served += 1; return route.fulfill({ status: 503, body: 'busy' }); });
    await p.reload();
    await p.getByLabel('API token').waitFor();
    assert.equal(served, 1, 'the worker asked testbedd once, got the 503 and answered from its cache');
  } finally {
    await other.close();
  }
});

test('a matrix that is not there: the history and OS pages say so and link back to it', async () => {
  for (const route of ['#/matrices/999/cells/0/history', '#/os/999']) {
    await page.goto(`${tbd.base}/${route}`);
    const back = page.locator('p.alert').getByRole('link', { name: 'back to matrix #999' });
    await back.waitFor();
    assert.equal(await back.getAttribute('href'), '#/matrices/999', route);
  }
  assert.deepEqual(pageErrors, []);
});

// The installable app in Debian's Chromium (headless, playwright-core)
// against the real testbedd on http://127.0.0.1 (a secure context like
// https: browsers treat loopback as trustworthy, so the service worker
// registers without a certificate; a LAN address over plain http would not).
//
// The manifest is served as application/manifest+json with its icons;
// the service worker registers and controls the page; Chromium's own
// installability check (DevTools Page.getInstallabilityErrors) finds
// nothing missing; after a logged-in visit the worker's cache holds the
// shell and no API reply; offline, a reload still shows the shell (the
// login page saying testbedd did not answer).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Bed, deadInventory, eventually, freePort, login } from './lib/testbed.mjs';

const SOON = 20_000;
const bed = new Bed('pwa');
let tbd;
let browser;
let page;

before(async () => {
  const closed = await freePort();
  tbd = await bed.startTestbedd(deadInventory(bed.root, `  left:
    role: host
    os:
      ubuntu: {address: 127.0.0.1, port: ${closed}}
`));
  page = await bed.openPage();
  browser = bed.browser;
});

after(() => bed.close());

test('the manifest and its icons are served with their types', async () => {
  const res = await fetch(`${tbd.base}/manifest.webmanifest`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^application\/manifest\+json/);
  const m = await res.json();
  assert.equal(m.display, 'standalone');
  for (const icon of m.icons) {
    const r = await fetch(`${tbd.base}/${icon.src}`);
    assert.equal(r.status, 200, icon.src);
    assert.equal(r.headers.get('content-type').split(';')[0], icon.type);
  }
  const sw = await fetch(`${tbd.base}/sw.js`);
  assert.match(sw.headers.get('content-type'), /^text\/javascript/);
});

test('the service worker controls the page and Chromium finds it installable', async () => {
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
  await eventually(() => page.evaluate(() => navigator.serviceWorker.controller !== null), SOON,
    'the service worker does not control the page');
  const cdp = await browser.newCDPSession(page);
  const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
  assert.deepEqual(installabilityErrors, []);
  const manifest = await cdp.send('Page.getAppManifest');
  assert.deepEqual(manifest.errors, []);
});

test('the cache holds the shell and no API reply', async () => {
  // the hosts page polled the API while the worker was in control
  await page.reload();
  await page.locator('h1', { hasText: 'Hosts' }).waitFor();
  const urls = await page.evaluate(async () => {
    const c = await caches.open('testbedd-shell-v1');
    return (await c.keys()).map((r) => new URL(r.url).pathname);
  });
  assert.ok(urls.includes('/js/app.mjs'), urls.join(' '));
  assert.ok(urls.includes('/js/hosts.mjs'), urls.join(' '));
  assert.ok(urls.includes('/app.css'), urls.join(' '));
  assert.deepEqual(urls.filter((u) => u.startsWith('/api') || u === '/metrics'), []);
});

test('offline, the shell still loads and says testbedd did not answer', async () => {
  await browser.setOffline(true);
  try {
    await page.reload();
    await page.locator('.brand', { hasText: 'testbedd' }).waitFor();
    await page.getByText('testbedd did not answer').waitFor();
  } finally {
    await browser.setOffline(false);
  }
});

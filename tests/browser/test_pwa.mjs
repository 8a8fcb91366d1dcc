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
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  Bed, CHROMIUM_ARGS, Testbedd, deadInventory, eventually, freePort, launchChromium, login,
} from './lib/testbed.mjs';

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

// The same check over testbedd's own TLS (--tls-cert/--tls-key, as ./deploy/demo
// --tls serves it): a self-signed certificate for 127.0.0.1 made here, which
// this Chromium trusts by its public key (--ignore-certificate-errors-spki-list,
// what "the phone must trust the certificate" means for a test); the worker
// registers over https and Chromium finds the app installable.
test('over testbedd\'s own TLS the app is installable too', { timeout: 90_000 }, async () => {
  const dir = path.join(bed.root, 'tls');
  mkdirSync(dir, { mode: 0o700 });
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
  { stdio: 'ignore' });
  chmodSync(key, 0o600);
  const spki = execFileSync('sh', ['-c', 'openssl x509 -in "$1" -pubkey -noout | openssl pkey -pubin -outform der'
    + ' | openssl dgst -sha256 -binary | base64', '_', cert], { encoding: 'utf8' }).trim();
  const closed = await freePort();
  mkdirSync(path.join(bed.root, 'tbtls'), { mode: 0o700 });
  const tls = new Testbedd(path.join(bed.root, 'tbtls'), deadInventory(bed.root, `  left:
    role: host
    os:
      ubuntu: {address: 127.0.0.1, port: ${closed}}
`), ['--tls-cert', cert, '--tls-key', key]);
  let ctx;
  try {
    await tls.start();
    const base = `https://127.0.0.1:${tls.port}`;
    ctx = await launchChromium(path.join(bed.root, 'chromium-tls'), undefined,
      { args: [...CHROMIUM_ARGS, `--ignore-certificate-errors-spki-list=${spki}`] });
    const p = ctx.pages()[0] ?? await ctx.newPage();
    await p.goto(`${base}/`);
    await login(p, tls.adminToken);
    await eventually(() => p.evaluate(() => navigator.serviceWorker.controller !== null), SOON,
      'the service worker does not control the https page');
    assert.equal(await p.evaluate(() => window.isSecureContext && location.protocol), 'https:');
    const cdp = await ctx.newCDPSession(p);
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    assert.deepEqual(installabilityErrors, []);
    assert.equal((await cdp.send('Page.getAppManifest')).url, `${base}/manifest.webmanifest`);
  } finally {
    if (ctx) await ctx.close();
    await tls.stop();
  }
});

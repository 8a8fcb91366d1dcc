// The Notifications page (#/notifications) in Debian's Chromium (headless,
// driven by playwright-core) against the real testbedd and a small HTTP
// receiver in this process on 127.0.0.1 (allowed by the rule's
// allow_private_host; the notifier refuses loopback otherwise).
//
// The cases run in order on one page: an admin sees no rules; a rule with a
// URL testbedd refuses (ftp://) shows the API's message and marks the URL
// field; a good rule appears as "ok"; its Test button makes testbedd send a
// signed JSON body to the receiver and the delivery log shows it delivered;
// with the receiver answering 500 the rule turns FAILING (with the status in
// its last error) and back to ok once a message goes through; Edit fills the
// form and saving changes the rule; Delete removes it; an email rule through
// the form (the mail fields replace the webhook's); a viewer is told the
// page is for admins (the only console errors: the 400 of the refused
// rule, 401/403).  Screenshots (1280x800 and a 390x844 phone, light and
// dark) go to $TB_BINARY_DIR/screenshots/notifications-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Bed, deadInventory, eventually, freePort, login, shoot } from './lib/testbed.mjs';

const SOON = 20_000;
const KEY = 'browser-test-hmac-key';
const bed = new Bed('notifications');
const pageErrors = bed.errors;
let tbd;
let page;
let rx;
let rxPort;
let rxStatus = 200;
let keyFile;
let viewerSecret;
const received = [];

before(async () => {
  process.env.TESTBEDD_TEST_NOTIFY_BACKOFF_MS = '200';
  rx = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body, status: rxStatus });
      res.writeHead(rxStatus, { 'Content-Length': '0' });
      res.end();
    });
  });
  rxPort = await freePort();
  await new Promise((resolve) => rx.listen(rxPort, '127.0.0.1', resolve));
  const closed = await freePort();
  tbd = await bed.startTestbedd(deadInventory(bed.root, `  left:
    role: host
    os:
      ubuntu: {address: 127.0.0.1, port: ${closed}}
`));
  // a rule's secrets live in STATE_DIR/notify-secrets
  mkdirSync(path.join(tbd.stateDir, 'notify-secrets'), { mode: 0o700 });
  keyFile = path.join(tbd.stateDir, 'notify-secrets', 'hmac.key');
  writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
  viewerSecret = (await tbd.post('/api/v1/tokens', { name: 'nf-viewer', role: 'viewer' })).secret;
  page = await bed.openPage();
});

after(async () => {
  await bed.close();
  rx?.close();
});

const row = (name) => page.locator('table.nf-rules tbody tr', { hasText: name });

test('an admin opens Notifications from the nav: no rules yet', async () => {
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
  await page.getByRole('link', { name: 'Notifications' }).click();
  await page.locator('h1', { hasText: 'Notifications' }).waitFor();
  await page.getByText('No rules yet').waitFor();
});

test('a refused URL: the API says why and the field is marked', async () => {
  await page.getByLabel('Name').fill('phone');
  await page.getByLabel('a matrix ended').check();
  await page.getByLabel('URL', { exact: true }).fill('ftp://127.0.0.1/x');
  await page.getByRole('button', { name: 'Save rule' }).click();
  await page.getByText('http:// or https://').waitFor();
  assert.equal(await page.getByLabel('URL', { exact: true }).getAttribute('aria-invalid'), 'true');
});

test('a rule is created and shows as ok', async () => {
  await page.getByLabel('a host went down').check();
  await page.getByLabel('URL', { exact: true }).fill(`http://127.0.0.1:${rxPort}/hook`);
  await page.getByLabel('HMAC key file').fill(keyFile);
  await page.getByLabel('Allow a private host').fill('127.0.0.1');
  await page.getByLabel('Only hosts').fill('left');
  await page.getByRole('button', { name: 'Save rule' }).click();
  await row('phone').waitFor();
  const text = await row('phone').innerText();
  assert.match(text, /matrix\.ended, host\.down/);
  assert.match(text, /json → 127\.0\.0\.1:\d+ \(signed\)/);
  assert.match(text, /hosts left/);
  assert.match(text, /\bok\b/i);
});

test('Test sends a signed message; the log shows it delivered', async () => {
  const before = received.length;
  await row('phone').getByRole('button', { name: 'Test' }).click();
  await eventually(() => received.length > before, SOON, 'the receiver got nothing');
  const r = received[before];
  assert.equal(r.url, '/hook');
  const body = JSON.parse(r.body);
  assert.equal(body.trigger, 'test');
  const sig = createHmac('sha256', KEY).update(`${r.headers['x-testbedd-timestamp']}.${r.body}`).digest('hex');
  assert.equal(r.headers['x-testbedd-signature'], `sha256=${sig}`);
  const log = page.locator('table.nf-deliveries');
  await log.locator(`tr[data-delivery="${body.delivery}"][data-state="delivered"]`).waitFor({ timeout: SOON });
  await shoot(page, 'notifications-list', { dark: true });
});

test('a receiver answering 500 makes the rule FAILING, then ok again', async () => {
  rxStatus = 500;
  await row('phone').getByRole('button', { name: 'Test' }).click();
  await row('phone').getByText('FAILING').waitFor({ timeout: SOON });
  assert.match(await row('phone').innerText(), /HTTP 500/);
  await shoot(page, 'notifications-failing', { dark: true });
  // the failing message is retried (or given up on after 8 attempts); a new
  // one that goes through clears the mark
  rxStatus = 200;
  await row('phone').getByRole('button', { name: 'Test' }).click();
  await row('phone').getByText(/^ok$/).waitFor({ timeout: 60_000 });
});

test('Edit fills the form; saving changes the rule', async () => {
  await row('phone').getByRole('button', { name: 'Edit' }).click();
  assert.equal(await page.getByLabel('Name').inputValue(), 'phone');
  assert.equal(await page.getByLabel('Only hosts').inputValue(), 'left');
  assert.ok(await page.getByLabel('a host went down').isChecked());
  await page.getByLabel('Name').fill('phone2');
  await page.getByLabel('a run failed').check();
  await page.getByRole('button', { name: 'Save rule' }).click();
  await row('phone2').waitFor();
  assert.match(await row('phone2').innerText(), /run\.failed/);
  const rules = (await tbd.get('/api/v1/notifications')).rules;
  assert.equal(rules.length, 1);
  assert.equal(rules[0].name, 'phone2');
});

test('Delete removes the rule', async () => {
  page.once('dialog', (d) => d.accept());
  await row('phone2').getByRole('button', { name: 'Delete' }).click();
  await page.getByText('No rules yet').waitFor();
  assert.deepEqual((await tbd.get('/api/v1/notifications')).rules, []);
});

test('an email rule: the form switches to the mail fields, Edit brings them back', async () => {
  await page.getByLabel('Name').fill('mail');
  await page.getByLabel('a host hangs (BMC mismatch)').check();
  await page.getByLabel('Kind').selectOption('email');
  assert.ok(await page.getByLabel('HMAC key file').isHidden());
  await page.getByLabel('URL', { exact: true }).fill('smtp://127.0.0.1:25');
  await page.getByLabel('From').fill('testbedd@lab.example');
  await page.getByLabel('To', { exact: true }).fill('ops@lab.example, two@lab.example');
  await page.getByLabel('TLS').selectOption('none');
  await page.getByLabel('Allow a private host').fill('127.0.0.1');
  await page.getByRole('button', { name: 'Save rule' }).click();
  await row('mail').waitFor();
  assert.match(await row('mail').innerText(), /email → ops@lab\.example, two@lab\.example/);
  const [r] = (await tbd.get('/api/v1/notifications')).rules;
  assert.deepEqual([r.sink.type, r.sink.from, r.sink.to, r.sink.tls], ['email', 'testbedd@lab.example',
    ['ops@lab.example', 'two@lab.example'], 'none']);
  await page.getByRole('button', { name: 'Clear' }).click();
  assert.ok(await page.getByLabel('From').isHidden());
  await row('mail').getByRole('button', { name: 'Edit' }).click();
  assert.equal(await page.getByLabel('From').inputValue(), 'testbedd@lab.example');
  assert.equal(await page.getByLabel('To', { exact: true }).inputValue(), 'ops@lab.example, two@lab.example');
  page.once('dialog', (d) => d.accept());
  await row('mail').getByRole('button', { name: 'Delete' }).click();
  await page.getByText('No rules yet').waitFor();
});

test('a viewer is told the page is for admins', async () => {
  await page.getByRole('button', { name: 'Log out' }).click();
  await login(page, viewerSecret);
  await page.goto(`${tbd.base}/#/notifications`);
  await page.getByText('Notification rules are for admins').waitFor();
  assert.deepEqual(pageErrors.filter((e) => !/status of 40[013]/.test(e)), []);
});

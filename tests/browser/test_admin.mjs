// The Admin page (#/admin) in Debian's Chromium (headless, driven by
// playwright-core) against the real testbedd (no sim: one loopback machine
// that answers nowhere).
//
// In order on one page: an admin opens Admin from the nav; a token made
// with the form shows its secret once (the secret works as a bearer token,
// Copy puts it on the clipboard;
// after "Done", or after leaving and coming back, it is nowhere in the
// page); revoking it from the list ends an event stream opened with it
// (read here, over fetch) and the token is refused afterwards; the audit
// log pages by 50 (Older shows the rows below the last id, Newer comes
// back), and filters by action; the actions log says there are none;
// Sessions lists every user's browser sessions (a second user's, logged in
// from a phone's Firefox, named with its token, browser and address), and
// Revoke ends it: its cookie gets 401, its event stream ends, the row goes
// and the audit names its owner; a viewer is told the page is for admins.  Screenshots (1280x800 and a
// 390x844 phone) go to $TB_BINARY_DIR/screenshots/admin-*.png; no page is
// wider than the phone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Bed, deadInventory, eventStream, eventually, freePort, login, shoot } from './lib/testbed.mjs';

const SOON = 20_000;
const bed = new Bed('admin');
const pageErrors = bed.errors;
let tbd;
let page;
let viewerSecret;

before(async () => {
  const closed = await freePort();
  tbd = await bed.startTestbedd(deadInventory(bed.root, `  left:
    role: host
    os:
      ubuntu: {address: 127.0.0.1, port: ${closed}}
`));
  viewerSecret = (await tbd.post('/api/v1/tokens', { name: 'adm-viewer', role: 'viewer' })).secret;
  // 60 more audit rows: more than one page of 50
  for (let i = 0; i < 60; i++) await tbd.post('/api/v1/tokens', { name: `bulk-${i}`, role: 'viewer' });
  page = await bed.openPage();
});

after(() => bed.close());

const tokenRow = (name) => page.locator('table.adm-tokens tbody tr', { hasText: name });
let secret;

test('an admin opens Admin from the nav and sees the tokens', async () => {
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
  await page.locator('#nav').getByRole('link', { name: 'Admin' }).click();
  await page.locator('h1', { hasText: 'Admin' }).waitFor();
  await tokenRow('adm-viewer').waitFor();
  assert.match(await tokenRow('adm-viewer').innerText(), /viewer[\s\S]*active/);
});

test('a new token is shown once', async () => {
  await page.getByLabel('Name', { exact: true }).fill('phone-ci');
  await page.getByLabel('Role', { exact: true }).selectOption('operator');
  await page.getByRole('button', { name: 'Create token' }).click();
  const box = page.locator('.adm-secret-value');
  await box.waitFor();
  secret = (await box.innerText()).trim();
  assert.ok(secret.length >= 20, `a secret: "${secret}"`);
  await page.getByText('It is shown this once').waitFor();
  await tokenRow('phone-ci').waitFor();
  assert.match(await tokenRow('phone-ci').innerText(), /operator/);
  // it works
  const res = await fetch(`${tbd.base}/api/v1/whoami`, { headers: { Authorization: `Bearer ${secret}` } });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).token.name, 'phone-ci');
  // Copy puts the secret on the clipboard whole (without the page's wrap points)
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: tbd.base });
  await page.getByRole('button', { name: 'Copy', exact: true }).click();
  await page.getByRole('button', { name: 'Copied', exact: true }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
  await shoot(page, 'admin-token-shown', { top: true });
  // Done forgets it; so does leaving the page
  await page.getByRole('button', { name: 'Done' }).click();
  assert.equal(await page.locator('.adm-secret-value').count(), 0);
  assert.ok(!(await page.content()).includes(secret), 'the secret is still in the page after Done');
  await page.getByRole('button', { name: 'Create token' }).click(); // empty name: refused
  await page.locator('.b-error', { hasText: 'name' }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill('once-more');
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.locator('.adm-secret-value').waitFor();
  const other = (await page.locator('.adm-secret-value').innerText()).trim();
  await page.getByRole('link', { name: 'Hosts' }).click();
  await page.locator('#nav').getByRole('link', { name: 'Admin' }).click();
  await tokenRow('once-more').waitFor();
  assert.ok(!(await page.content()).includes(other), 'the secret survived leaving the page');
});

test('revoking a token ends its event stream', async () => {
  const es = await eventStream(tbd.base, { Authorization: `Bearer ${secret}` });
  page.once('dialog', (d) => d.accept());
  await tokenRow('phone-ci').getByRole('button', { name: 'Revoke' }).click();
  await eventually(async () => /revoked/.test(await tokenRow('phone-ci').innerText()), SOON, 'the row did not say revoked');
  await eventually(() => es.ended, SOON, 'the stream of the revoked token is still open');
  await es.done;
  es.abort();
  const after = await fetch(`${tbd.base}/api/v1/whoami`, { headers: { Authorization: `Bearer ${secret}` } });
  assert.equal(after.status, 401);
  assert.equal(await tokenRow('phone-ci').getByRole('button', { name: 'Revoke' }).count(), 0);
});

test('the audit log pages by 50 and filters', async () => {
  await page.getByRole('link', { name: 'Audit log' }).click();
  const rows = page.locator('table.adm-audit tbody tr');
  await eventually(async () => (await rows.count()) === 50, SOON, 'not 50 rows on the first page');
  const ids = async () => (await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.dataset.id))));
  const first = await ids();
  assert.deepEqual(first, [...first].sort((a, b) => b - a), 'newest first');
  assert.match(await rows.first().innerText(), /token\.revoke/);
  assert.match(await rows.first().innerText(), /127\.0\.0\.1/);
  await shoot(page, 'admin-audit', { top: true });
  await page.getByRole('button', { name: 'Older' }).click();
  await eventually(async () => (await ids())[0] < first[49], SOON, 'Older did not page');
  const second = await ids();
  assert.ok(second.length > 0 && second.every((id) => id < first[49]));
  assert.equal(second[0], first[49] - 1, 'no row skipped between the pages');
  await page.getByRole('button', { name: 'Newer' }).click();
  await eventually(async () => (await ids())[0] === first[0], SOON, 'Newer did not come back');
  await page.getByLabel('Action', { exact: true }).fill('token.revoke');
  await page.getByRole('button', { name: 'Filter' }).click();
  await eventually(async () => (await rows.count()) === 1, SOON, 'the action filter');
  assert.match(await rows.first().innerText(), /phone-ci|\d+/);
  assert.equal(await page.getByRole('button', { name: 'Older' }).isDisabled(), true);
});

test('the actions log', async () => {
  await page.getByRole('link', { name: 'Actions' }).click();
  await page.getByText('No actions.').waitFor();
  await shoot(page, 'admin-actions', { top: true });
});

test('sessions: every user\'s, and Revoke ends another\'s', async () => {
  // a second user logs in from a phone
  const res = await fetch(`${tbd.base}/api/v1/session`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': 'Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0',
    },
    body: JSON.stringify({ token: viewerSecret, remember: true }),
  });
  assert.equal(res.status, 200);
  const cookie = res.headers.get('set-cookie').split(';')[0];
  const es = await eventStream(tbd.base, { Cookie: cookie }, 'their stream');

  await page.getByRole('link', { name: 'Sessions', exact: true }).click();
  const row = page.locator('table.adm-sessions tbody tr[data-user="adm-viewer"]');
  await row.waitFor();
  const mine = page.locator('table.adm-sessions tbody tr[data-current="true"]');
  assert.equal(await mine.count(), 1);
  assert.match(await mine.innerText(), /admin[\s\S]*This device/i);
  assert.equal(await mine.getByRole('button').count(), 0);
  const line = await row.innerText();
  assert.match(line, /adm-viewer/);
  assert.match(line, /Firefox on Android/);
  assert.match(line, /127\.0\.0\.1/);
  assert.match(line, /remembered/);
  await page.getByText(/sessions of 2 users/).waitFor();
  await shoot(page, 'admin-sessions', { top: true });

  page.once('dialog', (d) => d.accept());
  await row.getByRole('button', { name: /^Revoke the session of adm-viewer on Firefox on Android/ }).click();
  await eventually(async () => (await row.count()) === 0, SOON, 'the revoked session is still listed');
  await page.getByText('1 session of 1 user').waitFor();
  await eventually(() => es.ended, SOON, 'the revoked session\'s stream is still open');
  await es.done;
  es.abort();
  const who = await fetch(`${tbd.base}/api/v1/whoami`, { headers: { Cookie: cookie } });
  assert.equal(who.status, 401);
  const { audit } = await tbd.get('/api/v1/audit?action=session.end&limit=1');
  assert.match(audit[0].target, /^adm-viewer session \d+$/);
  assert.equal(audit[0].actor, 'admin');
});

test('a viewer is told the page is for admins', async () => {
  await page.locator('#logout').click();
  await login(page, viewerSecret);
  await page.goto(`${tbd.base}/#/admin`);
  await page.getByText('These pages are for admins; you are viewer.').waitFor();
  const unexpected = pageErrors.filter((e) => !/401|403|400/.test(e));
  assert.deepEqual(unexpected, []);
});

// The web pages in Debian's Chromium (headless, driven by playwright-core)
// against the real testbedd and a real sshd on 127.0.0.1.
//
// The inventory: `left` (ubuntu persona on the sshd, its host key pinned;
// freebsd on a closed port), `right` (ubuntu on the same sshd, no key pinned:
// refused until an admin trusts it), `pokeitwithastick` (freebsd on the same
// sshd, pinned to another key: a changed key, never trusted) and `openwrt`
// (a relay on a closed port).
// The cases run in order on one page, which is loaded once: log in (a wrong
// token first), see the machines, trust right's key from the keyboard, see
// left go down and up again as the sshd stops and starts (no reload), lose
// the live connection (testbedd restarts while the page cannot reach the
// stream) and get it back with the change made meanwhile and every event
// once (EventSource resuming by itself with Last-Event-ID after a network
// error; the page opening a new stream with ?since= after an HTTP error), a
// `reset` event reloads the list, log out, a viewer sees no Trust button;
// then the failed-login limit (last: it blocks logins from 127.0.0.1 for a
// minute).  Screenshots (hosts page at 1280x800 and 390x844, light and dark;
// the login page on the phone; the top bar while reconnecting) go to
// $TB_BINARY_DIR/screenshots/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  Bed, DESKTOP, PHONE, Sshd, eventually, freePort, shoot, shotsDir, sleep,
} from './lib/testbed.mjs';

// pokeitwithastick's pin: not the key its sshd presents (a changed key).
const WRONG_KEY = 'SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const SOON = 15_000;   // probes run every second; a change shows within a few
const bed = new Bed('web');
const pageErrors = bed.errors;
let sshd;
let tbd;
let browser;
let page;
let shots;
let closedPort;

before(async () => {
  const sshDir = path.join(bed.root, 'ssh');
  mkdirSync(sshDir, { mode: 0o700 });
  const closed = await freePort();
  closedPort = closed;
  sshd = new Sshd(sshDir, await freePort());
  await sshd.start();
  tbd = await bed.startTestbedd(`version: 1
ssh:
  user: root
  key_file: ${sshd.clientKey}
  connect_timeout_s: 2
  command_timeout_s: 5
machines:
  left:
    role: host
    mac: "02:00:00:00:00:01"
    power:
      - {driver: wol, via: relay, relay: openwrt, interface: br-lan, command: etherwake}
      - {driver: command, on: [/bin/true, "{host}"], status: [/bin/echo, "plug 1: ON"], on_pattern: "ON"}
    console: {type: tcp, address: 127.0.0.1, port: ${closed}}
    boot: {loader: grub, default: ubuntu, entries: {ubuntu: "0", freebsd: "4"}}
    os:
      ubuntu: {address: 127.0.0.1, port: ${sshd.port}, host_key: "${sshd.fingerprint}"}
      freebsd: {address: 127.0.0.2, port: ${closed}}
    links:
      lan10: {address: 198.19.10.2/24, ifname: {ubuntu: enp9s0, freebsd: mlxen0}}
    idle_poweroff_min: 60
  right:
    role: host
    power:
      - {driver: redfish, url: "https://127.0.0.1:${closed}", user: admin, password_env: TB_TEST_NO_SUCH_VAR, insecure: true}
    os:
      ubuntu: {address: 127.0.0.1, port: ${sshd.port}}
  pokeitwithastick:
    role: router
    os:
      freebsd: {address: 127.0.0.1, port: ${sshd.port}, host_key: "${WRONG_KEY}"}
  openwrt:
    role: relay
    os:
      openwrt: {address: 127.0.0.1, port: ${closed}}
`);
  shots = shotsDir();
  page = await bed.openPage(DESKTOP, { timeout: SOON });
  browser = bed.browser;
  // Record every event the page's EventSources deliver (id and type), to
  // check later that the page saw each event of the stream exactly once.
  await page.addInitScript(() => {
    const Native = window.EventSource;
    window.__tb = { events: [], sources: 0 };
    window.EventSource = class extends Native {
      constructor(url, init) {
        super(url, init);
        window.__tb.sources += 1;
        for (const type of ['host.state', 'reset']) {
          this.addEventListener(type, (e) => window.__tb.events.push({ id: Number(e.lastEventId), type }));
        }
      }
    };
  });
});

after(async () => {
  await bed.browser?.close().catch(() => {});
  await sshd?.stop();
  await bed.close();
});

const card = (name) => page.locator(`li.host[data-host="${name}"]`);
const reach = (name) => card(name).getAttribute('data-reachability');
const stateText = async (name) => (await card(name).locator('.state').innerText()).trim();
const liveState = () => page.locator('#live').getAttribute('data-state');

/** The state every live case starts from: sshd runs, the stream is not intercepted, left is up, live. */
async function steady() {
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  if (!sshd.running) await sshd.start();
  await waitReach('left', 'up');
  await waitLive('live', 30_000);
}

async function waitReach(name, want, ms = SOON) {
  await eventually(async () => (await reach(name)) === want, ms,
    async () => `${name} should show ${want}; the page says ${await reach(name)} ("${await stateText(name).catch(() => '?')}"); ` +
      `the API says ${JSON.stringify((await tbd.get(`/api/v1/hosts/${name}`)).host.state)}`);
}

async function waitLive(want, ms = SOON) {
  await eventually(async () => (await liveState()) === want, ms,
    async () => `the live indicator should say ${want}; it says ${await liveState()} ("${await page.locator('#live').innerText()}")`);
}

/** The page was loaded once and never navigated away from. */
async function sameDocument() {
  const nav = await page.evaluate(() => ({
    navigations: performance.getEntriesByType('navigation').length,
    marker: window.__tbMarker ?? null,
  }));
  assert.deepEqual(nav, { navigations: 1, marker: 'loaded once' }, 'the page was reloaded or navigated');
}

const eventSources = () => page.evaluate(() => window.__tb.sources);

/**
 * Every host.state event the stream holds from the first one the page saw
 * to the last arrived at the page exactly once, in order, and no reset.
 */
async function eachEventOnce() {
  const seen = await page.evaluate(() => window.__tb.events);
  assert.ok(seen.length >= 3, `the page saw ${seen.length} events`);
  assert.equal(seen.filter((e) => e.type === 'reset').length, 0, 'no reset: nothing was dropped');
  const ids = seen.map((e) => e.id);
  const all = (await tbd.replay(`since=${ids[0] - 1}&type=host.state`)).map((e) => e.id);
  const last = ids[ids.length - 1];
  assert.deepEqual(ids, all.filter((id) => id <= last),
    'the page saw each event once (actual: the page; expected: the stream replayed from the first the page saw)');
}

test('a wrong token is refused with a message; the admin token logs in', async () => {
  await page.goto(`${tbd.base}/`);
  await page.evaluate(() => { window.__tbMarker = 'loaded once'; });
  const input = page.getByLabel('API token');
  await input.waitFor();
  assert.ok(await input.evaluate((el) => el === document.activeElement), 'the token field has the focus');
  await input.fill('tbk_not_a_token');
  await page.getByRole('button', { name: 'Log in' }).click();
  const error = page.locator('#login-error');
  await error.waitFor({ state: 'visible' });
  assert.match(await error.innerText(), /refused/i);
  assert.equal(await page.locator('#session').isVisible(), false, 'no session is shown after a refused token');
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: path.join(shots, 'login-phone.png') });
  await page.setViewportSize(DESKTOP);

  await input.fill(tbd.adminToken);
  await page.keyboard.press('Enter');
  await page.locator('h1', { hasText: 'Hosts' }).waitFor();
  assert.equal(await input.count(), 0, 'the login form is gone');
  const who = await page.locator('#who').innerText();
  assert.match(who, /admin/, `the top bar names the session: ${who}`);
  await waitLive('live');
  assert.equal(await page.locator('#live').innerText(), 'live');
  // The token is kept nowhere: not in storage, not in the URL; the cookie is HttpOnly.
  const kept = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) +
    location.href + document.cookie);
  assert.ok(!kept.includes(tbd.adminToken), 'the token is stored somewhere the page can read');
  const cookies = await browser.cookies();
  const session = cookies.find((c) => c.name === 'tb_session');
  assert.ok(session?.httpOnly && session.sameSite === 'Strict', `session cookie: ${JSON.stringify(session)}`);
  await sameDocument();
});

test('the hosts page lists the machines; left is up as ubuntu, right shows its refused key', async () => {
  const names = await page.locator('li.host').evaluateAll((els) => els.map((e) => e.dataset.host));
  assert.deepEqual(names, ['left', 'right', 'pokeitwithastick', 'openwrt']);
  await waitReach('left', 'up');
  assert.match(await stateText('left'), /^up as ubuntu for \d+ (s|min)$/);
  const answering = await card('left').locator('.persona.answering').evaluateAll((els) => els.map((e) => e.dataset.os));
  assert.deepEqual(answering, ['ubuntu'], 'the ubuntu persona is marked as the one that answers');
  assert.match(await card('left').locator('.persona[data-os="ubuntu"]').innerText(), new RegExp(`root@127\\.0\\.0\\.1:${sshd.port}`));
  assert.ok((await card('left').innerText()).includes(sshd.fingerprint), 'the pinned key is shown');
  assert.match(await card('left').locator('.facts').innerText(), /grub, default ubuntu/);
  // every power method, as the inventory has it: a command's actions; Redfish's TLS said plainly
  assert.match(await card('left').locator('.facts').innerText(), /command \(on, status\)/);
  assert.match(await card('right').locator('.facts').innerText(),
    new RegExp(`Redfish admin@https://127\\.0\\.0\\.1:${closedPort} \\(basic auth\\) TLS certificate NOT checked`));

  await waitReach('openwrt', 'down');
  assert.match(await card('openwrt').locator('.last-error').innerText(), /unreachable/);

  await eventually(() => card('right').locator('.refused-key').count(), SOON, 'right shows no refused host key');
  const refused = await card('right').locator('.refused-key').innerText();
  assert.ok(refused.includes(sshd.fingerprint), `right's refused key shows the fingerprint sshd presents: ${refused}`);
  assert.equal(await reach('right'), 'down');
  assert.match(refused, /none is pinned yet/);
  await eventually(() => card('pokeitwithastick').locator('.refused-key').count(), SOON, 'pokeitwithastick shows no refused key');
  const changed = await card('pokeitwithastick').locator('.refused-key').innerText();
  assert.match(changed, /differs from the pinned one/);
  assert.ok(changed.includes(sshd.fingerprint) && changed.includes(WRONG_KEY), `both keys are shown: ${changed}`);

  await shoot(page, 'hosts', { dark: true });
  await sameDocument();
});

test('an admin trusts right\'s key from the keyboard, after a confirmation', async () => {
  const button = card('right').getByRole('button', { name: 'Trust this key' });
  await button.focus();
  await page.keyboard.press('Enter');
  const dialog = page.locator('dialog.trust-dialog');
  await dialog.waitFor({ state: 'visible' });
  assert.ok((await dialog.innerText()).includes(sshd.fingerprint), 'the dialog shows the fingerprint once more');
  // Cancel first: nothing changes.
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  assert.equal(await card('right').locator('.refused-key').count(), 1);
  await button.focus();
  await page.keyboard.press('Enter');
  await dialog.waitFor({ state: 'visible' });
  const trust = dialog.getByRole('button', { name: 'Trust this key' });
  await trust.focus();
  await page.keyboard.press('Enter');
  await waitReach('right', 'up');
  assert.match(await stateText('right'), /^up as ubuntu/);
  assert.equal(await card('right').locator('.refused-key').count(), 0);
  const pinned = (await tbd.get('/api/v1/hosts/right')).host.os.ubuntu.host_key;
  assert.equal(pinned, sshd.fingerprint, 'testbedd pinned the key');
  const audit = await tbd.get('/api/v1/audit?host=right');
  assert.ok(audit.audit.some((e) => e.action === 'host.trust' && e.target === 'right' && e.result === 'ok'),
    `the trust is audited: ${JSON.stringify(audit)}`);
  await sameDocument();
});

test('a reachability change arrives without a reload', async () => {
  await steady();
  await sshd.stop();
  await waitReach('left', 'down');
  assert.match(await stateText('left'), /^down/);
  assert.equal(await card('left').locator('.persona.answering').count(), 0, 'no persona answers');
  assert.ok(await card('left').locator('.last-error').count(), 'the error is shown');
  await sshd.start();
  await waitReach('left', 'up');
  assert.match(await stateText('left'), /^up as ubuntu for/);
  await sameDocument();
});

test('the live connection is lost and regained without missing an event', async () => {
  await steady();
  // The page cannot reach the stream from now on, and testbedd restarts
  // (same port, same state dir), so the open stream drops too.
  // A network error: EventSource retries by itself and resumes with Last-Event-ID.
  const sources = await eventSources();
  let refused = 0;
  await page.route('**/api/v1/events**', (route) => { refused += 1; return route.abort('connectionrefused'); });
  const { timedOut } = await tbd.stop();
  assert.equal(timedOut, false, `testbedd took more than 10 s to stop with a stream open:\n${tbd.proc.log()}`);
  await waitLive('reconnecting');
  assert.equal(await page.locator('#live').innerText(), 'reconnecting…');
  await page.screenshot({ path: path.join(shots, 'hosts-reconnecting-desktop.png') });
  await tbd.start();
  await eventually(async () => (await tbd.get('/api/v1/hosts/left')).host.state.reachability === 'up', SOON,
    'left is not up after the restart');
  // A change while the page is cut off: the page must not see it yet...
  await sshd.stop();
  await eventually(async () => (await tbd.get('/api/v1/hosts/left')).host.state.reachability === 'down', SOON,
    'testbedd did not see left go down');
  await sleep(1500);
  assert.equal(await reach('left'), 'up', 'the page learned of the change while the stream was cut off');
  assert.equal(await liveState(), 'reconnecting');
  await eventually(() => refused > 0, SOON, 'the page did not try to reconnect');
  // ...and gets it when the stream is back, by resuming.
  await page.unroute('**/api/v1/events**');
  await waitLive('live', 30_000);
  await waitReach('left', 'down');
  assert.equal(await eventSources(), sources, 'the same EventSource resumed (Last-Event-ID)');
  await sshd.start();
  await waitReach('left', 'up');
  await sameDocument();
  await eachEventOnce();
});

test('the stream answers an HTTP error: the page opens a new one that resumes with ?since=', async () => {
  await steady();
  // A 503 makes EventSource give up for good (readyState CLOSED): the page
  // must open a new stream itself, from the last event it saw.
  const sources = await eventSources();
  let refused = 0;
  await page.route('**/api/v1/events**', (route) => {
    refused += 1;
    return route.fulfill({
      status: 503, contentType: 'application/json',
      body: '{"error":{"code":"internal_error","message":"a proxy in the way","field":""}}',
    });
  });
  await tbd.stop();
  await waitLive('reconnecting');
  // EventSource tries once more by itself (after ~3 s), gets the 503 and gives up.
  await eventually(async () => refused > 0 && await eventSources() > sources, 30_000,
    async () => `the page did not open a new EventSource after a 503 (${refused} refused)`);
  await tbd.start();
  await eventually(async () => (await tbd.get('/api/v1/hosts/left')).host.state.reachability === 'up', SOON,
    'left is not up after the restart');
  await sshd.stop();
  await eventually(async () => (await tbd.get('/api/v1/hosts/left')).host.state.reachability === 'down', SOON,
    'testbedd did not see left go down');
  await sleep(1500);
  assert.equal(await reach('left'), 'up', 'the page learned of the change while the stream was cut off');
  const urls = [];
  const onRequest = (req) => { if (req.url().includes('/api/v1/events')) urls.push(req.url()); };
  page.on('request', onRequest);
  await page.unroute('**/api/v1/events**');
  await waitLive('live', 30_000);
  await waitReach('left', 'down');
  page.off('request', onRequest);
  assert.ok(await eventSources() > sources, 'the page opened a new EventSource');
  assert.ok(urls.some((u) => /[?&]since=\d+/.test(u)), `the new stream resumes with ?since=: ${urls.join(' ')}`);
  await sshd.start();
  await waitReach('left', 'up');
  await sameDocument();
  await eachEventOnce();
});

test('a reset event (events dropped before the page saw them) makes the page reload the machines', async () => {
  await steady();
  const resets = async () => (await page.evaluate(() => window.__tb.events)).filter((e) => e.type === 'reset').length;
  const before = await resets();
  // The stream is cut off, left goes down meanwhile, then the page's next
  // connection hears only `reset` (as testbedd says it when its store no
  // longer holds the events after Last-Event-ID) and nothing more: only a
  // reload of GET /api/v1/hosts can tell the page that left is down.
  let resetFree = false;   // the next attempt gets the reset; every other one fails
  await page.route('**/api/v1/events**', (route) => {
    if (!resetFree) return route.abort('connectionrefused');
    resetFree = false;
    return route.fulfill({ status: 200, contentType: 'text/event-stream', body: 'event: reset\ndata: {"oldest":1}\n\n' });
  });
  await tbd.stop();
  await waitLive('reconnecting');
  await tbd.start();
  await sshd.stop();
  await eventually(async () => (await tbd.get('/api/v1/hosts/left')).host.state.reachability === 'down', SOON,
    'testbedd did not see left go down');
  await sleep(1500);
  assert.equal(await reach('left'), 'up', 'the page learned of the change while the stream was cut off');
  const loads = [];
  const onRequest = (req) => { if (/\/api\/v1\/hosts$/.test(new URL(req.url()).pathname)) loads.push(req.url()); };
  page.on('request', onRequest);
  resetFree = true;
  await eventually(async () => (await resets()) > before, 30_000, 'the page got no reset event');
  await waitReach('left', 'down');
  page.off('request', onRequest);
  assert.ok(loads.length >= 1, 'the page fetched GET /api/v1/hosts again');
  await page.unroute('**/api/v1/events**');
  await waitLive('live', 30_000);
  await sshd.start();
  await waitReach('left', 'up');
  await sameDocument();
});

test('logging out returns to the login page and ends the session', async () => {
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByLabel('API token').waitFor();
  assert.equal(await page.locator('#session').isVisible(), false);
  assert.equal(await page.locator('li.host').count(), 0);
  const status = await page.evaluate(async () => (await fetch('api/v1/whoami')).status);
  assert.equal(status, 401, 'the session cookie still works after logout');
  assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'the CSRF token is forgotten');
  await sameDocument();
});

test('a viewer sees the machines and a refused key, but no button to trust it', async () => {
  const { secret } = await tbd.post('/api/v1/tokens', { name: 'web-viewer', role: 'viewer' });
  await page.getByLabel('API token').fill(secret);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('h1', { hasText: 'Hosts' }).waitFor();
  assert.match(await page.locator('#who').innerText(), /web-viewer\s+viewer/);
  await waitLive('live');
  await eventually(() => card('pokeitwithastick').locator('.refused-key').count(), SOON, 'no refused key shown');
  assert.match(await card('pokeitwithastick').locator('.refused-key').innerText(), /An admin can accept it/);
  assert.equal(await page.getByRole('button', { name: 'Trust this key' }).count(), 0);
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByLabel('API token').waitFor();
  await sameDocument();
});

test('too many failed logins show how long to wait', async () => {
  const input = page.getByLabel('API token');
  const error = page.locator('#login-error');
  for (let i = 0; i < 15; i++) {
    await input.fill(`tbk_wrong_${i}`);
    await page.getByRole('button', { name: 'Log in' }).click();
    await eventually(async () => (await error.isVisible()) && (await error.innerText()).length > 0, SOON, 'no error shown');
    if (/wait \d+ s/.test(await error.innerText())) break;
    await error.evaluate((el) => { el.hidden = true; el.textContent = ''; });
  }
  assert.match(await error.innerText(), /Too many failed logins from this address: wait \d+ s/);
  assert.equal(await page.getByRole('button', { name: 'Log in' }).isDisabled(), true, 'Log in waits');
});

test('no script errors on the page', () => {
  // A failed EventSource or a refused fetch logs a network error: those are expected here.
  const real = pageErrors.filter((e) => !/Failed to load resource|net::ERR_|EventSource/.test(e));
  assert.deepEqual(real, []);
});

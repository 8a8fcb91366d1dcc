// The console page at phone size (390x844), in Debian's Chromium against the
// real testbedd and the simulated testbed, whose hosts have serial consoles
// served by ser2net (deploy/sim; prefix tbcb, block 207).  An admin opens left's
// console from its host card and sees the scrollback (GRUB's menu, the kernel's
// lines, the login prompt) in xterm.js; left is rebooted with a boot that hangs
// at the mlx4_en line (the sim's console-hang fault): the page shows the boot
// live and stops at that line; the admin takes the lease (the page names the
// holder), presses the Ctrl-C button: the boot goes on, the login prompt
// arrives and left answers ssh again (testbedd says up).  The key row sends
// each key (Break, Esc, Tab, arrows; the sticky Ctrl makes the next letter a
// control character, once), and the kept boot logs are the API's, each a
// download, the hung boot's among them.  No script or style
// is refused by the CSP (console.html may use inline styles; scripts stay
// 'self').  Screenshots: console-phone-hung.png, console-phone-booted.png in
// $TB_BINARY_DIR/screenshots/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  Bed, PHONE, eventually, login, shotsDir, sideways,
} from './lib/testbed.mjs';

const PREFIX = 'tbcb';
const BLOCK = '207';
const NET = `198.18.${BLOCK}`;
const SOON = 20_000;
const bed = new Bed('console');
const pageErrors = bed.errors;
let simDir;
let tbd;
let page;

function ssh(addr, cmd) {
  return execFileSync('ssh', ['-F', '/dev/null', '-i', path.join(simDir, 'id_ed25519'), '-o', 'IdentitiesOnly=yes',
    '-o', 'BatchMode=yes', '-o', `UserKnownHostsFile=${path.join(simDir, 'known_hosts')}`,
    '-o', 'StrictHostKeyChecking=yes', '-o', 'ConnectTimeout=3', `root@${addr}`, cmd],
  { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] });
}

before(async () => {
  try {
    execFileSync('sh', ['-c', 'command -v ser2net']);
  } catch {
    throw new Error('no ser2net: deploy/setup installs it (the sim serves its consoles with it)');
  }
  tbd = await bed.startTestbedd(bed.upSim(PREFIX, BLOCK));
  simDir = bed.simDir;
  await eventually(async () => (await tbd.get('/api/v1/hosts/left')).host.console_state?.connected === true,
    SOON, 'left\'s console is not connected in testbedd');
  page = await bed.openPage(PHONE);
});

after(() => bed.close());

const screen = () => page.locator('#term .xterm-rows').innerText();
const lastRow = (text) => text.trimEnd().split('\n').pop();

async function waitScreen(text, ms = SOON) {
  await eventually(async () => (await screen()).includes(text), ms,
    async () => `the console page does not show "${text}"; it shows:\n${(await screen()).slice(-600)}`);
}

test('a hung boot unstuck with the Ctrl-C button, at phone size', { timeout: 120_000 }, async () => {
  await page.goto(`${tbd.base}/`);
  await page.getByLabel('API token').waitFor({ timeout: SOON }).catch((err) => {
    throw new Error(`no login form: ${err.message}; page errors: ${pageErrors.join('; ')}`);
  });
  await login(page, tbd.adminToken);
  const link = page.locator('li.host[data-host="left"] a.console-link');
  await link.waitFor();
  pageErrors.length = 0; // the shell's whoami before the login is a 401 in the console: not the page's
  await link.click();
  await page.waitForURL(/console\.html#left$/);
  await page.locator('#title', { hasText: 'left console' }).waitFor();
  // the scrollback: the boot at sim up
  await waitScreen('left login:');
  assert.match(await screen(), /Booting `Ubuntu'/);
  await eventually(async () => (await page.locator('#conn').innerText()) === 'connected', SOON, 'not shown connected');

  // a boot that hangs at the mlx4_en line, watched live
  writeFileSync(path.join(simDir, 'hosts', 'left', 'console-hang'), 'once\n');
  ssh(`${NET}.11`, 'reboot');
  await eventually(async () => lastRow(await screen()).includes('Using 16 TX rings'), SOON,
    async () => `the boot does not stop at the mlx4_en line; the page shows:\n${(await screen()).slice(-600)}`);
  await eventually(async () => (await tbd.get('/api/v1/hosts/left')).host.state.reachability !== 'up', SOON,
    'left still answers while its boot hangs');
  assert.match(lastRow(await screen()), /Using 16 TX rings/, 'still hung');

  // the lease, then Ctrl-C
  assert.equal(await page.locator('#keys [data-key="ctrl-c"]').isDisabled(), true, 'Ctrl-C needs the lease');
  await page.getByRole('button', { name: 'Take the lease' }).click();
  await eventually(async () => (await page.locator('#status').innerText()).includes('you hold the lease'), SOON,
    async () => `the page does not say who holds the lease: ${await page.locator('#status').innerText()}`);
  await page.screenshot({ path: path.join(shotsDir(), 'console-phone-hung.png') });
  assert.ok((await sideways(page)) <= 0, 'the page fits the phone\'s width (no sideways scrolling)');
  // each key's label fits its button (the bold Ctrl-C was clipped to "Ctrl-(" at 390 px)
  const clipped = await page.locator('#keys button').evaluateAll((bs) => bs
    .filter((b) => b.scrollWidth > b.clientWidth).map((b) => b.textContent));
  assert.deepEqual(clipped, [], 'a key button clips its label');
  await page.locator('#keys [data-key="ctrl-c"]').click();
  await waitScreen('^C');
  await eventually(async () => (await screen()).split('Using 16 TX rings').pop().includes('left login:'), SOON,
    'no login prompt after Ctrl-C');
  await eventually(async () => {
    const st = (await tbd.get('/api/v1/hosts/left')).host.state;
    return st.reachability === 'up' && st.os === 'ubuntu';
  }, 60_000, 'left does not answer ssh after Ctrl-C');
  await page.screenshot({ path: path.join(shotsDir(), 'console-phone-booted.png') });

  // typing goes to the console (the sim echoes)
  await page.locator('#term').click();
  await page.keyboard.type('root');
  await waitScreen('left login: root');

  // the key row for phones: with the lease every key is enabled and each
  // click is sent as that key; the sticky Ctrl holds for the next letter only
  const keys = ['esc', 'tab', 'left', 'up', 'down', 'right', 'enter'];
  for (const k of keys) {
    assert.equal(await page.locator(`#keys [data-key="${k}"]`).isDisabled(), false, `${k} needs only the lease`);
  }
  // the sim's consoles are raw TCP (ser2net raw): no Break there, and the button says why
  // (the API refuses it with 400: sim/test_console.sh)
  const brk = page.locator('#keys [data-key="break"]');
  assert.equal(await brk.isDisabled(), true, 'Break is offered on a raw TCP console');
  assert.match(await brk.getAttribute('title'), /raw TCP, which has no Break/);
  const sent = (body) => page.waitForResponse((r) => r.url().endsWith('/api/v1/hosts/left/console/input') &&
    r.request().method() === 'POST' && r.request().postData() === body);
  for (const k of ['esc', 'tab', 'left', 'up', 'down', 'right']) {
    const [reply] = await Promise.all([sent(JSON.stringify({ key: k })), page.locator(`#keys [data-key="${k}"]`).click()]);
    assert.equal(reply.ok(), true, `the ${k} key: ${reply.status()}`);
  }
  const ctrl = page.locator('#ctrl');
  await ctrl.click();
  assert.equal(await ctrl.getAttribute('aria-pressed'), 'true');
  const [ctrlU] = await Promise.all([sent(JSON.stringify({ text: '\u0015' })), page.keyboard.type('u')]);
  assert.equal(ctrlU.ok(), true, `Ctrl then u is ^U: ${ctrlU.status()}`);
  assert.equal(await ctrl.getAttribute('aria-pressed'), 'false', 'the sticky Ctrl holds for one key only');

  // the kept boot logs, each a download of the API's log: the hung boot's has the mlx4_en line
  await page.locator('#logs summary').click();
  const links = page.locator('#loglist a');
  await links.first().waitFor();
  const { logs } = await tbd.get('/api/v1/hosts/left/console/logs');
  assert.deepEqual(await links.evaluateAll((as) => as.map((a) => [a.getAttribute('href'), a.getAttribute('download')])),
    logs.map((l) => [`api/v1/hosts/left/console/logs/${l.id}`, `left-${l.id}.log`]));
  const texts = await links.evaluateAll((as) => Promise.all(as.map(async (a) => (await fetch(a.href)).text())));
  assert.ok(texts.some((t) => t.includes('Using 16 TX rings')), 'no kept log has the hung boot');
  assert.deepEqual(pageErrors, [], 'no page error, nothing refused by the CSP');
});

test('a console a reload removed: the page says it is gone, not "reconnecting…" for ever', { timeout: 60_000 }, async () => {
  const inv = readFileSync(tbd.inventory, 'utf8');
  const without = inv.replace(/^ {4}console: \{type: tcp, address: [0-9.]+, port: 2001\}\n/m, '');
  assert.notEqual(without, inv, 'left\'s console line is in the sim\'s inventory');
  writeFileSync(tbd.inventory, without);
  const res = await fetch(`${tbd.base}/api/v1/inventory/reload`, { method: 'POST',
    headers: { Authorization: `Bearer ${tbd.adminToken}` } });
  assert.equal(res.status, 200, `inventory reload: ${res.status} ${await res.text()}`);
  await eventually(async () => (await page.locator('#conn').innerText()) === 'closed', SOON,
    async () => `the page does not say closed: ${await page.locator('#conn').innerText()}`);
  assert.match(await page.locator('#status').innerText(),
    /its console is no longer in the inventory \(reloaded\): this console is gone/);
  await page.screenshot({ path: path.join(shotsDir(), 'console-phone-removed.png') });
});

// A failed boot's last console lines on the hosts page (issue 18 item 4), in
// Debian's Chromium against the real testbedd and the simulated testbed
// (prefix tbcw, block 247).  left's next boot hangs at the Mellanox driver's
// line (the sim's console-hang fault) and its boot times out after 8 s: an
// admin clicks "Boot FreeBSD" and, when the action fails, its last step shows
// the console's last lines open (not behind a click), as a terminal shows
// them: monospace, one console line a line (white-space: pre), the hung
// driver's line last, no escape bytes.  Screenshots of left's card at phone
// size (light) go to $TB_BINARY_DIR/screenshots/console-boot-failed-phone.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Bed, DESKTOP, PHONE, eventually, login as logIn, shotsDir } from './lib/testbed.mjs';

const PREFIX = 'tbcw';
const BLOCK = '247';
const SOON = 15_000;
const bed = new Bed('console-boot');
let tbd;
let page;

before(async () => {
  const inventory = bed.upSim(PREFIX, BLOCK)
    .replace('  left:\n    role: host\n', '  left:\n    role: host\n    boot_timeout_s: 8\n');
  assert.match(inventory, /boot_timeout_s: 8\n/);
  assert.match(inventory, /console: \{type: tcp/, 'the sim has no consoles (ser2net)');
  tbd = await bed.startTestbedd(inventory);
  await bed.hostsUp();
  await eventually(async () => (await tbd.get('/api/v1/hosts/left')).host.console_state?.connected === true, SOON,
    'left\'s console is not connected');
  page = await bed.openPage();
});

after(() => bed.close());

const card = (name) => page.locator(`li.host[data-host="${name}"]`);
const panel = (name) => card(name).locator('section.action');

test('a failed boot shows the console\'s last lines, open and monospace', { timeout: 120_000 }, async () => {
  await page.goto(`${tbd.base}/`);
  await logIn(page, tbd.adminToken);
  writeFileSync(path.join(bed.simDir, 'hosts', 'left', 'console-hang'), 'once\n');
  await card('left').getByRole('button', { name: 'Boot FreeBSD' }).click();
  await panel('left').waitFor();
  const id = Number(await panel('left').getAttribute('data-action'));
  await eventually(async () => (await panel('left').getAttribute('data-state').catch(() => null)) === 'failed', 60_000,
    async () => `the boot should fail; the API says ${JSON.stringify((await tbd.get(`/api/v1/actions/${id}`)).action)}`);
  const steps = (await tbd.get(`/api/v1/actions/${id}`)).action.steps;
  const last = steps[steps.length - 1];
  assert.equal(last.what, 'last console lines of left since the action began (the boot failed)');

  const step = panel('left').locator(`.step[data-step="${last.id}"]`);
  await step.waitFor();
  const more = step.locator('details.step-more');
  assert.equal(await more.getAttribute('open'), '', 'the console lines are shown open');
  assert.match(await more.locator('summary').innerText(), /^console \(\d+ lines\)$/);
  const pre = more.locator('pre.step-console');
  const text = await pre.innerText();
  const lines = text.split('\n');
  assert.equal(lines[lines.length - 1], 'mlx4_core: Initializing mlx4_core', `the hung driver's line last: ${text}`);
  assert.ok(lines.some((l) => l.trim() === 'Booting `FreeBSD 14.1\''), text);
  assert.ok(!/[\x1b\r]/.test(text), 'no escape bytes');
  const style = await pre.evaluate((el) => {
    const s = getComputedStyle(el);
    return { font: s.fontFamily, ws: s.whiteSpace };
  });
  assert.match(style.font, /mono/i, `monospace: ${style.font}`);
  assert.equal(style.ws, 'pre');

  await page.setViewportSize(PHONE);
  await step.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shotsDir(), 'console-boot-failed-phone.png') });
  await page.setViewportSize(DESKTOP);
  assert.deepEqual(bed.errors.filter((e) => e.startsWith('pageerror')), []); // a 401 before the login is the page asking
});

// Power and boot from the hosts page, in Debian's Chromium (headless, driven
// by playwright-core), against the real testbedd and the simulated testbed
// (deploy/sim: real sshd personas, grub-editenv, ipmi_sim, etherwake).
//
// The sim runs under prefix tbwb, block 236 (198.18.236.0/24), with a 5 s boot
// delay so that a running action stays on the screen long enough to look at.
// The cases run in order on one page: an admin sees the power buttons and the
// OS picker; clicks "Boot FreeBSD" on left and sees the action's steps arrive
// live (the grub-reboot command among them, in monospace), the elapsed time
// tick, the card say "Held by action N by admin", a second click answered
// with the 409 that names the holder, each step how long it took, and left
// come up as freebsd (a tab opened meanwhile shows the same action and
// steps, from GET /api/v1/actions); powers right off (after a confirmation; cancelling it
// first does nothing) and on again, seeing it go down and come up with the
// phases in between; opens right's recent actions and one action's steps; a
// viewer sees the states and the actions but no button.  Beside
// reachability, left's card shows what its BMC says ("BMC (ipmi): on ·
// checked 3 s ago"; testbedd reads it every 5 s here) and right's the idle
// power-off countdown (idle_poweroff_min 60, ticking) and its wake schedule's next time; left's sshd killed on
// a chassis that stays on shows the mismatch warning.  Screenshots of
// left's card with its running action (1280x800 and a 390x844 phone, light
// and dark) go to $TB_BINARY_DIR/screenshots/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  Bed, DESKTOP, PHONE, eventually, login as logIn, shotsDir, sideways, sleep,
} from './lib/testbed.mjs';

const PREFIX = 'tbwb';
const BLOCK = '236';
const SOON = 15_000;
const BOOT = 90_000;     // a boot switch on the sim takes ~10 s; the limit is generous
const bed = new Bed('power');
const pageErrors = bed.errors;
let tbd;
let page;
let viewerSecret;

before(async () => {
  // right idles for an hour (never reached here): its countdown is shown
  const inventory = bed.upSim(PREFIX, BLOCK, ['--boot-delay', '5'])
    .replace('  right:\n    role: host\n', '  right:\n    role: host\n    idle_poweroff_min: 60\n    wake_schedule: "30 7 * * mon-fri"\n');
  assert.match(inventory, /idle_poweroff_min: 60\n    wake_schedule/);
  tbd = await bed.startTestbedd(inventory, ['--bmc-interval', '5']);
  await bed.hostsUp();
  viewerSecret = (await tbd.post('/api/v1/tokens', { name: 'power-viewer', role: 'viewer' })).secret;
  page = await bed.openPage();
});

after(() => bed.close());

const card = (name) => page.locator(`li.host[data-host="${name}"]`);
const reach = (name) => card(name).getAttribute('data-reachability');
const stateText = async (name) => (await card(name).locator('.state').innerText()).trim();
const panel = (name) => card(name).locator('section.action');

/** A screenshot of card name alone (clipped from the full page: the sticky top bar covers none of it). */
async function shootCard(name, file) {
  const clip = await card(name).evaluate((el) => {
    const r = el.getBoundingClientRect();
    return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height };
  });
  await page.screenshot({ path: path.join(shotsDir(), file), fullPage: true, clip });
}

async function waitReach(name, want, ms = SOON) {
  await eventually(async () => (await reach(name)) === want, ms,
    async () => `${name} should show ${want}; the page says ${await reach(name)} ("${await stateText(name).catch(() => '?')}"); ` +
      `the API says ${JSON.stringify((await tbd.get(`/api/v1/hosts/${name}`)).host.state)}`);
}

/** Wait until name's action panel shows action state want; returns the action's id. */
async function waitAction(name, want, ms = BOOT) {
  await eventually(async () => (await panel(name).getAttribute('data-state').catch(() => null)) === want, ms,
    async () => {
      const id = await panel(name).getAttribute('data-action').catch(() => null);
      const api = id ? JSON.stringify((await tbd.get(`/api/v1/actions/${id}`)).action) : 'no action shown';
      return `${name}'s action should be ${want}; the page says ${await panel(name).getAttribute('data-state').catch(() => '?')}; ` +
        `the API says ${api}`;
    });
  return Number(await panel(name).getAttribute('data-action'));
}

async function login(token) {
  await logIn(page, token);
  await eventually(async () => (await page.locator('#live').getAttribute('data-state')) === 'live', SOON,
    'the live stream did not open');
}

/** Record every value card name's data-phase takes from now on (in window.__phases[name]). */
async function watchPhases(name) {
  await page.evaluate((n) => {
    window.__phases ??= {};
    window.__phases[n] = [];
    const el = document.querySelector(`li.host[data-host="${n}"]`);
    new MutationObserver(() => {
      const p = el.dataset.phase;
      const seen = window.__phases[n];
      if (seen[seen.length - 1] !== p) seen.push(p);
    }).observe(el, { attributes: true, attributeFilter: ['data-phase'] });
  }, name);
}
const phases = (name) => page.evaluate((n) => window.__phases[n], name);

test('an admin sees the power buttons and the OS picker', { timeout: 60_000 }, async () => {
  await page.goto(`${tbd.base}/`);
  await login(tbd.adminToken);
  await waitReach('left', 'up');
  await waitReach('right', 'up');
  assert.match(await stateText('left'), /^up as ubuntu/);
  for (const label of ['Power on', 'Power off', 'Cycle', 'Reset', 'Soft off', 'Boot Ubuntu', 'Boot FreeBSD']) {
    assert.equal(await card('left').getByRole('button', { name: label, exact: true }).count(), 1, `left has a "${label}" button`);
  }
  assert.equal(await card('left').getByRole('checkbox', { name: 'make it the default' }).isChecked(), false);
  // The router has no IPMI or Wake-on-LAN and boots nothing through GRUB:
  // no "Power on" or "Cycle" (it would stay off), no OS picker.
  assert.deepEqual(await card('router').locator('button[data-power]').evaluateAll((els) => els.map((e) => e.dataset.power)),
    ['off', 'reset', 'soft']);
  assert.match(await card('router').locator('.controls').innerText(), /cannot be switched on from here/);
  assert.equal(await card('router').locator('button[data-boot]').count(), 0);
  assert.equal(await panel('left').count(), 0, 'no action is shown before one ran');
});

test('the BMC\'s view beside reachability, and the idle power-off countdown', { timeout: 60_000 }, async () => {
  const bmc = card('left').locator('.bmc');
  await eventually(async () => /^BMC \(ipmi\): on · checked \d+ s ago$/.test((await bmc.innerText().catch(() => '')).trim()),
    SOON, async () => `left's BMC line says "${await bmc.innerText().catch(() => '(none)')}"; ` +
      `the API says ${JSON.stringify((await tbd.get('/api/v1/hosts/left')).host.bmc)}`);
  assert.equal(await bmc.getAttribute('data-bmc-power'), 'on');
  assert.equal(await card('left').locator('.mismatch').count(), 0, 'no mismatch while the BMC and ssh agree');
  assert.equal(await card('right').locator('.bmc').count(), 0, 'right has no BMC: no BMC line');
  assert.equal(await card('router').locator('.power-block').isHidden(), true, 'the router has neither');

  const idle = card('right').locator('.idle');
  await eventually(async () => (await idle.getAttribute('data-idle-state').catch(() => null)) === 'counting', SOON,
    async () => `right's idle line: "${await idle.innerText().catch(() => '(none)')}"`);
  const t1 = (await idle.innerText()).trim();
  assert.match(t1, /^Idle power-off in (59 min \d+ s|60 min 0 s) \(after 60 min unused\)$/);
  await eventually(async () => (await idle.innerText()).trim() !== t1, 3000, `the countdown does not tick: "${t1}"`);
  const api = (await tbd.get('/api/v1/hosts/right')).host.idle_poweroff;
  assert.equal(api.after_min, 60);
  assert.equal(api.state, 'counting');
  assert.ok(api.seconds_left > 3500 && api.seconds_left <= 3600, `seconds_left ${api.seconds_left}`);
  // the wake schedule: its pattern and the API's next time (a weekday 07:30 of the testbedd host)
  const { wake } = (await tbd.get('/api/v1/hosts/right')).host;
  assert.equal(wake.schedule, '30 7 * * mon-fri');
  assert.ok(wake.next_at && wake.last_at === null, JSON.stringify(wake));
  const wakeLine = card('right').locator('.wake');
  assert.equal(await wakeLine.getAttribute('data-wake-next'), wake.next_at);
  assert.match(await wakeLine.innerText(), /^Wakes at 30 7 \* \* mon-fri \(cron, the testbedd host's time\): next /);
  assert.equal(await wakeLine.locator('time.wake-next').getAttribute('datetime'), wake.next_at);
  await page.evaluate(() => document.activeElement?.blur());
  await shootCard('left', 'bmc-left-desktop.png');
  await shootCard('right', 'idle-right-desktop.png');
});

test('"Boot FreeBSD" on left: the steps arrive live, a second click gets 409, left comes up as freebsd',
  { timeout: 150_000 }, async () => {
    const boot = card('left').getByRole('button', { name: 'Boot FreeBSD' });
    await watchPhases('left');
    await boot.click();
    await panel('left').waitFor();
    assert.equal(await panel('left').locator('.act-title').innerText(), 'Boot FreeBSD');
    assert.match(await panel('left').getAttribute('data-state'), /^(queued|running)$/);
    const id = Number(await panel('left').getAttribute('data-action'));
    // Who holds left, on its card (state.held_by).
    await eventually(async () => /^Held by action \d+ by admin for /.test(await card('left').locator('.held-by').innerText().catch(() => '')),
      SOON, 'left\'s card does not say that the action holds it');
    assert.match(await card('left').locator('.held-by').innerText(), new RegExp(`^Held by action ${id} by admin`));

    // Busy: a second click is refused by testbedd, and the page says who holds left.
    await boot.click();
    const msg = card('left').locator('.action-msg');
    await msg.waitFor({ state: 'visible' });
    const text = await msg.innerText();
    assert.match(text, new RegExp(`left is busy: action ${id} \\(boot .*freebsd.*\\) by admin`), `the 409 message: ${text}`);

    // The steps stream in: the exact grub-reboot command, in monospace.
    const grub = panel('left').locator('.step-cmd code', { hasText: 'grub-reboot' });
    await grub.first().waitFor({ timeout: 30_000 });
    const command = await grub.first().innerText();
    assert.match(command, /grub-reboot/);
    const font = await grub.first().evaluate((el) => getComputedStyle(el).fontFamily);
    assert.match(font, /mono/i, `the command is in monospace: ${font}`);
    await eventually(async () => (await panel('left').locator('.step').count()) >= 2, SOON, 'the next steps do not arrive');

    if (await panel('left').getAttribute('data-state') === 'running') {
      await page.evaluate(() => document.activeElement?.blur());
      await shootCard('left', 'action-running-desktop.png');
      await page.setViewportSize(PHONE);
      await shootCard('left', 'action-running-phone.png');
      const overflow = await sideways(page);
      assert.ok(overflow <= 0, `with a running action the page is ${overflow} px wider than a 390 px phone`);
      await page.emulateMedia({ colorScheme: 'dark' });
      await shootCard('left', 'action-running-phone-dark.png');
      await page.emulateMedia({ colorScheme: 'light' });
      await page.setViewportSize(DESKTOP);
      // The elapsed time ticks while it runs.
      const e1 = await panel('left').locator('.act-elapsed').innerText();
      const t1 = Date.now();
      const seenElapsed = [e1];
      while (Date.now() - t1 < 3000 && await panel('left').getAttribute('data-state') === 'running') {
        await sleep(250);
        seenElapsed.push(await panel('left').locator('.act-elapsed').innerText());
        if (seenElapsed.at(-1) !== e1) break;
      }
      if (await panel('left').getAttribute('data-state') === 'running') {
        assert.notEqual(seenElapsed.at(-1), e1,
          `the elapsed time does not tick (${seenElapsed.join(', ')} over ${Date.now() - t1} ms)`);
      }
    } else {
      console.warn('the boot ended before the screenshots: none taken');
    }

    // A page opened now (another tab) shows the action too, with the steps so far.
    const other = await bed.browser.newPage();
    try {
      await other.goto(`${tbd.base}/`);
      const otherPanel = other.locator('li.host[data-host="left"] section.action');
      await otherPanel.waitFor({ timeout: SOON });
      assert.equal(Number(await otherPanel.getAttribute('data-action')), id);
      await otherPanel.locator('.step-cmd code', { hasText: 'grub-reboot' }).first().waitFor({ timeout: SOON });
      assert.equal(await other.locator('li.host[data-host="left"] button[data-power]').count(), 5,
        'the other tab (same session) has the buttons');
    } finally {
      await other.close();
    }

    await waitAction('left', 'succeeded');
    await waitReach('left', 'up', SOON);
    await eventually(async () => /^up as freebsd/.test(await stateText('left')), SOON,
      async () => `left should say "up as freebsd"; it says "${await stateText('left')}"`);
    assert.equal(await card('left').locator('.persona.answering').getAttribute('data-os'), 'freebsd');
    assert.match(await panel('left').locator('.act-elapsed').innerText(), /^in \d+ s$/);
    assert.equal(await msg.isVisible(), false, 'the busy message is gone when the holder ended');

    // The page shows every step testbedd recorded, once, in order, with its exact command.
    const action = (await tbd.get(`/api/v1/actions/${id}`)).action;
    assert.equal(action.state, 'succeeded');
    const shown = await panel('left').locator('.step').evaluateAll((els) => els.map((e) => ({
      id: Number(e.dataset.step), command: e.querySelector('.step-cmd code')?.textContent ?? null,
    })));
    assert.deepEqual(shown, action.steps.map((s) => ({ id: s.id, command: s.command })));
    // Each step says how long it took (duration_ms: until the next step, the last until the end).
    const tooks = await panel('left').locator('.step .step-took').allInnerTexts();
    assert.deepEqual(tooks, action.steps.map((s) => `took ${(s.duration_ms / 1000).toFixed(1)} s`));
    assert.equal(await card('left').locator('.held-by').count(), 0, 'nobody holds left after the action');
    const seen = await phases('left');
    assert.ok(seen.includes('shutting_down') || seen.includes('booting'),
      `left's card showed what the boot was doing (phases seen: ${seen.join(', ')})`);
  });

test('right is powered off after a confirmation, then on again', { timeout: 150_000 }, async () => {
  await watchPhases('right');
  const off = card('right').getByRole('button', { name: 'Power off' });
  const dialog = page.locator('dialog.confirm-dialog');

  // Cancelled: nothing happens.
  await off.click();
  await dialog.waitFor({ state: 'visible' });
  assert.match(await dialog.innerText(), /Power off right\?/);
  assert.match(await dialog.innerText(), /systemctl poweroff/, 'without a BMC the dialog says how it is switched off');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await sleep(500);
  assert.equal(await panel('right').count(), 0, 'a cancelled confirmation started an action');
  assert.deepEqual((await tbd.get('/api/v1/actions?host=right')).actions, []);

  await off.click();
  await dialog.waitFor({ state: 'visible' });
  await dialog.getByRole('button', { name: 'Power off' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await panel('right').waitFor();
  assert.equal(await panel('right').locator('.act-title').innerText(), 'Power off');
  await waitAction('right', 'succeeded');
  await waitReach('right', 'down');
  assert.match(await stateText('right'), /^down/);
  assert.ok(await panel('right').locator('.step-cmd code', { hasText: /systemctl'? poweroff/ }).count(),
    'the poweroff command is among the steps');

  // On: no confirmation.
  await card('right').getByRole('button', { name: 'Power on' }).click();
  await sleep(300);
  assert.equal(await dialog.isVisible(), false, '"Power on" asks for no confirmation');
  await eventually(async () => (await panel('right').locator('.act-title').innerText()) === 'Power on', SOON,
    'the "Power on" action is not shown');
  await waitAction('right', 'succeeded');
  await waitReach('right', 'up');
  assert.match(await stateText('right'), /^up as ubuntu/);
  const seen = await phases('right');
  assert.ok(seen.includes('shutting_down') && (seen.includes('powering_on') || seen.includes('booting')),
    `right's card showed the phases (seen: ${seen.join(', ')})`);
});

test('recent actions: the list per host, each with its steps', { timeout: 60_000 }, async () => {
  const history = card('right').locator('details.history');
  await history.locator('summary').first().click();
  const items = history.locator('details.past');
  await eventually(async () => (await items.count()) === 2, SOON, 'right\'s two actions are not listed');
  const titles = await items.locator('.past-title').allInnerTexts();
  assert.deepEqual(titles, ['Power on', 'Power off'], 'newest first');
  assert.deepEqual(await items.locator('.act-state').allTextContents(), ['succeeded', 'succeeded']);
  await items.nth(1).locator('summary').click();
  await items.nth(1).locator('.step-cmd code', { hasText: /systemctl'? poweroff/ }).waitFor();
  // left's list has the boot.
  const lh = card('left').locator('details.history');
  await lh.locator('summary').first().click();
  await eventually(async () => (await lh.locator('.past-title').allInnerTexts()).includes('Boot FreeBSD'), SOON,
    'left\'s boot is not listed');
  await page.setViewportSize(PHONE);
  await shootCard('right', 'actions-history-phone.png');
  await page.setViewportSize(DESKTOP);
});

test('a viewer sees the states and the actions, but no button', { timeout: 60_000 }, async () => {
  await page.getByRole('button', { name: 'Log out' }).click();
  await login(viewerSecret);
  await waitReach('left', 'up');
  assert.match(await stateText('left'), /^up as freebsd/);
  assert.equal(await page.locator('button[data-power], button[data-boot], .controls').count(), 0,
    'a viewer sees power or boot buttons');
  assert.equal(await page.getByRole('button', { name: /^(Power on|Power off|Boot FreeBSD|Boot Ubuntu|Cancel)$/ }).count(), 0);
  const history = card('right').locator('details.history');
  await history.locator('summary').first().click();
  await eventually(async () => (await history.locator('details.past').count()) === 2, SOON, 'the viewer sees no actions');
  // The API agrees: a viewer may not power anything.
  const status = await page.evaluate(async () => (await fetch('api/v1/hosts/right/power', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"action":"off"}',
  })).status);
  assert.equal(status, 403);
});

test('an OS that stops answering on a chassis the BMC says is on: the mismatch warning', { timeout: 90_000 }, async () => {
  // kill left's sshd (the sim's processes, by pid): the OS no longer
  // answers, the chassis stays on
  const pids = execFileSync('ip', ['netns', 'pids', `${PREFIX}-left`], { encoding: 'utf8' }).split(/\s+/).filter(Boolean);
  let killed = 0;
  for (const pid of pids) {
    let comm = '';
    try { comm = execFileSync('ps', ['-o', 'comm=', '-p', pid], { encoding: 'utf8' }).trim(); } catch { continue; }
    if (comm === 'sshd') { process.kill(Number(pid)); killed += 1; }
  }
  assert.ok(killed > 0, 'no sshd found in left\'s namespace');
  await waitReach('left', 'down', 30_000);
  const warn = card('left').locator('.mismatch');
  await warn.waitFor({ timeout: 45_000 });
  assert.match(await warn.innerText(), /^Mismatch: the BMC says on, but no OS answers ssh/);
  assert.equal(await warn.getAttribute('role'), 'alert');
  assert.equal(await card('left').getAttribute('data-reachability'), 'down');
  assert.equal(await card('left').locator('.bmc').getAttribute('data-bmc-power'), 'on');
  assert.equal(await card('left').locator('.power-block').getAttribute('data-mismatch'), 'yes');
  await page.evaluate(() => document.activeElement?.blur());
  await shootCard('left', 'bmc-mismatch-desktop.png');
  await page.setViewportSize(PHONE);
  await shootCard('left', 'bmc-mismatch-phone.png');
  const overflow = await sideways(page);
  assert.ok(overflow <= 0, `with the mismatch warning the page is ${overflow} px wider than a 390 px phone`);
  await page.setViewportSize(DESKTOP);
});

test('no script errors on the page', () => {
  const real = pageErrors.filter((e) => !/Failed to load resource|net::ERR_|EventSource/.test(e));
  assert.deepEqual(real, []);
});

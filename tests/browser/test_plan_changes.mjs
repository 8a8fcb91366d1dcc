// What a plan changes on the hosts and routers, on "New matrix", in Debian's
// Chromium (headless, playwright-core) against the real testbedd on a
// loopback inventory (a plan contacts no host, so no sim; the router is a
// Linux one, its links on eth1 and eth2): a spec sweeping congestion control
// and interrupt placement, and two link profiles.  The plan shows the two
// tunable sets with their values and runs, how they are changed and
// restored, and each link profile with the exact tc commands the router will
// run (as the API's plan has them), and the removal.
// Screenshot: $TB_BINARY_DIR/screenshots/plan-changes-desktop.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  Bed, DESKTOP, deadInventory, login, shotsDir,
} from './lib/testbed.mjs';

const SPEC = {
  name: 'changes',
  pairs: [{ client: 'left', server: 'right' }],
  tunables: [
    { linux: 'net.ipv4.tcp_congestion_control', values: ['cubic', 'reno'] },
    { irq: true, values: ['0'] },
  ],
  link_profiles: [{ name: '20M', rate: '20M', loss_percent: 1 }, null],
};
const bed = new Bed('plan-changes');
const pageErrors = bed.errors;
let tbd;
let page;

before(async () => {
  tbd = await bed.startTestbedd(deadInventory(bed.root, `  left:
    role: host
    os:
      ubuntu: {address: 127.0.0.1, port: 9}
    links:
      lan10: {address: 198.19.10.2/24}
  right:
    role: host
    os:
      ubuntu: {address: 127.0.0.3, port: 9}
    links:
      lan20: {address: 198.19.20.2/24}
  router:
    role: router
    os:
      debian: {address: 127.0.0.4, port: 9}
    links:
      lan10: {address: 198.19.10.1/24, ifname: {debian: eth1}}
      lan20: {address: 198.19.20.1/24, ifname: {debian: eth2}}
`));
  page = await bed.openPage(DESKTOP, { timeout: 15_000 });
});

after(() => bed.close());

test('the plan shows the tunable sets and the link profiles\' commands', { timeout: 60_000 }, async () => {
  const { plan } = await tbd.post('/api/v1/matrices/plan', SPEC);
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
  await page.goto(`${tbd.base}/#/matrices/new`);
  await page.locator('textarea#spec[data-ready="yes"]').waitFor();
  await page.locator('textarea#spec').fill(JSON.stringify(SPEC, null, 2));
  await page.getByRole('button', { name: 'Plan' }).click();
  await page.locator('.plan-tunables').waitFor();

  assert.equal((await page.locator('#plan-tunables-title').textContent()).trim(), '2 tunable sets on left, right');
  const sets = await page.locator('.plan-sets li').allInnerTexts();
  assert.deepEqual(sets.map((x) => x.trim()), [
    'runs 0–1: net.ipv4.tcp_congestion_control = cubic; IRQs on CPUs 0',
    'runs 2–3: net.ipv4.tcp_congestion_control = reno; IRQs on CPUs 0',
  ]);
  assert.match(await page.locator('.plan-tunables').innerText(), /smp_affinity_list/);
  assert.match(await page.locator('.plan-tunables').innerText(), /restore|set again/);

  assert.equal((await page.locator('#plan-linkprof-title').textContent()).trim(), '2 link profiles on router');
  const cmds = await page.locator('.plan-profiles li pre').allInnerTexts();
  assert.deepEqual(cmds, plan.link_profiles.profiles.map((p) => p.commands.join('\n')), 'the commands as the API plans them');
  assert.match(cmds[0], /^router: tc qdisc replace dev eth1 root handle 1: netem loss 1% rate 20000000bit$/m);
  assert.match(cmds[1], /^router: tc qdisc del dev eth2 root$/m);
  assert.match(await page.locator('.plan-linkprof').innerText(), /tc qdisc del dev IF root/);
  await page.locator('.plan-linkprof').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shotsDir(), 'plan-changes-desktop.png'), fullPage: true });
  assert.deepEqual(pageErrors.filter((e) => !/Failed to load resource|net::ERR_|EventSource/.test(e)), []);
});

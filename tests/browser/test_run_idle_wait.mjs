// A run waiting for idle hosts (issue 20 item 5), in Debian's Chromium
// (headless, playwright-core) against the real testbedd and the simulated
// testbed (deploy/sim, prefix tbqw, block 192).
//
// A stray `iperf3 -s -p 5999` in right's network namespace (started here,
// stopped by its pid) makes the run of a 1-run matrix with "idle":
// {"wait_s": 60} wait: the matrix page's "Now running" section says "Waiting
// for idle hosts" and names the stray and the 60 s it may wait, from the
// run.waiting event, without a reload.  The stray stopped, the run goes on
// and succeeds; its page says how long it waited and for what ("waited"),
// and the NIC offload it ran with (the spec's tunables: TSO off on both ends).
// Screenshots go to $TB_BINARY_DIR/screenshots/run-idle-wait-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Bed, eventually, login, shoot } from './lib/testbed.mjs';

const PREFIX = 'tbqw';
const BLOCK = '192';
const SPEC = {
  name: 'idle-wait',
  pairs: [{ client: 'left', server: 'right' }],
  protocols: ['tcp'],
  directions: ['forward'],
  duration_s: 1,
  repeats: 1,
  idle: { wait_s: 60 },
  tunables: [{ offload: 'tso', values: ['off'] }],
};
const bed = new Bed('run-idle-wait');
let tbd;
let page;
let stray = null;

function strayStop() {
  if (stray && stray.exitCode === null) stray.kill('SIGTERM');
  stray = null;
}

before(async () => {
  tbd = await bed.startTestbedd(bed.upSim(PREFIX, BLOCK));
  await bed.hostsUp();
  page = await bed.openPage();
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
});

after(async () => {
  strayStop();
  await bed.close();
});

test('the matrix page says a run waits for idle hosts and why; the run page says it waited', { timeout: 150_000 }, async () => {
  // ip netns exec execs iperf3: the child's pid is the stray's
  stray = spawn('ip', ['netns', 'exec', `${PREFIX}-right`, 'iperf3', '-s', '-p', '5999'], { stdio: 'ignore' });
  await eventually(async () => {
    const ss = spawn('ip', ['netns', 'exec', `${PREFIX}-right`, 'ss', '-Hltn', 'sport = :5999']);
    let out = '';
    ss.stdout.on('data', (b) => { out += b; });
    await new Promise((r) => ss.on('close', r));
    return out.trim() !== '';
  }, 10_000, 'the stray iperf3 does not listen on right');

  const { matrix } = await tbd.post('/api/v1/matrices', SPEC);
  await page.goto(`${tbd.base}/#/matrices/${matrix.id}`);
  const now = page.locator('section.mx-current');
  await eventually(async () => (await now.locator('h2').textContent()) === 'Waiting for idle hosts', 30_000,
    'the matrix page does not say the run waits for idle hosts');
  const note = now.locator('.live-note[data-waiting="yes"]');
  const text = await note.textContent();
  assert.match(text, new RegExp(`right: a stray iperf3 \\(pid ${stray.pid}: iperf3 -s -p 5999\\) is running`), text);
  assert.match(text, /fails as busy_host after 60 s/, text);
  await shoot(page, 'run-idle-wait-matrix', { fullPage: false });

  strayStop();
  let run;
  await eventually(async () => {
    const { matrix: m } = await tbd.get(`/api/v1/matrices/${matrix.id}`);
    run = m.runs?.[0];
    return m.state === 'succeeded';
  }, 60_000, `matrix ${matrix.id} did not succeed once the stray was stopped`);
  await page.goto(`${tbd.base}/#/runs/${run.id}`);
  const waited = page.locator('.run-page .idle-waited');
  await waited.waitFor();
  const said = (await waited.textContent()).trim();
  const { run: stored } = await tbd.get(`/api/v1/runs/${run.id}`);
  assert.equal(said, `${stored.summary.idle.waited_s.toFixed(1)} s for idle hosts: ${stored.summary.idle.busy}`);
  assert.ok(stored.summary.idle.waited_s > 0);
  assert.equal((await page.locator('.run-page .tunables').textContent()).trim(), 'set 0: TSO off');
  assert.equal(stored.params.tunables.values[0].kind, 'offload');
  await shoot(page, 'run-idle-wait-run');
  assert.deepEqual(bed.errors.filter((e) => !/Failed to load resource|net::ERR_|EventSource/.test(e)), []);
});

// A run's link profile on its page (issue 20 item 4), in Debian's Chromium
// (headless, playwright-core) against the real testbedd and the simulated
// testbed (deploy/sim, prefix tblw, block 213).
//
// A matrix left -> right sweeping [{"name": "20M", "rate": "20M",
// "loss_percent": 1}, null]: the page of its first run says "link profile
// 20M: 20 Mbit/s, 1 % loss on router", the page of its second "unshaped: no
// pipe on router", each as the run's params.link_profile from the API says.
// A screenshot goes to $TB_BINARY_DIR/screenshots/run-link-profile.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Bed, eventually, login, shoot } from './lib/testbed.mjs';

const PREFIX = 'tblw';
const BLOCK = '213';
const SPEC = {
  name: 'profiled',
  pairs: [{ client: 'left', server: 'right' }],
  duration_s: 1,
  link_profiles: [{ name: '20M', rate: '20M', loss_percent: 1 }, null],
};
const bed = new Bed('run-link-profile');
const pageErrors = bed.errors;
let tbd;
let page;

before(async () => {
  tbd = await bed.startTestbedd(bed.upSim(PREFIX, BLOCK));
  await bed.hostsUp();
  page = await bed.openPage();
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
});

after(() => bed.close());

test('each run page names the link profile it ran under', { timeout: 150_000 }, async () => {
  const { matrix } = await tbd.post('/api/v1/matrices', SPEC);
  let runs = [];
  await eventually(async () => {
    const { matrix: m } = await tbd.get(`/api/v1/matrices/${matrix.id}`);
    runs = [...(m.runs ?? [])].sort((a, b) => a.seq - b.seq);
    return ['succeeded', 'failed'].includes(m.state) && runs.length === 2;
  }, 90_000, `matrix ${matrix.id} did not end`);
  const want = ['20M: 20 Mbit/s, 1 % loss on router', 'unshaped: no pipe on router'];
  for (const [i, r] of runs.entries()) {
    const { run } = await tbd.get(`/api/v1/runs/${r.id}`);
    assert.equal(run.params.link_profile.index, i);
    await page.goto(`${tbd.base}/#/runs/${r.id}`);
    await page.locator('.run-page .link-profile').waitFor();
    const text = (await page.locator('.run-page .link-profile').textContent()).trim();
    assert.equal(text, want[i], `run ${r.seq}: ${text}`);
    if (i === 0) await shoot(page, 'run-link-profile');
  }
  assert.deepEqual(pageErrors.filter((e) => !/Failed to load resource|net::ERR_|EventSource/.test(e)), []);
});

// IPv4 and IPv6 runs on the matrix page (issue 20 item 8), in Debian's
// Chromium (headless, playwright-core) against the real testbedd and the
// simulated testbed (deploy/sim, prefix tbv6w, block 199).
//
// A matrix left -> right with "family": ["ipv4", "ipv6"]: the runs table
// marks the IPv6 run "over IPv6" (the IPv4 one not), the cells table shows
// family=ipv6 among the swept values, and the IPv6 run's page shows the
// client command as it ran, to right's IPv6 address with -6.  Screenshots:
// $TB_BINARY_DIR/screenshots/matrix-family-runs*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Bed, eventually, login, shoot } from './lib/testbed.mjs';

const PREFIX = 'tbv6w';
const BLOCK = '199';
const SPEC = {
  name: 'families',
  pairs: [{ client: 'left', server: 'right' }],
  duration_s: 1,
  family: ['ipv4', 'ipv6'],
};
const bed = new Bed('matrix-family-runs');
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

test('the matrix page tells the IPv6 run from the IPv4 one', { timeout: 150_000 }, async () => {
  const { matrix } = await tbd.post('/api/v1/matrices', SPEC);
  let runs = [];
  await eventually(async () => {
    const { matrix: m } = await tbd.get(`/api/v1/matrices/${matrix.id}`);
    runs = [...(m.runs ?? [])].sort((a, b) => a.seq - b.seq);
    return ['succeeded', 'failed'].includes(m.state) && runs.length === 2;
  }, 90_000, `matrix ${matrix.id} did not end`);
  assert.deepEqual(runs.map((r) => [r.family, r.state, r.server_address]),
    [['ipv4', 'ok', '198.19.20.2'], ['ipv6', 'ok', '2001:2:0:20::2']]);

  await page.goto(`${tbd.base}/#/matrices/${matrix.id}`);
  const pairs = page.locator('.mx-runs td.pair, table td.pair[data-label="client → server"]');
  await eventually(async () => (await page.locator('td.pair', { hasText: 'over IPv6' }).count()) === 1, 15_000,
    'one run marked "over IPv6"');
  assert.ok(await pairs.count() >= 2);
  await eventually(async () => (await page.locator('code', { hasText: 'family=ipv6' }).count()) >= 1, 15_000,
    'the cells table shows family=ipv6 as swept');
  await shoot(page, 'matrix-family-runs');

  await page.goto(`${tbd.base}/#/runs/${runs[1].id}`);
  await eventually(async () => (await page.locator('body').innerText()).includes('-c 2001:2:0:20::2'), 15_000,
    'the IPv6 run page shows its command to right\'s IPv6 address');
  assert.match(await page.locator('body').innerText(), /iperf3 -c 2001:2:0:20::2 -p \d+ -t 1 -6/);
  await shoot(page, 'matrix-family-run6');
  assert.deepEqual(pageErrors.filter((e) => !/Failed to load resource|net::ERR_|EventSource/.test(e)), []);
});
